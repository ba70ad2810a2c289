// Preloaded by `bun test` (bunfig.toml). An afterAll in a preload runs once, after the last test
// file; `bun test` fires no process "exit" event, so this is the run's only end hook. It stops
// the throwaway PostgreSQL cluster the run shared (test/helpers/pg-cluster.ts) and removes its
// directory, removes the helpers' temp dirs a test left behind (test/helpers/temp.ts), and the
// port lock files this run's servers created (src/http/threads/port-lock.ts: a server leaves its
// file on purpose, one per port; the tests listen on a new port each time).
import { afterAll } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeStaleLockFile } from "../../src/http/threads/port-lock.ts";
import { stopSharedPgCluster } from "./pg-cluster.ts";
import { removeTestTempDirs } from "./temp.ts";

const started = Date.now();

/** This user's port lock files created since the run began that no server holds any more. */
export function removePortLocks(since: number): number {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  const prefix = `assay-port-${uid}-`;
  let removed = 0;
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(prefix) || !name.endsWith(".lock")) continue;
    const path = join(tmpdir(), name);
    try {
      if (statSync(path).mtimeMs < since) continue;
    } catch {
      continue; // gone meanwhile
    }
    // Held: a server (of another run, say) still listens there.
    if (removeStaleLockFile(path)) removed++;
  }
  return removed;
}

afterAll(() => {
  stopSharedPgCluster();
  removeTestTempDirs();
  // A second's slack: file times are coarser than the clock on some file systems.
  removePortLocks(started - 1000);
});
