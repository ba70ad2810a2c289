// Instance settings that change at run time live in the database (STYLE: PocketBase); the
// rest are start-up flags (src/config.ts).
import { audit } from "../audit/append.ts";
import type { Actor } from "../audit/types.ts";
import { GenerationCache, deepFreeze } from "../db/generation.ts";
import { type Db, all, forUpdate, get, run } from "../db/program.ts";

export interface InstanceSettings {
  /** Days a new token lives when created without an expiry; null = never expires. */
  token_default_ttl_days: number | null;
  /** Longest lifetime a token may have; older tokens stop working. null = no limit. */
  token_max_ttl_days: number | null;
  /** A token older than this must be replaced. null = no rotation. */
  token_rotation_days: number | null;
  /** Audit log entries older than this are purged by the retention sweep. null = kept forever. */
  audit_retention_days: number | null;
}
export const DEFAULT_SETTINGS: InstanceSettings = {
  token_default_ttl_days: null,
  token_max_ttl_days: null,
  token_rotation_days: null,
  audit_retention_days: null,
};

export function createSettingsStore(db: Db) {
  // Token verification needs the policies: kept in memory while the settings table is unchanged.
  const cache = new GenerationCache<0, InstanceSettings>(db, 1);
  const lock = forUpdate(db.dialect);
  return {
    /** The current settings, shared and frozen. */
    async read(): Promise<InstanceSettings> {
      return (await cache.get(0, function* () {
        const out: Record<string, unknown> = { ...DEFAULT_SETTINGS };
        for (const r of yield* all<{ key: string; value: string }>("SELECT key, value FROM settings"))
          if (r.key in DEFAULT_SETTINGS) out[r.key] = JSON.parse(r.value);
        return deepFreeze(out as unknown as InstanceSettings);
      }))!;
    },
    /**
     * `check` sees the settings as they will be (throws to refuse): read in the writing
     * transaction, after the generation row is locked on PostgreSQL, so two changes made together
     * (two nodes) cannot each pass against the old settings and combine into a pair the check
     * refuses (a default lifetime above the maximum).
     */
    async write(
      patch: Partial<InstanceSettings>,
      actor: Actor,
      check: (next: InstanceSettings) => void = () => {},
    ): Promise<void> {
      await db.tx(function* () {
        if (lock) yield* get(`SELECT value FROM cache_generation${lock}`);
        const before: Record<string, unknown> = { ...DEFAULT_SETTINGS };
        for (const r of yield* all<{ key: string; value: string }>("SELECT key, value FROM settings"))
          if (r.key in DEFAULT_SETTINGS) before[r.key] = JSON.parse(r.value);
        check({ ...before, ...patch } as unknown as InstanceSettings);
        for (const [k, v] of Object.entries(patch))
          yield* run(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            k,
            JSON.stringify(v),
          );
        yield* audit(actor, {
          action: "settings.update",
          org_id: null,
          target_type: "settings",
          target_id: null,
          before,
          after: { ...before, ...patch },
        });
      });
    },
  };
}
export type SettingsStore = ReturnType<typeof createSettingsStore>;
