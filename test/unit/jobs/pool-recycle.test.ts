// A worker that holds more XPath expressions for good than the pool's bound (fontoxpath never frees
// one: docs/execution.md, "Workers replaced for what they keep") is replaced between jobs: no job is
// stopped, lost or run twice, the jobs handed to it and not started go to other workers. The test
// worker's fakes say `retains` as Schematron's compiles do. Real workers, no sleeps.
import { afterEach, expect, test } from "bun:test";
import type { PoolEvent } from "../../../src/jobs/pool.ts";
import { until } from "../../helpers/fixtures.ts";
import { closePools, echoed, gateFiles, limits, makeJob, startPool } from "./pool-helpers.ts";

afterEach(closePools);
const gates = gateFiles();

function recording() {
  const events: PoolEvent[] = [];
  return {
    events,
    onEvent: (e: PoolEvent) => events.push(e),
    exits: () => events.filter((e) => e.type === "worker_exit"),
  };
}
const RECYCLED: PoolEvent = { type: "worker_exit", worker: 0, reason: "recycled" };

test("past the bound, a worker is replaced once its job has ended; the next job runs on the new one", async () => {
  const r = recording();
  const pool = await startPool(1, { maxRetained: 5, onEvent: r.onEvent });
  const run = async (name: string, retains?: number) => {
    const job = makeJob(name, [["echo", retains ? { retains } : {}]]);
    const outcome = await pool.submit(job, limits(job)).done;
    expect(outcome.status).toBe("completed");
    return echoed(outcome);
  };
  const first = await run("a", 3);
  const second = await run("b", 3); // 6 > 5: this worker is replaced after this job
  expect(second.workerId).toBe(first.workerId);
  await until(() => r.exits().length === 1, "the worker to be replaced");
  const third = await run("c");
  expect(third.workerId).not.toBe(first.workerId);
  expect(third.validations).toBe(0); // a fresh worker: nothing ran there before
  expect(r.exits()).toEqual([RECYCLED]);
  expect(pool.recycledWorkers).toBe(1);
});

test("a job handed to it and not started goes back and runs once, on the replacement", async () => {
  // `a` passes the bound in its first step and holds the worker in its second: `b`, handed over
  // behind it, is taken back at once (its claim) and waits in the pool's queue.
  const r = recording();
  const pool = await startPool(1, { maxRetained: 5, onEvent: r.onEvent });
  const a = makeJob("a", [
    ["echo", { retains: 6 }],
    ["gate", { path: gates.path("a") }],
  ]);
  const b = makeJob("b", [["echo"]]);
  const ha = pool.submit(a, limits(a));
  const hb = pool.submit(b, limits(b));
  expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 1, queued: 0 });
  await until(() => pool.stats().queued === 1, "b to be taken back");
  expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 0, queued: 1 });
  gates.open("a");
  const old = echoed(await ha.done).workerId;
  const moved = echoed(await hb.done);
  expect(moved.workerId).not.toBe(old);
  expect(moved.validations).toBe(0);
  expect(r.exits()).toEqual([RECYCLED]);
});

test("a job taken back does not wait for the replacement when another worker frees up first", async () => {
  const r = recording();
  const pool = await startPool(2, { maxRetained: 5, onEvent: r.onEvent });
  const a = makeJob("a", [
    ["echo", { retains: 6 }],
    ["gate", { path: gates.path("a") }],
  ]);
  const c = makeJob("c", [["gate", { path: gates.path("c") }]]);
  const b = makeJob("b", [["echo"]]);
  // a's second step starts when the pool hears the end of its first, which passed the bound.
  const second = Promise.withResolvers<void>();
  const ha = pool.submit(a, limits(a, Infinity, { onStepStart: (i) => i === 1 && second.resolve() }));
  const hc = pool.submit(c, limits(c, Infinity));
  const hb = pool.submit(b, limits(b)); // handed to a's worker, the first of two equally busy
  await second.promise;
  // Taken back and handed to c's worker, the one that can take it.
  expect(pool.stats()).toMatchObject({ busy: 2, pipelined: 1, queued: 0 });
  gates.open("c");
  expect((await hc.done).status).toBe("completed");
  expect(echoed(await hb.done).text).toBe("b"); // while `a` still holds its worker
  expect(r.exits()).toEqual([]);
  gates.open("a");
  expect((await ha.done).status).toBe("completed");
  await until(() => r.exits().length === 1, "a's worker to be replaced");
  expect(r.exits()).toEqual([RECYCLED]);
});

test("a job its worker had started before the pool heard of the bound runs there to its end, once", async () => {
  // This thread blocks while the worker ends `a` (past the bound) and starts `b`: when the pool
  // hears `a` end, b's claim says it started, so the worker is replaced only after `b`.
  const r = recording();
  const pool = await startPool(1, { maxRetained: 5, onEvent: r.onEvent });
  const a = makeJob("a", [["echo", { retains: 6 }]]);
  const b = makeJob("b", [["gate", { path: gates.path("b"), mark: gates.path("b-started") }], ["echo"]]);
  const c = makeJob("c", [["echo"]]);
  const ha = pool.submit(a, limits(a));
  const hb = pool.submit(b, limits(b, Infinity));
  gates.wait("b-started");
  const old = echoed(await ha.done).workerId;
  const hc = pool.submit(c, limits(c));
  expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 0, queued: 1 }); // c is not handed to it
  expect(r.exits()).toEqual([]);
  gates.open("b");
  const ranB = echoed(await hb.done, 1);
  expect(ranB.workerId).toBe(old);
  const ranC = echoed(await hc.done);
  expect(ranC.workerId).not.toBe(old);
  expect(ranC.validations).toBe(0);
  expect(r.exits()).toEqual([RECYCLED]);
});
