// What pipelining and the combined messages promise (docs/execution.md): a job costs one message
// each way, a worker holds its next job, a job's limits start when it does, and a job waiting in a
// worker survives that worker's death and can be canceled without it. Real Workers, no sleeps.
import { afterEach, describe, expect, test } from "bun:test";
import {
  PIPELINE_MAX_BYTES,
  type PoolEvent,
  type RunOutcome,
  type RunStatus,
} from "../../../src/jobs/pool.ts";
import {
  closePools,
  DEAF_WORKER,
  echoed,
  gateFiles,
  limits,
  makeJob,
  type StepSpec,
  startPool,
} from "./pool-helpers.ts";
import { until } from "../../helpers/fixtures.ts";

afterEach(closePools);

const gates = gateFiles();

function traffic(outcome: RunOutcome) {
  return JSON.parse(outcome.steps[0].findings[0].message) as { received: number; posted: number };
}

const exits = (events: PoolEvent[]) => events.filter((e) => e.type === "worker_exit");

describe("messages", () => {
  test("a job costs one message to the worker and one back per step, the last carrying its end", async () => {
    const pool = await startPool(1);
    const jobs = Array.from({ length: 10 }, (_, n) => makeJob(`doc ${n}`, [["echo"]]));
    await Promise.all(jobs.map((j) => pool.submit(j, limits(j)).done));
    const probe = makeJob("probe", [["traffic"]]);
    // Received: 10 runs and the probe's; posted: `ready` and one per job.
    expect(traffic(await pool.submit(probe, limits(probe)).done)).toEqual({ received: 11, posted: 11 });

    const three = makeJob("three", [
      ["echo", {}, "k"],
      ["echo", {}, "k"],
      ["echo", {}, "k"],
    ]);
    await pool.submit(three, limits(three)).done;
    const again = makeJob("probe", [["traffic"]]);
    expect(traffic(await pool.submit(again, limits(again)).done)).toEqual({ received: 13, posted: 15 });
  });

  test("onStepStart and onStepEnd fire in order for every step, across jobs waiting in a worker", async () => {
    const pool = await startPool(1);
    const events: string[] = [];
    const specs: [string, StepSpec[]][] = [
      ["a", [["echo"], ["echo"], ["echo"]]],
      ["b", [["echo"], ["fail"], ["echo"]]], // fail-fast: its third step never starts
      ["c", [["echo"]]],
    ];
    const handles = specs.map(([name, steps]) => {
      const job = makeJob(name, steps);
      return pool.submit(
        job,
        limits(job, 5000, {
          onStepStart: (i) => events.push(`${name}${i} start`),
          onStepEnd: (i, o) => events.push(`${name}${i} ${o.status}`),
        }),
      );
    });
    expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 1, queued: 1 });
    await Promise.all(handles.map((h) => h.done));
    expect(events).toEqual([
      "a0 start",
      "a0 passed",
      "a1 start",
      "a1 passed",
      "a2 start",
      "a2 passed",
      "b0 start",
      "b0 passed",
      "b1 start",
      "b1 failed",
      "c0 start",
      "c0 passed",
    ]);
  });
});

