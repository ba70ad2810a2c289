// Temp dirs the shared helpers make (data dirs, gate dirs). Each is removed by whoever made it
// (TestServer.close, Gates.remove); a test that fails before that, or a server a test never
// closes, would leave its dir behind on every run. The preload (test/helpers/cleanup.ts)
// removes what is left after the last test file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made = new Set<string>();

/** A new dir under the OS temp dir, removed after the run at the latest. */
export function testTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Removes every dir testTempDir made that is still there. */
export function removeTestTempDirs(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
}
