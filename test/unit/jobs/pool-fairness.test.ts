// The pool starts waiting jobs fair across orgs (src/jobs/fair-queue.ts), and a job handed to a
// busy worker ahead of time is asked back for an org with nothing running (docs/execution.md).
import { afterEach, describe, expect, test } from "bun:test";
import type { OrgKey } from "../../../src/jobs/pool.ts";
import { closePools, DEAF_WORKER, limits, makeJob, type StepSpec, startPool } from "./pool-helpers.ts";

afterEach(closePools);

/** Submits the jobs in order (synchronously: the first is still running when the last arrives). */
function submitAll(pool: Awaited<ReturnType<typeof startPool>>, jobs: [OrgKey, string, StepSpec[]][]) {
  const events: string[] = [];
  const handles = jobs.map(([org, name, steps]) => {
    const job = makeJob(name, steps);
    return pool.submit(
      job,
      limits(job, 10_000, {
        org,
        onStepStart: () => events.push(`${name} start`),
        onStepEnd: (_, o) => events.push(`${name} ${o.status}`),
      }),
    );
  });
  return { events, done: Promise.all(handles.map((h) => h.done)) };
}

// The first job holds the only worker while the rest are submitted and the recall goes out.
const HOLD: StepSpec[] = [["sleep", { ms: 300 }]];
const QUICK: StepSpec[] = [["echo"]];

describe("fair pick", () => {
  test("another org's job starts before the 2nd job of the org whose job runs, even one handed over", async () => {
    const pool = await startPool(1);
    const { events, done } = submitAll(pool, [
      ["a", "a1", HOLD],
      ["a", "a2", QUICK],
      ["a", "a3", QUICK],
      ["b", "b1", QUICK],
    ]);
    const outcomes = await done;
    expect(outcomes.map((o) => o.status)).toEqual(["completed", "completed", "completed", "completed"]);
    expect(events.filter((e) => e.endsWith("start"))).toEqual([
      "a1 start",
      "b1 start",
      "a2 start",
      "a3 start",
    ]);
  });

  test("jobs without an org keep their order", async () => {
    const pool = await startPool(1);
    const job = (name: string, steps: StepSpec[]) => {
      const j = makeJob(name, steps);
      return { j, h: pool.submit(j, limits(j, 10_000, { onStepStart: () => events.push(name) })) };
    };
    const events: string[] = [];
    const all = [job("x1", HOLD), job("x2", QUICK), job("x3", QUICK)];
    await Promise.all(all.map((x) => x.h.done));
    expect(events).toEqual(["x1", "x2", "x3"]);
  });

  test("a job asked back gets its whole time in all once it really starts", async () => {
    // b1 holds the worker until the job's limit stops it, so a2's limit, had it been counted from
    // its handover behind a1, would have run out before a2 started.
    const pool = await startPool(1, { runTimeoutMs: 1000 });
    const { events, done } = submitAll(pool, [
      ["a", "a1", HOLD],
      ["a", "a2", QUICK],
      ["a", "a3", QUICK],
      ["b", "b1", [["sleep_forever"]]],
    ]);
    const outcomes = await done;
    expect(outcomes.map((o) => o.status)).toEqual(["completed", "completed", "completed", "timed_out"]);
    expect(events.filter((e) => e.endsWith("start"))).toEqual([
      "a1 start",
      "b1 start",
      "a2 start",
      "a3 start",
    ]);
  });

  test("a job the worker started before the recall reached it counts as started, once", async () => {
    const pool = await startPool(1, { workerUrl: DEAF_WORKER });
    const { events, done } = submitAll(pool, [
      ["a", "a1", HOLD],
      ["a", "a2", QUICK],
      ["a", "a3", QUICK],
      ["b", "b1", QUICK],
    ]);
    const outcomes = await done;
    expect(outcomes.map((o) => o.status)).toEqual(["completed", "completed", "completed", "completed"]);
    expect(events).toEqual([
      "a1 start",
      "a1 passed",
      "a2 start",
      "a2 passed",
      "b1 start",
      "b1 passed",
      "a3 start",
      "a3 passed",
    ]);
  });
});
