// A worker that keeps more heap after a full collection than the pool's bound (maxHeapBytes, the
// server's `worker_max_heap_mb`) is replaced between jobs, as past its count of XPath expressions
// (pool-recycle.test.ts): no job is stopped, lost or run twice. Garbage does not count: the worker
// collects before it says anything. The test worker's `hog` keeps what it allocates for good,
// `litter` lets it go. Real workers, no sleeps.
import { afterEach, expect, test } from "bun:test";
import type { PoolEvent } from "../../../src/jobs/pool.ts";
import { until } from "../../helpers/fixtures.ts";
import { closePools, echoed, gateFiles, limits, makeJob, startPool } from "./pool-helpers.ts";

afterEach(closePools);
const gates = gateFiles();

const MB = 1048576;
/** A fresh test worker's heap is ~1–5 MB; `hog` of 80 keeps ~100. */
const LIMIT = 48 * MB;

function recording() {
  const events: PoolEvent[] = [];
  return {
    onEvent: (e: PoolEvent) => events.push(e),
    exits: () => events.filter((e) => e.type === "worker_exit"),
  };
}

/** The event of a replacement for the heap: how much it kept depends on the engine, the rest not. */
function heapRecycled(exits: PoolEvent[]) {
  return exits.map((e) =>
    e.type === "worker_exit" && e.message
      ? { ...e, message: e.message.replace(/^kept \d+ MB/, "kept N MB") }
      : e,
  );
}
const RECYCLED: PoolEvent = {
  type: "worker_exit",
  worker: 0,
  reason: "recycled",
  message: "kept N MB of heap, past its limit of 48 MB",
};

test("past its heap limit a worker is replaced once its job has ended; the next job runs on a new one", async () => {
  const r = recording();
  const pool = await startPool(1, { maxHeapBytes: LIMIT, onEvent: r.onEvent });
  const run = async (name: string, spec: [string, Record<string, unknown>]) => {
    const job = makeJob(name, [spec, ["echo"]]);
    const outcome = await pool.submit(job, limits(job)).done;
    expect(outcome.status).toBe("completed");
    return echoed(outcome, 1);
  };
  const first = await run("a", ["hog", { mb: 8 }]); // under the limit: stays
  const second = await run("b", ["hog", { mb: 80 }]);
  expect(second.workerId).toBe(first.workerId);
  await until(() => r.exits().length === 1, "the worker to be replaced");
  const third = await run("c", ["hog", { mb: 8 }]);
  expect(third.workerId).not.toBe(first.workerId);
  expect(third.validations).toBe(1); // a fresh worker: only this job's first step ran there
  expect(heapRecycled(r.exits())).toEqual([RECYCLED]);
  expect(pool.recycledWorkers).toBe(1);
});

test("garbage is not kept: a job that made more than the limit of it leaves its worker in place", async () => {
  const r = recording();
  const pool = await startPool(1, { maxHeapBytes: LIMIT, onEvent: r.onEvent });
  const ids = [];
  for (const name of ["a", "b", "c"]) {
    const job = makeJob(name, [
      ["litter", { mb: 120 }],
      ["echo", {}],
    ]);
    const outcome = await pool.submit(job, limits(job)).done;
    expect(outcome.status).toBe("completed");
    ids.push(echoed(outcome, 1).workerId);
  }
  expect(new Set(ids).size).toBe(1);
  expect(r.exits()).toEqual([]);
  expect(pool.recycledWorkers).toBe(0);
});

test("without a bound (0) a worker keeps what it keeps", async () => {
  const r = recording();
  const pool = await startPool(1, { maxHeapBytes: 0, onEvent: r.onEvent });
  const ids = [];
  for (const name of ["a", "b"]) {
    const job = makeJob(name, [
      ["hog", { mb: 80 }],
      ["echo", {}],
    ]);
    ids.push(echoed(await pool.submit(job, limits(job)).done, 1).workerId);
  }
  expect(ids[1]).toBe(ids[0]);
  expect(r.exits()).toEqual([]);
});

test("the job begun behind the one that passed the limit ends there, once; the one handed over behind it goes back", async () => {
  // `a` passes the limit. The pool hears a's end before the worker's word on its heap: it has
  // begun `b` (handed over behind `a`) and handed `c` over behind `b`. Then the word: `c` is taken
  // back (its claim), `b` runs on the old worker to its end, `c` on the new one.
  const r = recording();
  const pool = await startPool(1, { maxHeapBytes: LIMIT, onEvent: r.onEvent });
  const a = makeJob("a", [
    ["hog", { mb: 80 }],
    ["echo", {}],
  ]);
  const b = makeJob("b", [
    ["gate", { path: gates.path("b") }],
    ["echo", {}],
  ]);
  const c = makeJob("c", [["echo"]]);
  const ha = pool.submit(a, limits(a));
  const hb = pool.submit(b, limits(b, Infinity));
  const hc = pool.submit(c, limits(c));
  expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 1, queued: 1 });
  const old = echoed(await ha.done, 1).workerId;
  await until(() => pool.stats().queued === 1 && pool.stats().pipelined === 0, "c to be taken back");
  expect(r.exits()).toEqual([]);
  gates.open("b");
  const ranB = echoed(await hb.done, 1);
  expect(ranB.workerId).toBe(old);
  const ranC = echoed(await hc.done);
  expect(ranC.workerId).not.toBe(old);
  expect(ranC.validations).toBe(0);
  expect(heapRecycled(r.exits())).toEqual([RECYCLED]);
  expect(pool.recycledWorkers).toBe(1);
});
