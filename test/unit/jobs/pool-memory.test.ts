// The pool's memory bound (src/jobs/memory.ts): past the limit the step that has run longest is
// stopped, one at a time. The process's memory is the test's own number here (memoryProbe), so
// the test decides when the limit is passed; test/schematron-memory.test.ts passes it for real.
import { afterEach, describe, expect, test } from "bun:test";
import type { PoolEvent } from "../../../src/jobs/pool.ts";
import { closePools, limits, makeJob, startPool, submitAndWaitStart } from "./pool-helpers.ts";

afterEach(closePools);

const MB = 1048576;
/** Resolves once `ok()` holds (checked every 10 ms; bounded by the test's timeout). */
async function until(ok: () => boolean) {
  while (!ok()) await Bun.sleep(10);
}
const WHY = "the server's memory passed its limit of 100 MB while this step ran: stopped";

describe("memory limit", () => {
  test("the step that has run longest is stopped; the one beside it and the next job go on", async () => {
    let memory = 10 * MB;
    let looks = 0;
    const events: PoolEvent[] = [];
    const pool = await startPool(2, {
      memoryLimitBytes: 100 * MB,
      memoryProbe: () => {
        looks++;
        return memory;
      },
      onEvent: (e) => events.push(e),
    });
    const hog = makeJob("hog", [["echo"], ["sleep_forever"], ["echo"]]);
    const first = submitAndWaitStart(pool, hog, limits(hog, 60_000), 1);
    await first.started;
    const other = makeJob("other", [["sleep_forever"]]);
    const second = submitAndWaitStart(pool, other, limits(other, 60_000));
    await second.started;
    memory = 200 * MB;
    const outcome = await first.handle.done;
    memory = 10 * MB; // its worker's heap went with it
    expect(outcome.status).toBe("crashed");
    expect(outcome.error).toBe(WHY);
    expect(outcome.steps.map((s) => [s.status, s.error ?? null])).toEqual([
      ["passed", null],
      ["error", WHY],
      ["skipped", null],
    ]);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "worker_exit", reason: "memory", jobId: hog.jobId }),
    );
    // The other step was not touched: after more looks of the watch, it ends by its own cancel.
    const seen = looks;
    await until(() => looks >= seen + 3);
    second.handle.cancel("test over");
    expect((await second.handle.done).status).toBe("canceled");
    expect(events.filter((e) => e.type === "worker_exit" && e.reason === "memory")).toHaveLength(1);
    // The stopped worker was replaced: the pool serves the next job.
    const next = makeJob("next", [["echo"]]);
    expect((await pool.submit(next, limits(next)).done).status).toBe("completed");
  });

  test("still over once the stopped worker has ended: the next longest step is stopped too", async () => {
    const pool = await startPool(2, { memoryLimitBytes: 100 * MB, memoryProbe: () => 200 * MB });
    const a = makeJob("a", [["sleep_forever"]]);
    const b = makeJob("b", [["sleep_forever"]]);
    const first = submitAndWaitStart(pool, a, limits(a, 60_000));
    await first.started;
    const second = submitAndWaitStart(pool, b, limits(b, 60_000));
    await second.started;
    const [oa, ob] = await Promise.all([first.handle.done, second.handle.done]);
    expect([oa.error, ob.error]).toEqual([WHY, WHY]);
  });

  test("under the limit nothing is stopped", async () => {
    let looks = 0;
    const pool = await startPool(1, {
      memoryLimitBytes: 100 * MB,
      memoryProbe: () => {
        looks++;
        return 99 * MB;
      },
    });
    const job = makeJob("x", [["sleep_forever"]]);
    const run = submitAndWaitStart(pool, job, limits(job, 60_000));
    await run.started;
    // Several looks of the watch pass; then the test ends the step itself.
    const seen = looks;
    await until(() => looks >= seen + 3);
    run.handle.cancel("enough");
    expect((await run.handle.done).status).toBe("canceled");
  });
});
