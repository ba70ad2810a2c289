// The worker pool with real Bun Workers running the real worker loop and fake validators
// (fixtures/test-worker.ts). No sleeps: every wait is for an event or a promise.
import { afterEach, describe, expect, test } from "bun:test";
import { type PoolEvent, PoolClosedError, PoolFullError, WorkerPool } from "../../../src/jobs/pool.ts";
import {
  closePools,
  echoed,
  limits,
  makeJob,
  pools,
  type StepSpec,
  startPool,
  submitAndWaitStart,
  TEST_WORKER,
} from "./pool-helpers.ts";

afterEach(closePools);

const BROKEN_WORKER = new URL("./fixtures/broken-worker.ts", import.meta.url);

describe("queueing", () => {
  test("size 1 runs jobs one at a time in submission order, the next one waiting in the worker", async () => {
    const pool = await startPool(1);
    const order: string[] = [];
    const jobs = [0, 1, 2, 3].map((n) => makeJob(`doc ${n}`, [["echo"]]));
    const handles = jobs.map((j) =>
      pool.submit(j, limits(j, 5000, { onStepStart: () => order.push(j.jobId) })),
    );
    expect(pool.stats()).toEqual({ size: 1, capacity: 2, busy: 1, queued: 2, pipelined: 1 });
    const outcomes = await Promise.all(handles.map((h) => h.done));
    expect(order).toEqual(jobs.map((j) => j.jobId));
    expect(outcomes.map((o) => echoed(o).text)).toEqual(["doc 0", "doc 1", "doc 2", "doc 3"]);
    expect(pool.stats()).toEqual({ size: 1, capacity: 2, busy: 0, queued: 0, pipelined: 0 });
  });

  test("size 2 starts queued jobs in submission order, two at a time", async () => {
    // One job per worker: every start is the queue's head handed to a free worker, so the order
    // is exact. With pipelining, which of two workers frees first depends on the machine's load.
    const pool = await startPool(2, { jobsPerWorker: 1 });
    const order: string[] = [];
    let maxBusy = 0;
    const jobs = [0, 1, 2, 3, 4, 5].map(() => makeJob("x", [["sleep", { ms: 20 }]]));
    const handles = jobs.map((j) =>
      pool.submit(
        j,
        limits(j, 5000, {
          onStepStart: () => {
            order.push(j.jobId);
            maxBusy = Math.max(maxBusy, pool.busyWorkers);
          },
        }),
      ),
    );
    expect(pool.stats()).toEqual({ size: 2, capacity: 2, busy: 2, queued: 4, pipelined: 0 });
    const outcomes = await Promise.all(handles.map((h) => h.done));
    expect(outcomes.every((o) => o.status === "completed")).toBe(true);
    expect(order).toEqual(jobs.map((j) => j.jobId));
    expect(maxBusy).toBe(2);
  });

  test("submit throws PoolFullError beyond maxQueue and leaves the bytes with the caller", async () => {
    const pool = await startPool(1, { maxQueue: 1 });
    const running = makeJob("a", [["sleep", { ms: 50 }]]);
    const pipelined = makeJob("b", [["echo"]]);
    const queued = makeJob("c", [["echo"]]);
    const rejected = makeJob("d", [["echo"]]);
    const handles = [running, pipelined, queued].map((j) => pool.submit(j, limits(j)));
    expect(() => pool.submit(rejected, limits(rejected))).toThrow(PoolFullError);
    expect(rejected.bytes.detached).toBe(false);
    for (const h of handles) expect((await h.done).status).toBe("completed");
  });

  test("200 concurrent jobs with distinct content each get their own result", async () => {
    const pool = await startPool(4);
    const jobs = Array.from({ length: 200 }, (_, n) =>
      makeJob(`content #${n} `.repeat((n % 7) + 1), [["echo"]]),
    );
    const texts = jobs.map((j) => new TextDecoder().decode(j.bytes));
    const outcomes = await Promise.all(jobs.map((j) => pool.submit(j, limits(j)).done));
    outcomes.forEach((o, n) => {
      expect(o.status).toBe("completed");
      expect(echoed(o).text).toBe(texts[n]);
      expect(o.steps[0].findings[0].line).toBe(texts[n].length);
    });
  });
});

