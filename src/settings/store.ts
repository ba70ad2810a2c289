// Instance settings that change at run time live in the database (STYLE: PocketBase); the
// rest are start-up flags (src/config.ts).
import type { Database } from "bun:sqlite";
import { GenerationCache, deepFreeze, generationOf } from "../db/generation.ts";

export interface InstanceSettings {
  /** Days a new token lives when created without an expiry; null = never expires. */
  token_default_ttl_days: number | null;
  /** Longest lifetime a token may have; older tokens stop working. null = no limit. */
  token_max_ttl_days: number | null;
  /** A token older than this must be replaced. null = no rotation. */
  token_rotation_days: number | null;
}
export const DEFAULT_SETTINGS: InstanceSettings = {
  token_default_ttl_days: null,
  token_max_ttl_days: null,
  token_rotation_days: null,
};

export function createSettingsStore(db: Database) {
  const all = db.prepare<{ key: string; value: string }, []>("SELECT key, value FROM settings");
  // Token verification needs the policies: kept in memory while the settings table is unchanged.
  const cache = new GenerationCache<0, InstanceSettings>(generationOf(db), 1);
  const load = (): InstanceSettings => {
    const out: Record<string, unknown> = { ...DEFAULT_SETTINGS };
    for (const r of all.all()) if (r.key in DEFAULT_SETTINGS) out[r.key] = JSON.parse(r.value);
    return deepFreeze(out as unknown as InstanceSettings);
  };
  return {
    /** The current settings, shared and frozen. */
    async read(): Promise<InstanceSettings> {
      return cache.get(0, load)!;
    },
    async write(patch: Partial<InstanceSettings>): Promise<void> {
      const st = db.prepare(
        "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      );
      db.transaction(() => {
        for (const [k, v] of Object.entries(patch)) st.run(k, JSON.stringify(v));
      })();
    },
  };
}
export type SettingsStore = ReturnType<typeof createSettingsStore>;
