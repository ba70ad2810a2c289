// Runs a client waits for execute from memory and are written once (src/runs/direct.ts): before
// the 201 in their final state, or before the 202 as queued/running when the wait runs out.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { type Gate, HOLD_WORKFLOW, WORKER_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;
const JSON_CT = { "content-type": "application/json" };
const row = (id: string) =>
  s.row<{ status: string; attempts: number; started_at: string | null; finished_at: string | null }>(
    "SELECT status, attempts, started_at, finished_at FROM runs WHERE id = ?",
    id,
  );

/** A worker is started and free: a run launched now starts at once (a cancel replaces the worker). */
const workerIdle = () => until(() => s.deps.pool!.idleWorkers === 1, "an idle worker");

/**
 * Fills the pool's capacity (the one worker, and the next job handed to it) with runs held until
 * the returned gate opens.
 */
async function busy(): Promise<Gate> {
  const gate = s.gates.gate("busy");
  for (let i = 0; i < s.deps.pool!.capacity; i++) {
    const r = await call(s, "POST", runs("hold"), {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
  }
  await until(
    () => s.deps.executor.stats().inFlight === s.deps.pool!.capacity,
    "the held runs to fill the pool",
  );
  // … and to have left the queue (marked running, a later commit): queue depth 0.
  await until(async () => (await s.deps.executor.queueDepth()) === 0, "the queue to empty");
  return gate;
}

const cancel = (url: string) => call(s, "POST", `${new URL(url).pathname}cancel/`, { token: s.rootToken });

beforeAll(async () => {
  s = await startTestServer({ workers: 1, max_queue: 3, max_queue_per_org: 3 });
  await createWorkflow(s, s.rootToken, WORKER_WORKFLOW);
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
});
afterAll(() => s.close());

describe("a run the client waits for", () => {
  test("is not on disk while it executes, and is written once, final, before the 201", async () => {
    const before = await s.count("runs");
    const gate = s.gates.gate();
    const pending = call(s, "POST", runs("hold"), {
      token: s.rootToken,
      raw: gate.doc(),
      headers: JSON_CT,
    });
    await gate.held();
    expect(s.deps.executor.stats().memoryRunning).toBe(1);
    expect(await s.count("runs")).toBe(before);
    expect(await s.count("submissions")).toBe(before);
    gate.open();
    const r = await pending;
    expect(r.status).toBe(201);
    expect(await row(r.json.id)).toEqual({
      status: "succeeded",
      attempts: 1,
      started_at: r.json.started_at,
      finished_at: r.json.finished_at,
    });
    // The answer was built in memory: a GET reads exactly the same run back.
    const got = await call(s, "GET", new URL(r.json.url).pathname, { token: s.rootToken });
    expect(got.json).toEqual(r.json);
  });

  test("still running when the wait runs out: on disk as running before the 202", async () => {
    await workerIdle();
    const gate = s.gates.gate();
    const r = await call(s, "POST", runs("hold"), {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "wait=1" },
    });
    expect(r.status).toBe(202);
    expect(r.json.status).toBe("running");
    expect(await row(r.json.id)).toEqual(expect.objectContaining({ status: "running", attempts: 1 }));
    expect((await row(r.json.id))?.started_at).toBe(r.json.started_at);
    const got = await call(s, "GET", new URL(r.json.url).pathname, { token: s.rootToken });
    expect(got.status).toBe(200);
    expect(got.json.status).toBe("running");
    await gate.held(); // a worker really has it
    await cancel(r.json.url);
    expect((await waitForRun(s, s.rootToken, r.json.url)).status).toBe("canceled");
  });

  test("still waiting for a worker when the wait runs out: on disk as queued, and runs later", async () => {
    await workerIdle();
    const held = await busy();
    const r = await call(s, "POST", runs("fast"), {
      token: s.rootToken,
      raw: "{}",
      headers: { ...JSON_CT, prefer: "wait=1" },
    });
    expect(r.status).toBe(202);
    expect(r.json.status).toBe("queued");
    expect(r.headers.get("location")).toBe(r.json.url);
    expect(await row(r.json.id)).toEqual({
      status: "queued",
      attempts: 0,
      started_at: null,
      finished_at: null,
    });
    held.open();
    const done = await waitForRun(s, s.rootToken, r.json.url);
    expect(done.status).toBe("succeeded");
    expect((await row(r.json.id))?.attempts).toBe(1);
  });

  test("asked for at once (respond-async, wait=0): 202 with the run as committed, as GET reads it", async () => {
    await workerIdle();
    const held = await busy();
    const urls: string[] = [];
    for (const prefer of ["respond-async", "wait=0"]) {
      const r = await call(s, "POST", runs("fast"), {
        token: s.rootToken,
        raw: '{"n":1}',
        headers: { ...JSON_CT, prefer, "x-filename": "n.json" },
      });
      expect(r.status).toBe(202);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.headers.get("preference-applied")).toBe(prefer);
      // The answer is built from what was written, not read back: every field as GET reads it.
      const got = await call(s, "GET", new URL(r.json.url).pathname, { token: s.rootToken });
      expect(got.status).toBe(200);
      expect(got.json.status).toBe("queued");
      expect(r.json).toEqual(got.json);
      urls.push(r.json.url);
    }
    held.open();
    // Over before the next test fills the queue again (its bound is 3).
    for (const url of urls) expect((await waitForRun(s, s.rootToken, url)).status).toBe("succeeded");
  });

  test("runs waiting in memory count against the queue bound: 503, nothing stored", async () => {
    const held = await busy();
    const waiting = [0, 1, 2].map(() =>
      call(s, "POST", runs("fast"), {
        token: s.rootToken,
        raw: "{}",
        headers: { ...JSON_CT, prefer: "wait=30" },
      }),
    );
    await until(() => s.deps.executor.stats().memoryQueued === 3, "three runs waiting in memory");
    const before = await s.count("runs");
    const r = await call(s, "POST", runs("fast"), { token: s.rootToken, raw: "{}", headers: JSON_CT });
    expect(r.status).toBe(503);
    expect(r.json).toEqual(errorBody(503, "service_unavailable", "Too many runs are waiting; retry later."));
    expect(await s.count("runs")).toBe(before);
    held.open();
    expect((await Promise.all(waiting)).map((w) => w.status)).toEqual([201, 201, 201]);
  });

  test("another node's signal is no run: the queue bound does not count it", async () => {
    const held = await busy();
    // What a signal or poll from another node does (PostgreSQL); with the pool full, nothing
    // claims, so a count it raised would stand — it refused runs with a queue that was empty.
    s.deps.executor.poke();
    expect(await s.deps.executor.queueDepth()).toBe(0);
    held.open();
  });

  test("runs queued on disk and in memory take turns: neither starves the other", async () => {
    // The earlier tests' runs are over first: the queue bound (3) counts whatever is still waiting.
    await until(async () => {
      const st = s.deps.executor.stats();
      return st.inFlight === 0 && st.memoryQueued === 0 && (await s.deps.executor.queueDepth()) === 0;
    }, "the earlier tests' runs to end");
    const held = await busy();
    // Each run has its own gate: which one a step enters shows the order they run in.
    const [g1, g2, gDisk] = [s.gates.gate("mem"), s.gates.gate("mem"), s.gates.gate("disk")];
    const onDisk = await call(s, "POST", runs("hold"), {
      token: s.rootToken,
      raw: gDisk.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(onDisk.status).toBe(202);
    const m1 = call(s, "POST", runs("hold"), { token: s.rootToken, raw: g1.doc(), headers: JSON_CT });
    await until(() => s.deps.executor.stats().memoryQueued === 1, "the first run waiting in memory");
    let m2Answer = "none yet";
    const m2 = call(s, "POST", runs("hold"), { token: s.rootToken, raw: g2.doc(), headers: JSON_CT });
    void m2.then((r) => {
      m2Answer = `${r.status} ${JSON.stringify(r.json)}`;
    });
    await until(() => s.deps.executor.stats().memoryQueued === 2, "two runs waiting in memory").catch((e) => {
      // Said at the time it fails: what the second request got, and where the runs were.
      const stats = JSON.stringify(s.deps.executor.stats());
      throw new Error(`${(e as Error).message}; the second request's answer: ${m2Answer}; ${stats}`);
    });
    held.open();
    // The held runs came from disk, so memory goes next, then disk, then memory. One worker, and
    // each run holds it until its gate opens: the next one cannot have started yet.
    const all = [g1, g2, gDisk];
    const order: string[] = [];
    for (let i = 0; i < all.length; i++) {
      const started = () => all.filter((g) => g.entered() && !order.includes(g.name));
      await until(() => started().length > 0, "the next run to start");
      for (const g of started()) {
        order.push(g.name);
        g.open();
      }
    }
    expect(order).toEqual([g1.name, gDisk.name, g2.name]);
    expect((await m1).status).toBe(201);
    expect((await m2).status).toBe(201);
    expect((await waitForRun(s, s.rootToken, onDisk.json.url)).status).toBe("succeeded");
  });
});
