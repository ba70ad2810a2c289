// The built executable for tests that need the real binary: built once if missing.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "../..");
export const BINARY = join(ROOT, "dist/assay");
/** The light CI client (scripts/build.ts builds both). */
export const LIGHT = join(ROOT, "dist/assay-validate.mjs");

/** Newest modification time of the files under `dir` (ms). */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) t = Math.max(t, statSync(join(e.parentPath, e.name)).mtimeMs);
  return t;
}

/** Builds dist/assay when it is missing or older than a file of src/ (a stale binary tests old code). */
export function ensureBinary(): string {
  const src = newest(join(ROOT, "src"));
  if ([BINARY, LIGHT].some((f) => !existsSync(f) || statSync(f).mtimeMs < src)) {
    const p = Bun.spawnSync([process.execPath, "scripts/build.ts"], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    if (p.exitCode !== 0) throw new Error(`build failed: ${p.stderr.toString()}`);
  }
  return BINARY;
}

/**
 * Starts `assay serve` on a free port; resolves once it says it listens. With ASSAY_DATABASE_URL
 * in `env` the data lives in PostgreSQL and `dataDir` is unused.
 */
export async function serveBinary(bin: string, dataDir: string, env: Record<string, string> = {}) {
  // --data-dir with ASSAY_DATABASE_URL set is refused: given only when the data is in SQLite.
  const where = env.ASSAY_DATABASE_URL ? [] : ["--data-dir", dataDir];
  const proc = Bun.spawn([bin, "serve", "--port", "0", ...where, "--log-level", "warn"], {
    env: { ...process.env, ASSAY_RATE_LIMIT_DISABLED: "true", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 30000;
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    if (Date.now() > deadline) throw new Error(`serve did not start: ${out}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited: ${out} ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  return { proc, url };
}