describe("data transfer", () => {
  test("the submission bytes are transferred: the caller's ArrayBuffer is detached", async () => {
    const pool = await startPool(1);
    const job = makeJob("héllo", [["echo"]]);
    const buffer = job.bytes;
    const handle = pool.submit(job, limits(job));
    expect(buffer.detached).toBe(true);
    expect(buffer.byteLength).toBe(0);
    expect(echoed(await handle.done).text).toBe("héllo");
  });

  test("a queued job's bytes are detached at submit too", async () => {
    const pool = await startPool(1, { jobsPerWorker: 1 });
    const first = makeJob("a", [["sleep", { ms: 20 }]]);
    const second = makeJob("b", [["echo"]]);
    pool.submit(first, limits(first));
    const handle = pool.submit(second, limits(second));
    expect(pool.stats().queued).toBe(1);
    expect(second.bytes.detached).toBe(true);
    expect(echoed(await handle.done).text).toBe("b");
  });

  test("a config is sent once per worker per key", async () => {
    const pool = await startPool(1);
    const seen = [];
    for (let n = 0; n < 3; n++) {
      const job = makeJob(`run ${n}`, [["echo", { tag: "shared" }, "wf1:step1"]]);
      seen.push(echoed(await pool.submit(job, limits(job)).done));
    }
    expect(seen.map((s) => s.configsReceived)).toEqual([1, 1, 1]);
    expect(seen.map((s) => s.compiles)).toEqual([1, 1, 1]);
    expect(seen.every((s) => s.tag === "shared")).toBe(true);
    const other = makeJob("run 3", [["echo", { tag: "other" }, "wf1:step2"]]);
    const last = echoed(await pool.submit(other, limits(other)).done);
    expect(last).toMatchObject({ tag: "other", configsReceived: 2, compiles: 2 });
  });

  test("a worker that evicted a config asks again and gets it", async () => {
    // The test worker caches 2 configs; the pool assumes 256, so the third key evicts the first.
    const pool = await startPool(1);
    const keys = ["k1", "k2", "k3"];
    const fill = makeJob(
      "fill",
      keys.map((key): StepSpec => ["echo", { tag: key }, key]),
      false,
    );
    await pool.submit(fill, limits(fill)).done;
    const again = makeJob("again", [["echo", { tag: "k1" }, "k1"]]);
    const outcome = await pool.submit(again, limits(again)).done;
    expect(outcome.status).toBe("completed");
    expect(echoed(outcome)).toMatchObject({ tag: "k1", text: "again" });
    expect(echoed(outcome).configsReceived).toBeGreaterThan(3);
  });
});

