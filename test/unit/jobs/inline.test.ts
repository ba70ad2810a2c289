// The inline lane: which jobs it takes, that a passing job ends exactly as in a worker (the real
// worker entry point and the real json_schema validator on both sides), and that anything else is
// handed back for the pool.
import { afterEach, describe, expect, test } from "bun:test";
import { INLINE_MAX_BYTES, InlineRunner } from "../../../src/jobs/inline.ts";
import { type SubmitOptions, WorkerPool } from "../../../src/jobs/pool.ts";
import type { RunJob } from "../../../src/jobs/protocol.ts";
import { makeJob } from "./pool-helpers.ts";

const WORKER = new URL("../../../src/jobs/worker.ts", import.meta.url);
const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close(0)));
});

const ORDER = {
  type: "object",
  required: ["id", "qty"],
  properties: {
    id: { type: "string", pattern: "^ord-[0-9]{6}$" },
    qty: { type: "integer", minimum: 1 },
    email: { type: "string", format: "email" },
  },
};
const VALID = '{"id":"ord-000001","qty":2,"email":"ada@example.com"}';

/** A JSON job of json_schema steps (the pool tests' builder, retyped). */
function jsonJob(doc: string, schemas: Record<string, unknown>[], extra: Partial<RunJob> = {}): RunJob {
  const job = makeJob(
    doc,
    schemas.map((schema) => ["json_schema", { schema }]),
  );
  return { ...job, fileType: "JSON", ...extra };
}

/** Submit with callbacks that record their order. */
function recorded(job: RunJob, ms = 5000) {
  const events: string[] = [];
  const opts: SubmitOptions = {
    stepTimeoutsMs: job.steps.map(() => ms),
    onStepStart: (i) => events.push(`start ${i}`),
    onStepEnd: (i, o) => events.push(`end ${i} ${o.status}`),
  };
  return { events, opts };
}

describe("what the inline lane takes", () => {
  const inline = new InlineRunner();

  test("small UTF-8 JSON whose schemas validate in linear time", () => {
    expect(inline.accepts(jsonJob(VALID, [ORDER]))).toBe(true);
    expect(inline.accepts(jsonJob(VALID, [ORDER], { charset: "UTF8" }))).toBe(true);
  });

  test("not a schema heavier than the inline budget, nor any other kind of step", () => {
    expect(inline.accepts(jsonJob('"ab"', [ORDER, { type: "string", pattern: "^(a|b){1,600}$" }]))).toBe(
      false,
    );
    const job = jsonJob(VALID, [ORDER]);
    expect(inline.accepts({ ...job, steps: [{ ...job.steps[0], key: "x", validator: "syntax" }] })).toBe(
      false,
    );
  });

  test("never a CEL assertions step, however small the document: its cost depends on the rule", () => {
    const job = jsonJob(VALID, [ORDER]);
    const rules = [{ id: "r", expr: "data.qty > 0", message: "m" }];
    const cel = { ...job.steps[0], key: "cel", validator: "assertions", config: { rules } };
    expect(inline.accepts({ ...job, steps: [job.steps[0], cel] })).toBe(false);
  });

  test("not YAML, not another charset, not over INLINE_MAX_BYTES", () => {
    expect(inline.accepts(jsonJob("id: ord-000001", [ORDER], { fileType: "YAML" }))).toBe(false);
    expect(inline.accepts(jsonJob(VALID, [ORDER], { charset: "iso-8859-1" }))).toBe(false);
    const edge = `"${"a".repeat(INLINE_MAX_BYTES - 2)}"`;
    expect(inline.accepts(jsonJob(edge, [{ type: "string" }]))).toBe(true);
    expect(inline.accepts(jsonJob(`${edge} `, [{ type: "string" }]))).toBe(false);
  });
});

describe("a job run inline", () => {
  test("a passing job ends as in a worker, callbacks in the same order, bytes left alone", async () => {
    const pool = new WorkerPool({ size: 1, workerUrl: WORKER });
    pools.push(pool);
    await pool.ready();
    const inline = new InlineRunner();
    const zeroTimes = (o: Awaited<ReturnType<typeof pool.submit>["done"]>) => ({
      ...o,
      steps: o.steps.map((s) => ({ ...s, durationMs: 0 })),
    });
    const a = jsonJob(VALID, [ORDER, { type: "object" }]);
    const ra = recorded(a);
    const inWorker = zeroTimes(await pool.submit(a, ra.opts).done);
    const b = jsonJob(VALID, [ORDER, { type: "object" }]);
    const rb = recorded(b);
    const handle = inline.submit(b, rb.opts);
    expect(handle).not.toBeNull();
    expect(zeroTimes(await handle!.done)).toEqual(inWorker);
    expect(inWorker.steps.map((s) => s.status)).toEqual(["passed", "passed"]);
    expect(rb.events).toEqual(ra.events);
    expect(rb.events).toEqual(["start 0", "end 0 passed", "start 1", "end 1 passed"]);
    expect(b.bytes.detached).toBe(false);
    expect(inline.ran).toBe(1);
  });

  test("a failing document is handed back untouched, with no callback fired", () => {
    const inline = new InlineRunner();
    const job = jsonJob('{"id":"ord-12","qty":0}', [ORDER]);
    const r = recorded(job);
    expect(inline.submit(job, r.opts)).toBeNull();
    expect(inline.submit(jsonJob("{not json", [ORDER]), r.opts)).toBeNull();
    expect(r.events).toEqual([]);
    expect(job.bytes.detached).toBe(false);
    expect(inline.ran).toBe(0);
  });

  test("a job it does not accept is handed back", () => {
    const inline = new InlineRunner();
    const job = jsonJob('"ab"', [{ type: "string", pattern: "^(a|b){1,600}$" }]);
    expect(inline.submit(job, recorded(job).opts)).toBeNull();
  });

  test("a step over its time limit (judged afterwards) ends the run timed_out, later steps skipped", async () => {
    const spin = {
      bounded: () => true,
      compile: () => () => {
        const end = performance.now() + 15;
        while (performance.now() < end) {}
        return true;
      },
    };
    const inline = new InlineRunner({ spin });
    const job = jsonJob("{}", [{}, {}]);
    for (const s of job.steps) s.validator = "spin";
    const r = recorded(job);
    r.opts.stepTimeoutsMs = [5, 5000];
    const handle = inline.submit(job, r.opts)!;
    // Done when submit returns: the outcome is there without a turn, and `done` resolves to it.
    expect(r.events).toEqual(["start 0", "end 0 error"]);
    const outcome = await handle.done;
    expect(handle.outcome).toBe(outcome);
    const error = "step exceeded its time limit of 5 ms";
    expect(outcome.status).toBe("timed_out");
    expect(outcome.error).toBe(error);
    expect(outcome.steps[0]).toMatchObject({ status: "error", findings: [], error });
    expect(outcome.steps[1]).toEqual({ status: "skipped", findings: [], truncated: false, durationMs: 0 });
    expect(r.events).toEqual(["start 0", "end 0 error"]);
  });

  test("callbacks that throw do not break the run", async () => {
    const inline = new InlineRunner();
    const job = jsonJob(VALID, [ORDER]);
    const outcome = await inline.submit(job, {
      stepTimeoutsMs: [5000],
      onStepStart: () => {
        throw new Error("caller bug");
      },
      onStepEnd: () => {
        throw new Error("caller bug");
      },
    })!.done;
    expect(outcome).toEqual({
      status: "completed",
      steps: [{ status: "passed", findings: [], truncated: false, durationMs: outcome.steps[0].durationMs }],
    });
  });
});
