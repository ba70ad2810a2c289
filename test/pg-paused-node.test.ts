// A node paused in the middle of a transaction (SIGSTOP, a frozen VM) holds its row locks: the
// cache generation's row, which every write of tokens, users, orgs and workflows bumps, so every
// node's such writes wait for it. PostgreSQL's idle_in_transaction_session_timeout, which Assay
// sets on its own sessions (ASSAY_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS, here 1 s; nothing is
// set on the role or database), bounds that wait (docs/postgres.md): it ends the paused node's
// transaction and its session. When the node
// resumes, the request whose transaction was ended is a 503 with Retry-After, nothing changed —
// it was a 500 internal_error (SQLSTATE 25P03 was not read as the database being unavailable) —
// and the node serves the next request on a fresh connection. Built binary, PostgreSQL only.
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { ensureBinary, serveBinary } from "./helpers/binary.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { call, errorBody } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

describe.skipIf(!onPostgres)("a node paused in a transaction", () => {
  const dir = testTempDir("assay-paused-");
  let node: Awaited<ReturnType<typeof serveBinary>> | null = null;
  let own: SQL | null = null;
  let drop: () => Promise<void> = async () => {};
  afterAll(async () => {
    node?.proc.kill("SIGCONT");
    node?.proc.kill();
    await node?.proc.exited;
    await own?.close();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("its transaction ended by idle_in_transaction_session_timeout is a 503 when it resumes", async () => {
    const bin = ensureBinary();
    const pg = await freshPgDatabase();
    drop = pg.drop;
    own = new SQL({ url: pg.url, max: 3 });
    const init = Bun.spawnSync([bin, "init", "--org", "acme", "--admin", "root", "--database-url", pg.url]);
    expect(init.exitCode).toBe(0);
    const token = /^(assay_\S+)$/m.exec(init.stdout.toString())![1]!;
    node = await serveBinary(bin, dir, {
      ASSAY_DATABASE_URL: pg.url,
      ASSAY_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "1000",
    });
    await createWorkflow(node, token, {
      slug: "orders",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    // The test holds the generation's row, so the node's next write waits inside its transaction.
    let release: () => void = () => {};
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((r) => (locked = r));
    const holding = own.begin(async (tx) => {
      await tx.unsafe("SELECT value FROM cache_generation WHERE id = 1 FOR UPDATE");
      locked();
      await new Promise<void>((r) => (release = r));
    });
    await isLocked;
    const patch = call(node, "PATCH", "/api/v1/orgs/acme/workflows/orders/", {
      token,
      body: { description: "changed" },
    });
    const waiting = async () =>
      (await own!.unsafe(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE workflows%'",
      )) as { pid: number }[];
    await until(async () => (await waiting()).length === 1, "the node's write to wait for the row");
    const backend = (await waiting())[0]!.pid;
    // Paused while its transaction waits; the write then completes in PostgreSQL, and the
    // transaction sits idle until the timeout ends it and its session.
    node.proc.kill("SIGSTOP");
    release();
    await holding;
    await until(
      async () =>
        (await own!.unsafe("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [backend])).length === 0,
      "PostgreSQL to end the paused node's session",
    );
    node.proc.kill("SIGCONT");
    const r = await patch;
    expect([r.status, r.headers.get("retry-after")]).toEqual([503, "2"]);
    expect(r.json).toEqual(
      errorBody(503, "service_unavailable", "The database is not available right now; retry shortly."),
    );
    // Nothing changed; sent again, it is served on a fresh connection.
    const now = await call(node, "GET", "/api/v1/orgs/acme/workflows/orders/", { token });
    expect([now.status, now.json.description]).toEqual([200, ""]);
    const again = await call(node, "PATCH", "/api/v1/orgs/acme/workflows/orders/", {
      token,
      body: { description: "changed" },
    });
    expect([again.status, again.json.description]).toEqual([200, "changed"]);
  }, 120_000);
});
