// A path in ASSAY_BASE_URL: the API and /api/docs follow it, the web app does not (its pages,
// assets and routes are absolute), so a server started with one says so in its log at start,
// rather than leaving the app on "Loading…" behind the proxy with nothing in the log.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { testTempDir } from "./helpers/temp.ts";

const main = join(import.meta.dir, "../src/main.ts");

/** Starts `assay serve` with this base URL, stops it once it has started; its log lines. */
async function startLog(baseUrl: string): Promise<string[]> {
  const dir = testTempDir("assay-base-path-");
  const { ASSAY_DATABASE_URL: _u, ...env } = process.env;
  const p = Bun.spawn([process.execPath, main, "serve", "--data-dir", join(dir, "data"), "--port", "0"], {
    env: { ...env, ASSAY_BASE_URL: baseUrl },
    stdout: "pipe",
    stderr: "pipe",
  });
  // The banner on stdout ends with the next step, printed once the server has started (and
  // logged its start, on stderr); the whole log is read after the graceful stop.
  const decoder = new TextDecoder();
  let banner = "";
  const reader = p.stdout.getReader();
  try {
    while (!banner.includes("Next:")) {
      const { done, value } = await reader.read();
      if (done) break;
      banner += decoder.decode(value, { stream: true });
    }
  } finally {
    reader.releaseLock();
    p.kill();
  }
  const log = await new Response(p.stderr).text();
  await p.exited;
  return log.split("\n").filter(Boolean);
}

describe("ASSAY_BASE_URL with a path", () => {
  test("the log says the web app needs the root of a host", async () => {
    const lines = await startLog("https://example.com/assay");
    const warn = lines
      .map((l) => (l.startsWith("{") ? JSON.parse(l) : null))
      .find((l) => l?.level === "warn");
    expect(warn).toMatchObject({
      level: "warn",
      msg: expect.stringContaining("the web app is served at the root of a host only"),
      base_url: "https://example.com/assay",
    });
  }, 60_000);

  test("no such warning without a path", async () => {
    const lines = await startLog("https://example.com/");
    expect(lines.some((l) => l.includes("root of a host only"))).toBe(false);
    expect(lines.some((l) => l.includes('"msg":"listening"'))).toBe(true);
  }, 60_000);
});
