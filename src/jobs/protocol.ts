// Messages between the main thread (src/jobs/pool.ts) and a validation worker (src/jobs/worker.ts).
// Keep them small: ids and small values, the submission bytes transferred (not copied) once.
// And keep them few: each message wakes the other thread (~30 µs a round trip, measured), so a job
// whose steps all run costs one `run` in and one `step_end` (with `end`) out. docs/execution.md.
import type { FileType, Finding } from "../validators/types.ts";

export const STEP_STATUSES = ["pending", "running", "passed", "failed", "skipped", "error"] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export interface JobStep {
  /** Cache key of the compiled config, e.g. `${stepId}:${workflowVersion}`. */
  key: string;
  validator: string;
  /**
   * Omitted when the pool believes this worker already holds `key`; a worker that evicted it
   * answers `missing_config` and the pool replies with a `config` message (the bytes stay put).
   */
  config?: unknown;
  maxFindings: number;
}

export interface RunJob {
  jobId: string;
  bytes: ArrayBuffer;
  charset: string;
  fileType: FileType;
  filename: string | null;
  failFast: boolean;
  steps: JobStep[];
  /**
   * A job handed to a busy worker: a cell shared with the pool, 0 until one side takes the job.
   * The worker sets 1 as it starts it; the pool sets 2 when another worker takes it over
   * (pool.ts #steal) or the job is canceled (#drop), and the worker then skips it and answers
   * `dropped`. Compare-and-swap on both sides: exactly one of them decides, whatever the order
   * their messages arrive in (a cancel that finds 1 stops the worker instead).
   */
  claim?: Int32Array<SharedArrayBuffer>;
}

export const CLAIM_FREE = 0;
export const CLAIM_STARTED = 1;
export const CLAIM_TAKEN = 2;

export interface StepOutcome {
  status: Exclude<StepStatus, "pending" | "running">;
  findings: Finding[];
  truncated: boolean;
  durationMs: number;
  /** Set when status is "error": what went wrong, for people. */
  error?: string;
}

/**
 * A worker runs its jobs one at a time in the order received; a `run` that arrives while it is busy
 * waits in the worker (the pool pipelines small jobs so a worker never idles between two).
 * `drop` asks it to forget a job it has not started; it answers `dropped`, or nothing if it had
 * already started the job (whose messages then follow as usual). A job whose `claim` the pool took
 * is answered `dropped` when the worker comes to it, drop or no drop.
 */
export type ToWorker =
  /** `maxHeapBytes`: the pool's bound of the worker's heap as this job is sent (heap.ts); none if absent. */
  | { type: "run"; job: RunJob; maxHeapBytes?: number }
  | { type: "config"; jobId: string; key: string; config: unknown }
  | { type: "drop"; jobId: string };

/**
 * Nothing announces a start: a job starts when the worker's previous one ended (or on receipt),
 * step 0 with it, and `step_end` of step i starts step i+1 unless it carries `end`. The pool derives
 * its onStepStart calls and time limits from that. `step_end` comes only for steps that ran (the
 * pool marks the rest skipped); `run_end` only for a job with no steps. A `step_end` whose step
 * left XPath expressions in the worker for good (its compile, or parse trees its run made) carries
 * `retained`, the worker's total of them so far (CompiledValidator.retains): past a bound the pool
 * replaces it. `heap` comes after a job's end when the worker keeps more heap than the `run`'s
 * `maxHeapBytes`, once (heap.ts), before it starts its next job: the pool replaces it too.
 */
export type FromWorker =
  | { type: "ready" }
  | { type: "step_end"; jobId: string; index: number; outcome: StepOutcome; end?: true; retained?: number }
  | { type: "run_end"; jobId: string }
  | { type: "missing_config"; jobId: string; key: string }
  | { type: "dropped"; jobId: string }
  | { type: "heap"; bytes: number }
  /** The loop itself failed (e.g. a finding that cannot be cloned): the pool replaces the worker. */
  | { type: "fatal"; message: string };