describe("step outcomes", () => {
  test("fail-fast skips the steps after a failed one", async () => {
    const pool = await startPool(1);
    const job = makeJob("x", [["echo"], ["fail"], ["echo"]]);
    const ended: number[] = [];
    const outcome = await pool.submit(job, limits(job, 5000, { onStepEnd: (i) => ended.push(i) })).done;
    expect(outcome.status).toBe("completed");
    expect(outcome.steps.map((s) => s.status)).toEqual(["passed", "failed", "skipped"]);
    expect(ended).toEqual([0, 1]);
  });

  test("without fail-fast every step runs", async () => {
    const pool = await startPool(1);
    const job = makeJob("x", [["echo"], ["fail"], ["echo"]], false);
    const outcome = await pool.submit(job, limits(job)).done;
    expect(outcome.steps.map((s) => s.status)).toEqual(["passed", "failed", "passed"]);
  });

  test("a validator that throws errors its step with a message and no stack", async () => {
    const pool = await startPool(1);
    const job = makeJob("x", [["throws"], ["echo"]]);
    const outcome = await pool.submit(job, limits(job)).done;
    expect(outcome.status).toBe("completed");
    expect(outcome.steps[0]).toMatchObject({ status: "error", error: "validator blew up" });
    expect(outcome.steps[1].status).toBe("skipped");
  });

  test("an allocation failure errors the step and the worker lives on", async () => {
    const pool = await startPool(1);
    const job = makeJob("x", [["alloc"], ["echo"]], false);
    const outcome = await pool.submit(job, limits(job)).done;
    expect(outcome.steps[0]).toMatchObject({ status: "error", error: "RangeError: Out of memory" });
    expect(outcome.steps[1].status).toBe("passed");
  });

  test("findings are capped at maxFindings and marked truncated", async () => {
    const pool = await startPool(1);
    const job = makeJob("x", [["many"]]);
    const outcome = await pool.submit(job, limits(job)).done;
    expect(outcome.steps[0].findings).toHaveLength(10);
    expect(outcome.steps[0].truncated).toBe(true);
  });
});

