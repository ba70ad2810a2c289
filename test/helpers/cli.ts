// `assay` from source as a child process, without blocking this process (the server under test
// lives in it): the CLI tests that talk to that server use this.
import { join } from "node:path";

export const MAIN = join(import.meta.dir, "../../src/main.ts");

/**
 * Runs `argv` in `cwd` with exactly `env`, stdin closed; resolves with exit code, stdout and
 * stderr once the process has ended (both pipes read to the end meanwhile).
 */
export async function runProcess(
  argv: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number } = {},
) {
  const p = Bun.spawn(argv, {
    cwd: opts.cwd,
    env: opts.env,
    timeout: opts.timeoutMs,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out, err };
}

/**
 * Runs `assay args…` in `cwd`, with this process's environment minus ASSAY_SERVER/ASSAY_TOKEN
 * (a developer's own must not leak in) plus `env`; resolves with exit code, stdout and stderr.
 */
export function runAssay(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
) {
  const { ASSAY_SERVER: _s, ASSAY_TOKEN: _t, ...base } = process.env;
  return runProcess([process.execPath, MAIN, ...args], { ...opts, env: { ...base, ...opts.env } });
}
