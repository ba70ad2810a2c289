// What the worker pool accepts and returns: the contract between src/jobs/pool.ts and its caller
// (the runs service, which owns the database). Worker messages live in protocol.ts.
import type { StepOutcome } from "./protocol.ts";

export type RunStatus = "completed" | "timed_out" | "canceled" | "crashed";

export interface RunOutcome {
  status: RunStatus;
  /** One per job step; steps that never ran are "skipped". */
  steps: StepOutcome[];
  /** Why the run did not complete; "shutdown" when the pool closed before it could finish. */
  error?: string;
}

export interface SubmitOptions {
  /** One per job step; a non-finite value means no limit. */
  stepTimeoutsMs: number[];
  onStepStart?(index: number): void;
  /** Called once for every step that started, including one ended by a limit, cancel or crash. */
  onStepEnd?(index: number, outcome: StepOutcome): void;
}

export interface SubmittedJob {
  done: Promise<RunOutcome>;
  /** A queued job leaves the queue; a running one has its worker terminated. No-op once done. */
  cancel(reason?: string): void;
}

export interface PoolStats {
  size: number;
  busy: number;
  queued: number;
}

export type PoolEvent =
  | { type: "worker_ready"; worker: number }
  | {
      type: "worker_exit";
      worker: number;
      reason: "crashed" | "timed_out" | "canceled" | "shutdown";
      jobId?: string;
      message?: string;
    }
  /** A worker we stopped has really ended, `ms` after we asked (native code can delay it). */
  | { type: "worker_stopped"; worker: number; ms: number }
  | { type: "callback_error"; jobId: string; message: string };

export interface WorkerPoolOptions {
  size: number;
  /** Build it from import.meta.url: in the compiled binary a relative path only works from the
   * project root. */
  workerUrl: URL | string;
  /** Jobs allowed to wait for a worker; beyond it submit throws PoolFullError. Default: no bound. */
  maxQueue?: number;
  onEvent?(event: PoolEvent): void;
}

/** Map to 503 + Retry-After: the server is saturated, not the request wrong. */
export class PoolFullError extends Error {
  override name = "PoolFullError";
}

export class PoolClosedError extends Error {
  override name = "PoolClosedError";
}
