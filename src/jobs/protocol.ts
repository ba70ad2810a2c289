// Messages between the main thread (src/jobs/pool.ts) and a validation worker (src/jobs/worker.ts).
// Keep them small: ids and small values, the submission bytes transferred (not copied) once.
import type { FileType, Finding } from "../validators/types.ts";

export type StepStatus = "pending" | "running" | "passed" | "failed" | "skipped" | "error";

export interface JobStep {
  /** Cache key of the compiled config, e.g. `${stepId}:${workflowVersion}`. */
  key: string;
  validator: string;
  /** Omitted when the pool knows this worker already compiled `key`. */
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

export type ToWorker = { type: "run"; job: RunJob };

export type FromWorker =
  | { type: "ready" }
  | { type: "step_start"; jobId: string; index: number }
  | { type: "step_end"; jobId: string; index: number; outcome: StepOutcome }
  | { type: "run_end"; jobId: string }
  | { type: "missing_config"; jobId: string; key: string };