describe("a job waiting in a worker", () => {
  test("its time limit starts when it starts, not when it was handed over", async () => {
    const pool = await startPool(1);
    const ahead = makeJob("ahead", [["sleep", { ms: 300 }]]);
    const stuck = makeJob("stuck", [["sleep_forever"]]);
    const t0 = performance.now();
    let aheadEnded = 0;
    let stuckStarted = 0;
    const first = pool.submit(
      ahead,
      limits(ahead, 5000, { onStepEnd: () => (aheadEnded = performance.now()) }),
    );
    const second = pool.submit(
      stuck,
      limits(stuck, 150, { onStepStart: () => (stuckStarted = performance.now()) }),
    );
    expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 1 });
    expect((await first.done).status).toBe("completed");
    const outcome = await second.done;
    const finished = performance.now();
    expect(outcome).toMatchObject({ status: "timed_out", error: "step exceeded its time limit of 150 ms" });
    expect(stuckStarted).toBeGreaterThanOrEqual(aheadEnded);
    expect(finished - stuckStarted).toBeGreaterThanOrEqual(140);
    expect(finished - stuckStarted).toBeLessThan(4000); // a watchdog (the job ahead had 5 s)
    expect(finished - t0).toBeGreaterThanOrEqual(300 + 140);
  });

  // The crashing job's limit is long: a worker exiting at once on a busy machine may take longer
  // than 100 ms to be seen gone, and would end timed_out instead.
  test.each<[string, StepSpec[], RunStatus, number]>([
    ["times out", [["sleep_forever"]], "timed_out", 100],
    ["crashes", [["exit"]], "crashed", 30_000],
  ])("runs on the replacement worker when the job ahead %s", async (_, aheadSteps, status, limitMs) => {
    const events: PoolEvent[] = [];
    const pool = await startPool(1, { onEvent: (e) => events.push(e) });
    const before = makeJob("before", [["echo"]]);
    const firstWorker = echoed(await pool.submit(before, limits(before)).done).workerId;
    const ahead = makeJob("ahead", aheadSteps);
    const next = makeJob("next, resubmitted", [["echo", { tag: "t" }]]);
    const h1 = pool.submit(ahead, limits(ahead, limitMs));
    const h2 = pool.submit(next, limits(next));
    expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 1 });
    expect((await h1.done).status).toBe(status);
    const outcome = await h2.done;
    expect(outcome.status).toBe("completed");
    expect(echoed(outcome)).toMatchObject({ text: "next, resubmitted", tag: "t" });
    expect(echoed(outcome).workerId).not.toBe(firstWorker);
    expect(exits(events)).toEqual([expect.objectContaining({ reason: status, jobId: ahead.jobId })]);
  });

  test("runs on the replacement worker when the running job ahead is canceled", async () => {
    const pool = await startPool(1);
    const ahead = makeJob("ahead", [["sleep_forever"]]);
    const next = makeJob("next", [["echo"]]);
    const h1 = pool.submit(ahead, limits(ahead, Infinity));
    const h2 = pool.submit(next, limits(next));
    h1.cancel("stop");
    expect(await h1.done).toMatchObject({ status: "canceled", error: "stop" });
    expect(echoed(await h2.done).text).toBe("next");
  });

  test("canceled: the worker keeps running the job ahead and never runs the canceled one", async () => {
    const events: PoolEvent[] = [];
    const pool = await startPool(1, { onEvent: (e) => events.push(e) });
    const before = makeJob("before", [["echo"]]);
    const firstWorker = echoed(await pool.submit(before, limits(before)).done).workerId;
    // Long enough that the cancel, posted in this same turn, reaches the worker while it runs.
    const ahead = makeJob("ahead", [["sleep", { ms: 400 }]]);
    const dropped = makeJob("dropped", [["echo"], ["echo"]]);
    const after = makeJob("after", [["echo"]]);
    const calls: number[] = [];
    const h1 = pool.submit(ahead, limits(ahead));
    const h2 = pool.submit(
      dropped,
      limits(dropped, 5000, { onStepStart: (i) => calls.push(i), onStepEnd: (i) => calls.push(i) }),
    );
    const h3 = pool.submit(after, limits(after));
    h2.cancel("user asked");
    const outcome = await h2.done;
    expect(outcome).toMatchObject({ status: "canceled", error: "user asked" });
    expect(outcome.steps.map((s) => s.status)).toEqual(["skipped", "skipped"]);
    expect((await h1.done).status).toBe("completed");
    const last = echoed(await h3.done);
    expect(last.workerId).toBe(firstWorker);
    expect(last.validations).toBe(2); // "before" and "ahead": the canceled job never ran
    expect(calls).toEqual([]);
    expect(exits(events)).toEqual([]);
  });

  test("is taken over by a worker that becomes idle, not held behind a job that runs on", async () => {
    // Both workers busy with jobs the test ends; `next` is handed to the first of the two (the
    // pool picks the first of equally loaded workers). The other one is freed: `next` runs there
    // while the job ahead of it still runs. It waited for that job before, however long it ran.
    const pool = await startPool(2);
    const a = makeJob("a", [["gate", { path: gates.path("a") }]]);
    const b = makeJob("b", [["gate", { path: gates.path("b") }]]);
    const next = makeJob("next", [["echo"]]);
    const ha = pool.submit(a, limits(a, Infinity));
    const hb = pool.submit(b, limits(b, Infinity));
    const hn = pool.submit(next, limits(next));
    expect(pool.stats()).toMatchObject({ busy: 2, pipelined: 1, queued: 0 });
    gates.open("b");
    expect((await hb.done).status).toBe("completed");
    const moved = await hn.done;
    expect(echoed(moved).text).toBe("next");
    expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 0, queued: 0 });
    gates.open("a");
    expect((await ha.done).status).toBe("completed");
  });

  test("taken over: of two handed-over jobs, the one of the org with fewer jobs running", async () => {
    // Three workers: two on org x's jobs, one on y's. Then x's third job and y's second are handed
    // over (to the first two workers, least loaded first). y's worker is freed: it takes y's job,
    // whose org now has none running, not x's, handed over first (which took it before; y2 then
    // waited behind x2's gate).
    const pool = await startPool(3);
    const job = (name: string) => makeJob(name, [["gate", { path: gates.path(name) }]]);
    const [x1, x2, y1, x3] = ["x1", "x2", "y1", "x3"].map(job);
    const y2 = makeJob("y2", [["echo"]]);
    const starts: string[] = [];
    const submit = (j: typeof y2, org: string) => {
      const name = new TextDecoder().decode(j.bytes);
      return pool.submit(j, limits(j, Infinity, { org, onStepStart: () => starts.push(name) }));
    };
    submit(x1, "x");
    submit(x2, "x");
    const hy1 = submit(y1, "y");
    submit(x3, "x");
    const hy2 = submit(y2, "y");
    expect(pool.stats()).toMatchObject({ busy: 3, pipelined: 2, queued: 0 });
    gates.open("y1");
    expect((await hy1.done).status).toBe("completed");
    expect(echoed(await hy2.done).text).toBe("y2");
    // …and once y2 has ended, that worker takes x3 the same way.
    expect(starts).toEqual(["x1", "x2", "y1", "y2", "x3"]);
    expect(pool.stats()).toMatchObject({ busy: 3, pipelined: 0 });
    for (const name of ["x1", "x2", "x3"]) gates.open(name);
  });

  test("not taken over once its worker has started it, though the pool has not heard yet", async () => {
    // The main thread blocked in a loop (it hears no worker) while d ends on the first worker,
    // then b on the second, which starts `next`. When the pool hears d's end, the first worker
    // is idle and `next`, handed over behind b, looks free to take; its claim says it started.
    // (d is over PIPELINE_MAX_BYTES, so `next` is handed to b's worker.)
    const pool = await startPool(2);
    const wait = gates.wait;
    // d's second step marks its start with its gate open: d ends with it, no wait.
    const d = makeJob("d".repeat(PIPELINE_MAX_BYTES + 1), [
      ["gate", { path: gates.path("d"), mark: gates.path("d-started") }],
      ["gate", { path: gates.path("d"), mark: gates.path("d-ending") }],
    ]);
    const b = makeJob("b", [["gate", { path: gates.path("b"), mark: gates.path("b-started") }]]);
    const next = makeJob("next", [["gate", { path: gates.path("next"), mark: gates.path("next-started") }]]);
    const hd = pool.submit(d, limits(d, Infinity));
    const hb = pool.submit(b, limits(b, Infinity));
    const hn = pool.submit(next, limits(next, Infinity));
    expect(pool.stats()).toMatchObject({ busy: 2, pipelined: 1 });
    wait("d-started");
    wait("b-started");
    gates.open("d");
    wait("d-ending");
    gates.open("b");
    wait("next-started");
    await Promise.all([hb.done, hd.done]);
    // `next` runs where it started, once: one worker busy, nothing handed over.
    expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 0, queued: 0 });
    gates.open("next");
    expect((await hn.done).status).toBe("completed");
  });

  test("taken over: the busy worker never runs its copy, even deaf to the drop", async () => {
    // The deaf worker never hears the drop: the job's claim, taken by the pool, makes it skip its
    // copy after `a` (protocol.ts). Its skip is answered `dropped`, and the pool's books stay right.
    const pool = await startPool(2, { workerUrl: DEAF_WORKER });
    const a = makeJob("a", [["gate", { path: gates.path("a") }]]);
    const b = makeJob("b", [["gate", { path: gates.path("b") }]]);
    const next = makeJob("next", [["echo"]]);
    const calls: string[] = [];
    const ha = pool.submit(a, limits(a, Infinity));
    pool.submit(b, limits(b, Infinity));
    const hn = pool.submit(
      next,
      limits(next, 5000, {
        onStepStart: (i) => calls.push(`start ${i}`),
        onStepEnd: (i, o) => calls.push(`end ${i} ${o.status}`),
      }),
    );
    gates.open("b");
    const moved = echoed(await hn.done);
    gates.open("a");
    expect((await ha.done).status).toBe("completed");
    // Its copy of `next` skipped and said so; then both workers are idle, and two probes sent at
    // once go one to each. a's worker has run `a` only.
    await until(() => pool.stats().busy === 0, "a's worker to drop its copy of next");
    const probes = [makeJob("p1", [["echo"]]), makeJob("p2", [["echo"]])];
    const seen = (await Promise.all(probes.map((p) => pool.submit(p, limits(p)).done))).map((o) => echoed(o));
    const aWorker = seen.find((s) => s.workerId !== moved.workerId);
    expect(aWorker?.validations).toBe(1);
    expect(calls).toEqual(["start 0", "end 0 passed"]);
    expect(pool.stats()).toMatchObject({ busy: 0, pipelined: 0, queued: 0 });
  });

  test("one whose config the worker evicted gets it again", async () => {
    // The test worker caches 2 configs; the pool assumes 256, so the third key evicts the first.
    const pool = await startPool(1);
    const fill = makeJob(
      "fill",
      ["k1", "k2", "k3"].map((key): StepSpec => ["echo", { tag: key }, key]),
      false,
    );
    const again = makeJob("again", [["echo", { tag: "k1" }, "k1"]]);
    const h1 = pool.submit(fill, limits(fill));
    const h2 = pool.submit(again, limits(again));
    expect(pool.stats().pipelined).toBe(1);
    expect((await h1.done).status).toBe("completed");
    expect(echoed(await h2.done)).toMatchObject({ tag: "k1", text: "again" });
  });
});

