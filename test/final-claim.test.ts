// A node whose claim on a running run was taken over writes nothing over it (docs/scaling.md):
// not over a run recovery gave up (`error`, still naming that node), nor over one it put back in
// the queue (the old node's stopped job would end it `canceled`). The store's final write, on
// the real database of a real server (both backends).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  await createWorkflow(s, s.rootToken, {
    slug: "claims",
    allowed_file_types: ["JSON"],
    steps: [{ name: "s", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

/** A finished run's row made to look as if node "ghost" held it and its lease ran out. */
async function heldByGhost(attempts: number): Promise<string> {
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/claims/runs/", {
    token: s.rootToken,
    raw: "{}",
    headers: { "content-type": "application/json" },
  });
  expect([r.status, r.json.status]).toEqual([201, "succeeded"]);
  await s.sql(
    "UPDATE runs SET status = 'running', node_id = 'ghost', lease_until = ?, attempts = ?, finished_at = NULL WHERE id = ?",
    new Date(Date.now() - 60_000).toISOString(),
    attempts,
    r.json.id,
  );
  return r.json.id;
}
const ghostWrites = (id: string, status: "succeeded" | "canceled") =>
  s.deps.runs.finish(
    id,
    { status, steps: [], summary: null, error: null, finishedAt: new Date().toISOString(), durationMs: 1 },
    undefined,
    undefined,
    "ghost",
  );
const statusOf = async (id: string) =>
  (await s.row<{ status: string }>("SELECT status FROM runs WHERE id = ?", id))!.status;

describe("the final write of a node whose claim ran out", () => {
  test("does not turn a run recovery gave up back into succeeded", async () => {
    const id = await heldByGhost(1);
    const r = await s.deps.runs.recoverExpired(1);
    expect(r.failed.map((f) => f.id)).toContain(id);
    expect(await statusOf(id)).toBe("error");
    expect(await ghostWrites(id, "succeeded")).toBe(false);
    expect(await statusOf(id)).toBe("error");
  });
  test("does not end a run recovery put back in the queue", async () => {
    const id = await heldByGhost(0);
    const r = await s.deps.runs.recoverExpired(5);
    expect(r.requeued).toBeGreaterThanOrEqual(1);
    expect(await ghostWrites(id, "canceled")).toBe(false);
    // Queued, or already taken and run again by this server's own dispatcher: never canceled.
    expect(["queued", "running", "succeeded"]).toContain(await statusOf(id));
  });
  test("while it holds the claim, its write lands", async () => {
    const id = await heldByGhost(0);
    await s.sql(
      "UPDATE runs SET lease_until = ? WHERE id = ?",
      new Date(Date.now() + 60_000).toISOString(),
      id,
    );
    expect(await ghostWrites(id, "succeeded")).toBe(true);
    expect(await statusOf(id)).toBe("succeeded");
  });
});

describe.skipIf(!onPostgres)("claims on PostgreSQL", () => {
  test("a queued run another transaction holds is skipped, not waited for: the next one runs", async () => {
    const t = await startTestServer({ workers: 1 });
    const other = new SQL(t.databaseUrl!);
    try {
      await createWorkflow(t, t.rootToken, HOLD_WORKFLOW);
      const post = (raw: string) =>
        call(t, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
          token: t.rootToken,
          raw,
          headers: { "content-type": "application/json", prefer: "respond-async" },
        });
      const statusOf = async (id: string) =>
        (await t.row<{ status: string }>("SELECT status FROM runs WHERE id = ?", id))!.status;
      // Two held runs fill the pool (one worker, one job handed ahead); the next two wait queued.
      const busy = [];
      for (let i = 0; i < 2; i++) {
        const g = t.gates.gate();
        busy.push({ g, r: await post(g.doc()) });
      }
      const lockedGate = t.gates.gate();
      const locked = { g: lockedGate, r: await post(lockedGate.doc()) };
      const free = t.gates.gate();
      const next = await post(free.doc());
      free.open();
      await until(
        async () => (await t.count("runs WHERE status = 'running'")) === 2,
        "the two held runs running",
      );
      expect([await statusOf(locked.r.json.id), await statusOf(next.json.id)]).toEqual(["queued", "queued"]);
      // A transaction (a psql session, another node's slow claim) holds the oldest queued run.
      const release = Promise.withResolvers<void>();
      const locking = Promise.withResolvers<void>();
      const holding = other.begin(async (tx) => {
        await tx.unsafe("SELECT id FROM runs WHERE id = $1 FOR UPDATE", [locked.r.json.id]);
        locking.resolve();
        await release.promise;
      });
      await locking.promise;
      for (const b of busy) b.g.open();
      expect((await waitForRun(t, t.rootToken, next.json.url)).status).toBe("succeeded");
      for (const b of busy) expect((await waitForRun(t, t.rootToken, b.r.json.url)).status).toBe("succeeded");
      expect(await statusOf(locked.r.json.id)).toBe("queued");
      release.resolve();
      await holding;
      locked.g.open();
      expect((await waitForRun(t, t.rootToken, locked.r.json.url)).status).toBe("succeeded");
    } finally {
      await other.close();
      await t.close();
    }
  });
});