describe("time limits and crashes", () => {
  test("a step that loops forever is stopped at its limit and the pool serves the next job", async () => {
    const events: PoolEvent[] = [];
    const pool = await startPool(1, { onEvent: (e) => events.push(e) });
    const stuck = makeJob("x", [["echo"], ["sleep_forever"], ["echo"]]);
    const next = makeJob("next", [["echo"]]);
    const { handle, started } = submitAndWaitStart(pool, stuck, { stepTimeoutsMs: [5000, 150, 5000] }, 1);
    const after = pool.submit(next, limits(next));
    await started;
    const t0 = performance.now();
    const outcome = await handle.done;
    const elapsed = performance.now() - t0;
    expect(outcome.status).toBe("timed_out");
    expect(outcome.error).toBe("step exceeded its time limit of 150 ms");
    expect(outcome.steps.map((s) => s.status)).toEqual(["passed", "error", "skipped"]);
    expect(outcome.steps[1].error).toBe("step exceeded its time limit of 150 ms");
    expect(elapsed).toBeGreaterThanOrEqual(140);
    // Only a watchdog: a limit that did not work would never end the job (the others are 5 s).
    expect(elapsed).toBeLessThan(4000);
    const nextOutcome = await after.done;
    expect(nextOutcome.status).toBe("completed");
    expect(echoed(nextOutcome).text).toBe("next");
    expect(events).toContainEqual(expect.objectContaining({ type: "worker_exit", reason: "timed_out" }));
  });

  test("a job's time in all is bounded too: a step with time left of its own is stopped when the job's runs out", async () => {
    const pool = await startPool(1, { runTimeoutMs: 1000 });
    // Every step may take 5 s alone; the job may take 1 s in all (its first step, an echo, takes ms).
    const job = makeJob("x", [["echo"], ["sleep_forever"], ["echo"]]);
    const { handle, started } = submitAndWaitStart(pool, job, limits(job, 5000), 1);
    await started;
    const outcome = await handle.done;
    expect(outcome.status).toBe("timed_out");
    expect(outcome.error).toBe("run exceeded its time limit of 1000 ms");
    expect(outcome.steps.map((s) => s.status)).toEqual(["passed", "error", "skipped"]);
    expect(outcome.steps[1].error).toBe("run exceeded its time limit of 1000 ms");
    // The next job has a limit of its own, counted from its own start.
    const next = makeJob("next", [["echo"]]);
    expect(echoed(await pool.submit(next, limits(next)).done).text).toBe("next");
  });

  test("a step's own limit still applies when it is sooner than the job's", async () => {
    const pool = await startPool(1, { runTimeoutMs: 60_000 });
    const job = makeJob("x", [["sleep_forever"]]);
    const outcome = await pool.submit(job, limits(job, 150)).done;
    expect(outcome.error).toBe("step exceeded its time limit of 150 ms");
  });

  test("a worker that exits fails only its job; the next job succeeds on a fresh worker", async () => {
    const pool = await startPool(1);
    const before = makeJob("before", [["echo"]]);
    const firstWorker = echoed(await pool.submit(before, limits(before)).done).workerId;
    const crash = makeJob("x", [["echo"], ["exit"], ["echo"]]);
    const next = makeJob("next", [["echo"]]);
    const crashed = pool.submit(crash, limits(crash));
    const after = pool.submit(next, limits(next));
    const outcome = await crashed.done;
    expect(outcome.status).toBe("crashed");
    expect(outcome.error).toBe("worker crashed: worker exited with code 70");
    expect(outcome.steps.map((s) => s.status)).toEqual(["passed", "error", "skipped"]);
    const nextOutcome = await after.done;
    expect(nextOutcome.status).toBe("completed");
    expect(echoed(nextOutcome).workerId).not.toBe(firstWorker);
  });

  test("a failure of the worker loop itself is a crash with a short message", async () => {
    const pool = await startPool(2);
    const slow = makeJob("slow", [["sleep", { ms: 100 }], ["echo"]]);
    const bad = makeJob("bad", [["unclonable"]]);
    const { handle: slowHandle, started } = submitAndWaitStart(pool, slow, limits(slow));
    await started;
    const outcome = await pool.submit(bad, limits(bad)).done;
    expect(outcome.status).toBe("crashed");
    expect(outcome.steps[0].status).toBe("error");
    expect(outcome.error).toBe("worker crashed: DataCloneError: The object can not be cloned.");
    // The job on the other worker is untouched.
    expect((await slowHandle.done).status).toBe("completed");
  });

  test("a worker that fails to load rejects ready() and respawns with growing delays", async () => {
    const crashes: number[] = [];
    const enough = Promise.withResolvers<void>();
    const pool = new WorkerPool({
      size: 1,
      workerUrl: BROKEN_WORKER,
      onEvent: (e) => {
        if (e.type !== "worker_exit") return;
        crashes.push(performance.now());
        if (crashes.length === 4) enough.resolve();
      },
    });
    pools.push(pool);
    const job = makeJob("x", [["echo"]]);
    const handle = pool.submit(job, limits(job));
    await expect(pool.ready()).rejects.toThrow(
      "a validation worker failed to start: cannot load the validators",
    );
    await enough.promise;
    const gaps = crashes.slice(1).map((t, i) => t - crashes[i]);
    // Each gap is at least its delay (0, 50, 100 ms): lower bounds hold on any machine, where
    // comparing two gaps would compare the machine's load at two moments.
    expect(gaps[1]).toBeGreaterThanOrEqual(45);
    expect(gaps[2]).toBeGreaterThanOrEqual(95);
    await pool.close(0);
    expect(await handle.done).toMatchObject({ status: "canceled", error: "shutdown" });
  });
});

