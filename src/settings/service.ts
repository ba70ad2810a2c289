// Instance settings, cached in memory for the hot path (token policies are checked on every
// request). A write through the API updates the cache at once; a write by the CLI on the same
// data dir is picked up within REFRESH_MS.
import { type InstanceSettings, type SettingsStore, DEFAULT_SETTINGS } from "./store.ts";

const REFRESH_MS = 2000;

export function createSettingsService(store: SettingsStore) {
  let cached: InstanceSettings = { ...DEFAULT_SETTINGS };
  let readAt = 0;
  return {
    async get(): Promise<InstanceSettings> {
      if (Date.now() - readAt > REFRESH_MS) {
        cached = await store.read();
        readAt = Date.now();
      }
      return cached;
    },
    async update(patch: Partial<InstanceSettings>): Promise<InstanceSettings> {
      await store.write(patch);
      cached = await store.read();
      readAt = Date.now();
      return cached;
    },
  };
}
export type SettingsService = ReturnType<typeof createSettingsService>;
