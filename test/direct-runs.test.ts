// Runs a client waits for execute from memory and are written once (src/runs/direct.ts): before
// the 201 in their final state, or before the 202 as queued/running when the wait runs out.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow, slowDoc, waitForRun, SLOW_WORKFLOW } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;
const JSON_CT = { "content-type": "application/json" };
const row = (id: string) =>
  s.row<{ status: string; attempts: number; started_at: string | null; finished_at: string | null }>(
    "SELECT status, attempts, started_at, finished_at FROM runs WHERE id = ?",
    id,
  );

/** Polls `cond` until true (bounded): the executor's state changes between event-loop turns. */
async function until(cond: () => boolean, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

/**
 * Fills the pool's capacity (the one worker, and the next job handed to it) with runs that take
 * seconds; returns their URLs.
 */
async function busy(): Promise<string[]> {
  const urls: string[] = [];
  for (let i = 0; i < s.deps.pool!.capacity; i++) {
    const r = await call(s, "POST", runs("slow"), {
      token: s.rootToken,
      raw: slowDoc(6000),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    urls.push(r.json.url);
  }
  await until(
    () => s.deps.executor.stats().inFlight === s.deps.pool!.capacity,
    "the slow runs to fill the pool",
  );
  // … and to have left the queue (marked running, a later commit): queue depth 0.
  let depth = 1;
  await until(() => {
    void s.deps.executor.queueDepth().then((d) => {
      depth = d;
    });
    return depth === 0;
  }, "the queue to empty");
  return urls;
}

const cancel = (url: string) => call(s, "POST", `${new URL(url).pathname}cancel/`, { token: s.rootToken });
const cancelAll = (urls: string[]) => Promise.all(urls.map(cancel));

beforeAll(async () => {
  s = await startTestServer({ workers: 1, sync_wait_ms: 5000, max_queue: 3 });
  // Fast, but a worker's job: a json_schema-only run would end in the inline lane without waiting
  // for a worker (test/inline-runs.test.ts), and these tests are about waiting for one.
  await createWorkflow(s, s.rootToken, {
    slug: "fast",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  await createWorkflow(s, s.rootToken, SLOW_WORKFLOW);
});
afterAll(() => s.close());

describe("a run the client waits for", () => {
  test("is not on disk while it executes, and is written once, final, before the 201", async () => {
    const before = await s.count("runs");
    const pending = call(s, "POST", runs("slow"), {
      token: s.rootToken,
      raw: slowDoc(3000),
      headers: JSON_CT,
    });
    await until(() => s.deps.executor.stats().memoryRunning === 1, "the run to execute from memory");
    expect(await s.count("runs")).toBe(before);
    expect(await s.count("submissions")).toBe(before);
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
    const r = await call(s, "POST", runs("slow"), {
      token: s.rootToken,
      raw: slowDoc(6000),
      headers: { ...JSON_CT, prefer: "wait=1" },
    });
    expect(r.status).toBe(202);
    expect(r.json.status).toBe("running");
    expect(await row(r.json.id)).toEqual(expect.objectContaining({ status: "running", attempts: 1 }));
    expect((await row(r.json.id))?.started_at).toBe(r.json.started_at);
    const got = await call(s, "GET", new URL(r.json.url).pathname, { token: s.rootToken });
    expect(got.status).toBe(200);
    expect(got.json.status).toBe("running");
    await cancel(r.json.url);
    expect((await waitForRun(s, s.rootToken, r.json.url)).status).toBe("canceled");
  });

  test("still waiting for a worker when the wait runs out: on disk as queued, and runs later", async () => {
    const slow = await busy();
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
    await cancelAll(slow);
    const done = await waitForRun(s, s.rootToken, r.json.url);
    expect(done.status).toBe("succeeded");
    expect((await row(r.json.id))?.attempts).toBe(1);
  });

  test("runs waiting in memory count against the queue bound: 503, nothing stored", async () => {
    const slow = await busy();
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
    await cancelAll(slow);
    expect((await Promise.all(waiting)).map((w) => w.status)).toEqual([201, 201, 201]);
  });

  test("runs queued on disk and in memory take turns: neither starves the other", async () => {
    const slow = await busy();
    const medium = slowDoc(1200);
    const onDisk = await call(s, "POST", runs("slow"), {
      token: s.rootToken,
      raw: medium,
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(onDisk.status).toBe(202);
    const waiting = [0, 1].map(() =>
      call(s, "POST", runs("slow"), { token: s.rootToken, raw: medium, headers: JSON_CT }),
    );
    await until(() => s.deps.executor.stats().memoryQueued === 2, "two runs waiting in memory");
    await cancelAll(slow);
    const [m1, m2] = await Promise.all(waiting);
    const disk = await waitForRun(s, s.rootToken, onDisk.json.url);
    // The slow runs came from disk, so memory goes next, then disk, then memory (one worker: the
    // order they end in is the order they ran in).
    expect(m1!.json.finished_at < disk.finished_at).toBe(true);
    expect(disk.finished_at < m2!.json.finished_at).toBe(true);
  });
});
