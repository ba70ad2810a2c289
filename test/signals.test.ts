// `assay serve` stops gracefully on SIGINT, SIGTERM and SIGHUP (a closed terminal, `kill -HUP`):
// it says so, exits 0, and leaves neither server.pid nor a WAL behind (docs/deploy.md).
import { expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { testTempDir } from "./helpers/temp.ts";

const main = join(import.meta.dir, "../src/main.ts");

/** `assay serve` from the sources on a fresh data dir; resolves once it says it listens. */
async function serve(data: string) {
  const { ASSAY_DATA_DIR: _d, ASSAY_DATABASE_URL: _u, ...env } = process.env;
  const proc = Bun.spawn([process.execPath, main, "serve", "--port", "0", "--data-dir", data], {
    env: { ...env, ASSAY_LOG_LEVEL: "warn" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!/listening on http:\/\/\S+/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited: ${out}${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  const rest = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return out;
      out += new TextDecoder().decode(value);
    }
  })();
  return { proc, url, output: () => rest };
}

for (const signal of ["SIGHUP", "SIGTERM", "SIGINT"] as const)
  test(`${signal}: a graceful stop, exit 0, no PID file or WAL left`, async () => {
    const data = testTempDir("assay-signals-");
    const s = await serve(data);
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    expect(existsSync(join(data, "server.pid"))).toBe(true);
    s.proc.kill(signal);
    expect(await s.proc.exited).toBe(0);
    expect(s.proc.signalCode).toBeNull();
    expect(await s.output()).toEndWith(`${signal}: shutting down\n`);
    // server.lock stays (the lock is SQLite's on the file, not the file); server.pid and the WAL go.
    expect(readdirSync(data).sort()).toEqual(["assay.db", "server.lock"]);
  }, 60_000);
