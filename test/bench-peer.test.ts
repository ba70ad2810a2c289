// The bench's Node peer (scripts/bench/peer-fastify.mjs, issue #26) stands for the sync run as a
// team would write it on Fastify + Ajv + better-sqlite3: it must really do that work — refuse a
// wrong token, check the document, store the submission and the run before its 201 — or
// "Assay ÷ peer" flatters Assay. Skipped where Node or a compiled better-sqlite3 is missing (the
// bench compiles it on first use; a test must not spend two minutes on a compiler).
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WORKFLOWS, orderDocument } from "../scripts/bench/fixtures.ts";
import { onPostgres } from "./helpers/backend.ts";

const TOKEN = "peer-test-token";
const runnable =
  !onPostgres &&
  Bun.which("node") !== null &&
  Bun.spawnSync(["node", "-e", "require('better-sqlite3')(':memory:').close()"], { stderr: "ignore" })
    .exitCode === 0;
let peer: { url: string; proc: Bun.Subprocess<"ignore", "pipe", "inherit">; dir: string } | undefined;

beforeAll(async () => {
  if (!runnable) return;
  const dir = mkdtempSync(join(tmpdir(), "assay-peer-"));
  writeFileSync(join(dir, "schema.json"), JSON.stringify(WORKFLOWS.order.steps[0].config.schema));
  const proc = Bun.spawn(
    ["node", "scripts/bench/peer-fastify.mjs", join(dir, "data"), join(dir, "schema.json")],
    {
      env: { ...process.env, PEER_TOKEN: TOKEN },
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  const reader = proc.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the peer server exited: ${text}`);
    text += new TextDecoder().decode(value);
    const m = /listening on (\S+)/.exec(text);
    if (m) {
      peer = { url: m[1]!, proc, dir };
      break;
    }
  }
  reader.releaseLock();
});
afterAll(async () => {
  peer?.proc.kill("SIGTERM");
  await peer?.proc.exited;
  if (peer) rmSync(peer.dir, { recursive: true, force: true });
});

const post = (token: string, body = orderDocument()) =>
  fetch(`${peer!.url}/`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  });
const rows = (sql: string, ...params: string[]) => {
  const db = new Database(join(peer!.dir, "data", "peer.db"), { readonly: true });
  try {
    return db.query<Record<string, unknown>, string[]>(sql).all(...params);
  } finally {
    db.close();
  }
};

describe.skipIf(!runnable)("the bench's Node peer", () => {
  test("answers a valid document 201 after storing the submission and the run", async () => {
    const r = await post(TOKEN);
    expect(r.status).toBe(201);
    const run = await r.json();
    expect(run.status).toBe("succeeded");
    const stored = rows(
      "SELECT r.status, s.content FROM runs r JOIN submissions s ON s.id = r.submission_id WHERE r.id = ?",
      run.id,
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.status).toBe("succeeded");
    expect(new TextDecoder().decode(stored[0]!.content as Uint8Array)).toBe(orderDocument());
  });

  test("checks the document against the schema: an invalid order is a failed run", async () => {
    const r = await post(TOKEN, JSON.stringify({ id: "ord-1" }));
    expect(r.status).toBe(201);
    const run = await r.json();
    expect(run.status).toBe("failed");
    expect(run.result.valid).toBe(false);
  });

  test("refuses a wrong token with 401 and stores nothing", async () => {
    const count = () => rows("SELECT count(*) AS n FROM runs")[0]!.n;
    const before = count();
    const r = await post(`${TOKEN}x`);
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ code: "authentication_required" });
    expect(count()).toBe(before);
  });
});
