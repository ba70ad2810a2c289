// A webhook deleted while a run of its org ends (PostgreSQL; SQLite's one writer leaves no such
// window). The run's final transaction reads the org's webhooks and writes one outbox row each;
// a deletion committed between that read and the row's insert made the insert fail its foreign
// key. The group commit then retried the run's write alone, and a second deletion caught the same
// way made the write fail for good: the run stayed `running` for as long as its node lived (its
// claim renewed, its result dropped), and a cancel caught so answered 409. Found by a mixed load
// that created and deleted webhooks while runs ended. The deletions here are held open on
// connections of the test's own and committed once the server waits for them, so no timing is
// involved.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.ts";

/**
 * A deletion of one webhook in a transaction of its own: the row is locked at once (FOR UPDATE, as
 * the DELETE would) and deleted and committed when the test says. Locked rather than deleted
 * first: a deletion also bumps the one cache-generation row, which would hold the second
 * deletion back until the first commits.
 */
function heldDeletion(url: string, webhookId: number) {
  const sql = new SQL({ url, max: 1 });
  let commit!: () => void;
  const release = new Promise<void>((r) => {
    commit = r;
  });
  let locked!: (pid: number) => void;
  /** The session's process id, once it holds the row. */
  const pid = new Promise<number>((r) => {
    locked = r;
  });
  const done = sql.begin(async (tx) => {
    await tx.unsafe("SELECT id FROM webhooks WHERE id = $1 FOR UPDATE", [webhookId]);
    locked(Number(((await tx.unsafe("SELECT pg_backend_pid() AS pid")) as { pid: number }[])[0]!.pid));
    await release;
    await tx.unsafe("DELETE FROM webhooks WHERE id = $1", [webhookId]);
  });
  return {
    pid,
    /** Deletes the row and commits. */
    async commit() {
      commit();
      await done;
      await sql.close();
    },
  };
}

describe.skipIf(!onPostgres)("a webhook deleted while a run of its org ends", () => {
  let s: TestServer;
  let rx: Receiver;
  let watch: SQL;
  beforeAll(async () => {
    s = await startTestServer({ webhook_allow_private: true });
    rx = startReceiver();
    watch = new SQL({ url: s.databaseUrl!, max: 1 });
    await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
  });
  afterAll(async () => {
    await watch.close();
    await rx.stop();
    await s.close();
  });

  /** Whether a session of this database waits for a lock that session `pid` holds. */
  const blockedBy = async (pid: number) =>
    Number(
      (
        (await watch.unsafe(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))",
          [pid],
        )) as { n: string }[]
      )[0]!.n,
    ) > 0;

  test("two deletions, each committed while the run's write waits on its webhook: the run still ends", async () => {
    const hooks: number[] = [];
    for (const path of ["a", "b", "stays"]) {
      const h = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
        token: s.rootToken,
        body: { url: `${rx.url}/${path}` },
      });
      expect(h.status).toBe(201);
      hooks.push(h.json.id);
    }
    const gate = s.gates.gate();
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    await gate.held();

    const deletions = [heldDeletion(s.databaseUrl!, hooks[0]!), heldDeletion(s.databaseUrl!, hooks[1]!)];
    const pids = await Promise.all(deletions.map((d) => d.pid));
    gate.open();
    // The run's final write waits on one of the two deleted webhooks, then (after that deletion
    // commits) on the other: each is committed only once the server waits for it.
    let first = -1;
    await until(async () => {
      for (const [i, pid] of pids.entries()) if (await blockedBy(pid)) first = i;
      return first >= 0;
    }, "the final write waits on a deleted webhook");
    await deletions[first]!.commit();
    await until(() => blockedBy(pids[1 - first]!), "the final write waits on the other one");
    await deletions[1 - first]!.commit();

    await until(
      async () =>
        (await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/`, { token: s.rootToken })).json.status ===
        "succeeded",
      "the run ends succeeded",
    );
    // Its event went to the webhook that stayed, and only there.
    await rx.waitFor((got) => got.some((g) => g.path === "/stays"));
    expect(rx.received.map((g) => [g.path, (g.json.data.run as { id: string }).id])).toEqual([
      ["/stays", r.json.id],
    ]);
  });
});