describe("capacity", () => {
  test("is size × jobsPerWorker; jobsPerWorker 1 hands a worker one job at a time", async () => {
    expect((await startPool(2)).capacity).toBe(4);
    const pool = await startPool(1, { jobsPerWorker: 1 });
    const jobs = [makeJob("a", [["sleep", { ms: 20 }]]), makeJob("b", [["echo"]])];
    const handles = jobs.map((j) => pool.submit(j, limits(j)));
    expect(pool.stats()).toEqual({ size: 1, capacity: 1, busy: 1, queued: 1, pipelined: 0 });
    for (const h of handles) expect((await h.done).status).toBe("completed");
  });

  test(`a job over ${PIPELINE_MAX_BYTES} bytes waits in the pool for an idle worker, transferred whole`, async () => {
    const pool = await startPool(1);
    const ahead = makeJob("ahead", [["sleep", { ms: 30 }]]);
    const text = "x".repeat(PIPELINE_MAX_BYTES + 1);
    const large = makeJob(text, [["echo"]]);
    const small = makeJob("small", [["echo"]]);
    pool.submit(ahead, limits(ahead));
    const h2 = pool.submit(large, limits(large));
    const h3 = pool.submit(small, limits(small));
    // FIFO: the small job behind the large one is not handed over before it.
    expect(pool.stats()).toMatchObject({ busy: 1, queued: 2, pipelined: 0 });
    expect(large.bytes.detached).toBe(true);
    expect(echoed(await h2.done).text).toBe(text);
    expect(echoed(await h3.done).text).toBe("small");
  });

  test("a small job is not handed to a worker busy with a large one", async () => {
    const pool = await startPool(1);
    const large = makeJob("x".repeat(PIPELINE_MAX_BYTES + 1), [["sleep", { ms: 30 }]]);
    const small = makeJob("small", [["echo"]]);
    const h1 = pool.submit(large, limits(large));
    const h2 = pool.submit(small, limits(small));
    expect(pool.stats()).toMatchObject({ busy: 1, queued: 1, pipelined: 0 });
    expect((await h1.done).status).toBe("completed");
    expect(echoed(await h2.done).text).toBe("small");
  });
});
