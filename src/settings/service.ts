// Instance settings. A policy tightened by `assay settings set` in another process must act on
// the server's very next request, like a revocation does: the store's cache is exact across
// processes (src/db/generation.ts).
import type { Actor } from "../audit/types.ts";
import { type ErrorItem, invalid } from "../errors.ts";
import type { InstanceSettings, SettingsStore } from "./store.ts";

/** The combination rules a single field's schema cannot express. */
export function checkSettings(s: InstanceSettings): ErrorItem[] {
  const errors: ErrorItem[] = [];
  const { token_default_ttl_days: def, token_max_ttl_days: max } = s;
  if (def != null && max != null && def > max)
    errors.push({
      field: "token_default_ttl_days",
      code: "above_max",
      message: `The default lifetime (${def} days) exceeds token_max_ttl_days (${max}).`,
    });
  return errors;
}

export function createSettingsService(store: SettingsStore) {
  return {
    get: (): Promise<InstanceSettings> => store.read(),
    async update(patch: Partial<InstanceSettings>, actor: Actor): Promise<InstanceSettings> {
      await store.write(patch, actor, (next) => {
        const errors = checkSettings(next);
        if (errors.length) throw invalid("Inconsistent token policies.", errors);
      });
      return store.read();
    },
  };
}
export type SettingsService = ReturnType<typeof createSettingsService>;
