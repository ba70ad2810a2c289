// Runs started again from their stored row after a restart (graceful, or what a crash leaves):
// their findings, attempts and times read as those of a run that never stopped.
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { join } from "node:path";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { onPostgres } from "./helpers/backend.ts";
import { type TestServer, call, errorBody, restartTestServer, startTestServer } from "./helpers/server.ts";

const ASYNC = { "content-type": "application/json", prefer: "respond-async" };
/** A step that fails with two findings (no id, no name), then a held one. */
const TWO = {
  slug: "two",
  fail_fast: false,
  allowed_file_types: ["JSON"],
  steps: [
    { name: "schema", validator: "json_schema", config: { schema: { required: ["id", "name"] } } },
    { name: "hold", validator: "test_hold", config: {} },
  ],
};

const submit = (s: TestServer, slug: string, doc: string) =>
  call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: doc,
    headers: ASYNC,
  });

/** SQL on a stopped server's database (either backend): what a crash would have left there. */
async function whileStopped(s: TestServer, text: string, ...params: (string | number | null)[]) {
  if (s.databaseUrl) {
    const pg = new SQL(s.databaseUrl);
    let n = 0;
    await pg.unsafe(
      text.replace(/\?/g, () => `$${++n}`),
      params,
    );
    await pg.close();
    return;
  }
  const db = new Database(join(s.dataDir, "assay.db"));
  db.query(text).run(...params);
  db.close();
}

/** Rows of a stopped server's database (either backend). */
async function readStopped<T>(s: TestServer, text: string): Promise<T[]> {
  if (s.databaseUrl) {
    const pg = new SQL(s.databaseUrl);
    const rows = (await pg.unsafe(text)) as T[];
    await pg.close();
    return [...rows];
  }
  const db = new Database(join(s.dataDir, "assay.db"));
  const rows = db.query(text).all() as T[];
  db.close();
  return rows;
}

/** What a kill -9 leaves of runs it interrupted: `running`, claimed by the dead process. */
const asCrashed = (s: TestServer, ids: string[]) =>
  whileStopped(
    s,
    `UPDATE runs SET status = 'running', node_id = 'test-node' WHERE id IN (${ids.map(() => "?").join(", ")})`,
    ...ids,
  );

describe("a run executed again after a restart", () => {
  for (const how of ["graceful", "crash"] as const)
    test(`${how}: its steps' findings are shown, counted and paged like any run's`, async () => {
      let s = await startTestServer({ workers: 1, shutdown_grace_ms: 50 });
      try {
        await createWorkflow(s, s.rootToken, TWO);
        const gate = s.gates.gate();
        const r = await submit(s, "two", gate.doc());
        expect(r.status).toBe(202);
        await gate.held();
        // The list shows a running run's steps as GET of the run does (live), not as pending.
        const one = await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/`, { token: s.rootToken });
        const listed = await call(s, "GET", "/api/v1/orgs/acme/runs/", { token: s.rootToken });
        const statuses = (x: { steps: { status: string }[] }) => x.steps.map((st) => st.status);
        expect(statuses(one.json)).toEqual(["failed", "running"]);
        expect(statuses(listed.json.results[0])).toEqual(["failed", "running"]);
        // Graceful: past its grace period the held step goes back to the queue.
        await s.stop();
        if (how === "crash") await asCrashed(s, [r.json.id]);
        const restartedAt = Date.now();
        s = await restartTestServer(s, { workers: 1 });
        await gate.held(2);
        gate.open();
        const run = await waitForRun(s, s.rootToken, r.json.url);
        expect(run.summary.errors).toBe(2);
        // Its times are those of the attempt that finished it, as duration_ms counts it.
        expect(Date.parse(run.started_at)).toBeGreaterThanOrEqual(restartedAt);
        expect(Date.parse(run.finished_at)).toBeGreaterThanOrEqual(Date.parse(run.started_at));
        expect(run.steps.map((x: { findings_count: number }) => x.findings_count)).toEqual([2, 0]);
        expect(run.steps[0].findings.map((f: { severity: string }) => f.severity)).toEqual([
          "error",
          "error",
        ]);
        const f = await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/findings/`, {
          token: s.rootToken,
        });
        expect(f.json.count).toBe(2);
        expect(f.json.results.map((x: { step_order: number }) => x.step_order)).toEqual([1, 1]);
        const list = await call(s, "GET", "/api/v1/orgs/acme/runs/", { token: s.rootToken });
        expect(list.json.results[0].steps.map((x: { findings_count: number }) => x.findings_count)).toEqual([
          2, 0,
        ]);
      } finally {
        await s.close();
      }
    });
});

