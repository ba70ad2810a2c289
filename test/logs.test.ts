// What `assay serve` writes to stderr is one JSON object a line (src/lib/log.ts, docs/deploy.md
// "Logs"), also what the runtime's own modules say: bun:sql's "LISTEN … failed, retrying" while
// PostgreSQL is away was a bare text line among the JSON ones. No line carries the database
// password (PostgreSQL only: the cluster is stopped under the running server).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { onPostgres } from "./helpers/backend.ts";
import { until } from "./helpers/fixtures.ts";
import { type PgCluster, startPgCluster } from "./helpers/pg-cluster.ts";

const main = join(import.meta.dir, "../src/main.ts");
const PASSWORD = "Pw-never-logged-7";
let cluster: PgCluster;

beforeAll(async () => {
  if (!onPostgres) return;
  cluster = await startPgCluster();
  const admin = new SQL(`${cluster.baseUrl}postgres`);
  await admin.unsafe("CREATE DATABASE assay_logs");
  await admin.close();
}, 120_000);
afterAll(() => cluster?.stop());

/** Reads a stream into `into` as it comes. */
async function collect(stream: ReadableStream<Uint8Array>, into: { text: string }) {
  const dec = new TextDecoder();
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    into.text += dec.decode(value, { stream: true });
  }
}

test.skipIf(!onPostgres)(
  "with PostgreSQL stopped under it, every stderr line is a JSON log line without the password",
  async () => {
    // The cluster trusts local connections: the password is only there to be kept out of logs.
    const url = cluster.baseUrl.replace("postgres@", `postgres:${PASSWORD}@`);
    const { ASSAY_DATA_DIR: _d, ASSAY_DATABASE_URL: _u, ...env } = process.env;
    const proc = Bun.spawn([process.execPath, main, "serve", "--port", "0"], {
      env: { ...env, ASSAY_DATABASE_URL: `${url}assay_logs`, ASSAY_LOG_LEVEL: "debug" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: 120_000,
    });
    const out = { text: "" };
    const err = { text: "" };
    const reading = Promise.all([collect(proc.stdout, out), collect(proc.stderr, err)]);
    try {
      await until(() => /listening on http:\/\/\S+/.test(out.text), "the server to listen", 60_000);
      cluster.halt();
      // The queue's LISTEN connection is lost and retried: bun:sql says so once a retry.
      await until(() => /LISTEN/.test(err.text), "a line about the lost LISTEN", 60_000);
      cluster.start();
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
      await reading;
    }
    const lines = err.text.split("\n").filter((l) => l !== "");
    expect(lines.length).toBeGreaterThan(0);
    const notJson = lines.filter((l) => {
      try {
        const o = JSON.parse(l);
        return !(typeof o.time === "string" && typeof o.level === "string" && typeof o.msg === "string");
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    expect(lines.map((l) => JSON.parse(l))).toContainEqual({
      time: expect.any(String),
      level: "warn",
      msg: expect.stringMatching(/^bun:sql LISTEN "assay_\w+" failed, retrying: /),
    });
    expect(err.text + out.text).not.toContain(PASSWORD);
  },
  180_000,
);
