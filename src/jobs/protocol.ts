// Messages between the main thread (src/jobs/pool.ts) and a validation worker (src/jobs/worker.ts).
// Keep them small: ids and small values, the submission bytes transferred (not copied) once.
import type { FileType, Finding } from "../validators/types.ts";

export type StepStatus = "pending" | "running" | "passed" | "failed" | "skipped" | "error";

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
}

export interface StepOutcome {
  status: Exclude<StepStatus, "pending" | "running">;
  findings: Finding[];
  truncated: boolean;
  durationMs: number;
  /** Set when status is "error": what went wrong, for people. */
  error?: string;
}

export type ToWorker =
  | { type: "run"; job: RunJob }
  | { type: "config"; jobId: string; key: string; config: unknown };

/** A worker runs one job at a time; it posts `step_end` only for steps it ran (the pool marks the
 * rest skipped) and `run_end` once the job is over. */
export type FromWorker =
  | { type: "ready" }
  | { type: "step_start"; jobId: string; index: number }
  | { type: "step_end"; jobId: string; index: number; outcome: StepOutcome }
  | { type: "run_end"; jobId: string }
  | { type: "missing_config"; jobId: string; key: string }
  /** The loop itself failed (e.g. a finding that cannot be cloned): the pool replaces the worker. */
  | { type: "fatal"; message: string };