describe("Idempotency-Key of a request whose server died while it waited", () => {
  test("the retry replays the run the request committed (202, then 201 once final); never a second run", async () => {
    let s = await startTestServer({ workers: 1, shutdown_grace_ms: 50 });
    try {
      await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
      const gate = s.gates.gate();
      // Over 1 MiB: the run is written before the wait, its answer recorded after it.
      const doc = gate.doc(1_100_000);
      const headers = { "content-type": "application/json", "idempotency-key": "k-crash", prefer: "wait=30" };
      const send = () =>
        call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", { token: s.rootToken, raw: doc, headers });
      const first = send().catch(() => null);
      await gate.held();
      type Key = { state: string; status: number | null; headers: string | null; body: string | null };
      const key = (await s.row<Key>(
        "SELECT state, status, headers, body FROM idempotency_keys WHERE key = 'k-crash'",
      ))!;
      const { id } = (await s.row<{ id: string }>("SELECT id FROM runs"))!;
      await s.stop();
      await first;
      // What a kill -9 during the wait leaves: the key as it was then, the run running.
      await whileStopped(
        s,
        "UPDATE idempotency_keys SET state = ?, status = ?, headers = ?, body = ? WHERE key = 'k-crash'",
        key.state,
        key.status,
        key.headers,
        key.body,
      );
      await asCrashed(s, [id]);
      s = await restartTestServer(s, { workers: 1 });
      if (onPostgres) {
        // Several nodes share the keys: in progress for 5 minutes (the request may be alive elsewhere).
        expect((await send()).json).toEqual(
          errorBody(
            409,
            "idempotency_key_in_progress",
            "A request with this Idempotency-Key is still in progress; retry shortly.",
          ),
        );
        await s.sql(
          "UPDATE idempotency_keys SET created_at = ? WHERE key = 'k-crash'",
          new Date(Date.now() - 6 * 60_000).toISOString(),
        );
      }
      const retry = await send();
      expect([retry.status, retry.json.id, retry.json.status]).toEqual([202, id, "running"]);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.headers.get("location")).toBe(retry.json.url);
      expect(retry.headers.get("retry-after")).toBe("1");
      gate.open();
      expect((await waitForRun(s, s.rootToken, retry.json.url)).status).toBe("succeeded");
      const after = await send();
      expect([after.status, after.json.id, after.json.status]).toEqual([201, id, "succeeded"]);
      expect(after.headers.get("idempotent-replayed")).toBe("true");
      expect(await s.count("runs")).toBe(1);
      expect(gate.entered()).toBe(2); // the one run, started twice; no other
    } finally {
      await s.close();
    }
  });
});

describe("attempts", () => {
  test("graceful: a run handed to a busy worker but never begun goes back to the queue with its attempt given back", async () => {
    let s = await startTestServer({ workers: 1, shutdown_grace_ms: 50 });
    try {
      await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
      const a = s.gates.gate();
      const b = s.gates.gate();
      const ra = await submit(s, "hold", a.doc());
      await a.held();
      const rb = await submit(s, "hold", b.doc());
      // B is claimed and handed to the worker behind A (pipelined): running, never begun.
      await until(
        async () =>
          (await s.row<{ st: string }>("SELECT status AS st FROM runs WHERE id = ?", rb.json.id))?.st ===
          "running",
        "B to be claimed",
      );
      await s.stop();
      const rows = await readStopped<{ id: string; status: string; attempts: number }>(
        s,
        "SELECT id, status, attempts FROM runs ORDER BY created_at",
      );
      expect(rows.map((r) => [r.id, r.status, Number(r.attempts)])).toEqual([
        [ra.json.id, "queued", 1],
        [rb.json.id, "queued", 0],
      ]);
      s = await restartTestServer(s, { workers: 1 });
      a.open();
      b.open();
      for (const r of [ra, rb])
        expect((await waitForRun(s, s.rootToken, r.json.url)).status).toBe("succeeded");
    } finally {
      await s.close();
    }
  });
});

describe("times", () => {
  test("a run canceled while queued never started: started_at and duration_ms are null", async () => {
    const s = await startTestServer({ workers: 1 });
    try {
      await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
      const gate = s.gates.gate();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await submit(s, "hold", gate.doc())).json.id);
      await gate.held();
      // One worker: one run held, one handed to it behind; the third stays queued.
      await until(async () => (await s.count("runs WHERE status = 'queued'")) === 1, "one queued run");
      const queued = (await s.row<{ id: string }>("SELECT id FROM runs WHERE status = 'queued'"))!.id;
      const c = await call(s, "POST", `/api/v1/orgs/acme/runs/${queued}/cancel/`, { token: s.rootToken });
      expect([c.status, c.json.status, c.json.started_at, c.json.duration_ms]).toEqual([
        200,
        "canceled",
        null,
        null,
      ]);
      gate.open();
    } finally {
      await s.close();
    }
  });
});