describe("cancel", () => {
  test("a queued job is removed and resolves canceled at once", async () => {
    const pool = await startPool(1, { jobsPerWorker: 1 });
    const running = makeJob("a", [["sleep", { ms: 50 }]]);
    const queued = makeJob("b", [["echo"], ["echo"]]);
    const h1 = pool.submit(running, limits(running));
    const h2 = pool.submit(queued, limits(queued));
    h2.cancel("user asked");
    expect(pool.stats().queued).toBe(0);
    expect(await h2.done).toMatchObject({ status: "canceled", error: "user asked" });
    expect((await h2.done).steps.map((s) => s.status)).toEqual(["skipped", "skipped"]);
    expect((await h1.done).status).toBe("completed");
  });

  test("a running job's worker is stopped promptly and replaced", async () => {
    const stopped = Promise.withResolvers<number>();
    const pool = await startPool(1, { onEvent: (e) => e.type === "worker_stopped" && stopped.resolve(e.ms) });
    const stuck = makeJob("x", [["echo"], ["sleep_forever"], ["echo"]]);
    const { handle, started } = submitAndWaitStart(
      pool,
      stuck,
      { stepTimeoutsMs: [5000, Infinity, 5000] },
      1,
    );
    await started;
    const t0 = performance.now();
    handle.cancel();
    const outcome = await handle.done;
    // The step loops forever: a cancel that waited for it would never end. The bound is a
    // watchdog a machine ten times slower still meets, not a measurement.
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(outcome.status).toBe("canceled");
    expect(outcome.steps.map((s) => s.status)).toEqual(["passed", "error", "skipped"]);
    expect(outcome.steps[1].error).toBe("canceled");
    // The busy-looping thread itself is gone shortly after, not just forgotten.
    expect(await stopped.promise).toBeLessThan(4000);
    const next = makeJob("next", [["echo"]]);
    expect((await pool.submit(next, limits(next)).done).status).toBe("completed");
  });

  test("cancel after the job ended changes nothing", async () => {
    const pool = await startPool(1);
    const job = makeJob("x", [["echo"]]);
    const handle = pool.submit(job, limits(job));
    const outcome = await handle.done;
    handle.cancel();
    expect(outcome.status).toBe("completed");
    expect(pool.stats()).toEqual({ size: 1, capacity: 2, busy: 0, queued: 0, pipelined: 0 });
  });
});

describe("close", () => {
  test("lets a running job finish, cancels queued ones with 'shutdown', then refuses jobs", async () => {
    const pool = await startPool(1);
    const running = makeJob("a", [["sleep", { ms: 100 }], ["echo"]]);
    const queued = makeJob("b", [["echo"]]);
    const { handle: h1, started } = submitAndWaitStart(pool, running, limits(running));
    const h2 = pool.submit(queued, limits(queued));
    await started;
    const closed = pool.close(5000);
    expect(await h2.done).toMatchObject({ status: "canceled", error: "shutdown" });
    expect((await h1.done).status).toBe("completed");
    await closed;
    expect(pool.stats().busy).toBe(0);
    const late = makeJob("c", [["echo"]]);
    expect(() => pool.submit(late, limits(late))).toThrow(PoolClosedError);
  });

  test("stops a job still running at the deadline", async () => {
    const pool = await startPool(1);
    const stuck = makeJob("a", [["sleep_forever"], ["echo"]]);
    const { handle, started } = submitAndWaitStart(pool, stuck, { stepTimeoutsMs: [Infinity, 5000] });
    await started;
    const t0 = performance.now();
    await pool.close(100);
    expect(performance.now() - t0).toBeLessThan(4000); // a watchdog: without the deadline, never
    const outcome = await handle.done;
    expect(outcome).toMatchObject({ status: "canceled", error: "shutdown" });
    expect(outcome.steps.map((s) => s.status)).toEqual(["error", "skipped"]);
  });
});

test("a callback that throws is reported and does not break the pool", async () => {
  const events: PoolEvent[] = [];
  const pool = await startPool(1, { onEvent: (e) => events.push(e) });
  const job = makeJob("x", [["echo"]]);
  const outcome = await pool.submit(
    job,
    limits(job, 5000, {
      onStepStart: () => {
        throw new Error("db is locked");
      },
    }),
  ).done;
  expect(outcome.status).toBe("completed");
  expect(events).toContainEqual({ type: "callback_error", jobId: job.jobId, message: "db is locked" });
});

test("the worker URL can be given as a string", async () => {
  const pool = new WorkerPool({ size: 1, workerUrl: TEST_WORKER.href });
  pools.push(pool);
  await pool.ready();
  const job = makeJob("s", [["echo"]]);
  expect(echoed(await pool.submit(job, limits(job)).done).text).toBe("s");
});
