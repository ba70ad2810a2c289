// A job canceled while handed over to a busy worker that has in fact started it already (the pool
// has not heard yet): the cancel reads the job's claim cell (protocol.ts) and stops that worker as
// it stops a running job, instead of sending a `drop` the worker hears too late, which left the job
// running to its time limit on a worker nobody listened to (docs/execution.md). Real workers; the
// race is held still by blocking this thread while a worker moves on (gateFiles().wait).
import { afterEach, expect, test } from "bun:test";
import type { PoolEvent } from "../../../src/jobs/pool.ts";
import { until } from "../../helpers/fixtures.ts";
import { closePools, DEAF_WORKER, echoed, gateFiles, limits, makeJob, startPool } from "./pool-helpers.ts";

afterEach(closePools);
const gates = gateFiles();

const gated = (name: string) =>
  makeJob(name, [["gate", { path: gates.path(name), mark: gates.path(`${name}-started`) }]]);

function watch() {
  const events: PoolEvent[] = [];
  const calls: string[] = [];
  return {
    events,
    calls,
    exits: () => events.filter((e) => e.type === "worker_exit"),
    onEvent: (e: PoolEvent) => events.push(e),
    callbacks: {
      onStepStart: (i: number) => calls.push(`start ${i}`),
      onStepEnd: (i: number) => calls.push(`end ${i}`),
    },
  };
}

test("started behind a job whose end the pool has not heard: that worker is stopped once it has", async () => {
  const w = watch();
  const pool = await startPool(1, { onEvent: w.onEvent });
  const before = makeJob("before", [["echo"]]);
  const firstWorker = echoed(await pool.submit(before, limits(before)).done).workerId;
  const ahead = gated("ahead");
  const next = gated("next"); // its gate never opens: it would run until stopped
  const ha = pool.submit(ahead, limits(ahead, Infinity));
  const hn = pool.submit(next, limits(next, Infinity, w.callbacks));
  gates.open("ahead");
  gates.wait("next-started"); // `ahead` ended on the worker, `next` started; the pool knows neither
  expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 1 });
  hn.cancel("user asked");
  const after = makeJob("after", [["echo"]]);
  const h3 = pool.submit(after, limits(after));
  expect(await hn.done).toEqual({
    status: "canceled",
    error: "user asked",
    steps: [expect.objectContaining({ status: "skipped" })],
  });
  // The job ahead's result was on its way: it is not lost to the stop.
  expect((await ha.done).status).toBe("completed");
  await until(() => w.exits().length > 0, "the worker running the canceled job to be stopped", 10_000);
  expect(w.exits()).toEqual([{ type: "worker_exit", worker: 0, reason: "canceled", jobId: next.jobId }]);
  const last = echoed(await h3.done);
  expect(last.workerId).not.toBe(firstWorker);
  expect(w.calls).toEqual([]);
  expect(pool.stats()).toMatchObject({ busy: 0, pipelined: 0, queued: 0 });
});

test("asked back for another org, started before the drop came, then canceled: its worker is stopped", async () => {
  // x2 is handed over behind x1; x1 ends and x2 starts while this thread is blocked; then y1 comes
  // and x2 is asked back (too late). The pool hears x1's end: x2 is its worker's first job, still
  // "handed over" for the pool, which waits for the worker to say whether it started it.
  const w = watch();
  const pool = await startPool(1, { onEvent: w.onEvent });
  const [x1, x2] = [gated("x1"), gated("x2")];
  const y1 = makeJob("y1", [["echo"]]);
  const hx1 = pool.submit(x1, limits(x1, Infinity, { org: "x" }));
  const hx2 = pool.submit(x2, limits(x2, Infinity, { org: "x", ...w.callbacks }));
  gates.open("x1");
  gates.wait("x2-started");
  const hy1 = pool.submit(y1, limits(y1, 5000, { org: "y" }));
  expect((await hx1.done).status).toBe("completed");
  expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 2, queued: 0 });
  hx2.cancel("user asked");
  expect(await hx2.done).toEqual({
    status: "canceled",
    error: "user asked",
    steps: [expect.objectContaining({ status: "skipped" })],
  });
  expect(w.exits()).toEqual([{ type: "worker_exit", worker: 0, reason: "canceled", jobId: x2.jobId }]);
  // y1, handed over behind x2, runs on the replacement instead of behind a job that never ends.
  expect(echoed(await hy1.done).text).toBe("y1");
  expect(w.calls).toEqual([]);
});

test("canceled before its worker came to it: the worker skips it, even deaf to the drop, and is not stopped", async () => {
  // The cancel takes the claim: the worker skips the job when it comes to it, drop or no drop.
  const w = watch();
  const pool = await startPool(1, { onEvent: w.onEvent, workerUrl: DEAF_WORKER });
  const ahead = gated("ahead");
  const next = gated("next");
  const after = makeJob("after", [["echo"]]);
  const ha = pool.submit(ahead, limits(ahead, Infinity));
  const hn = pool.submit(next, limits(next, Infinity, w.callbacks));
  gates.wait("ahead-started");
  hn.cancel("user asked");
  const h3 = pool.submit(after, limits(after));
  expect((await hn.done).status).toBe("canceled");
  gates.open("ahead");
  expect((await ha.done).status).toBe("completed");
  expect(echoed(await h3.done).validations).toBe(1); // `ahead` only: `next` never ran
  expect(w.exits()).toEqual([]);
  expect(w.calls).toEqual([]);
});
