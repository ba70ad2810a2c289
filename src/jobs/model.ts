// What the worker pool accepts and returns: the contract between src/jobs/pool.ts and its caller
// (the runs service, which owns the database). Worker messages live in protocol.ts.
import type { OrgKey } from "./fair-queue.ts";
import type { StepOutcome } from "./protocol.ts";

export type { OrgKey } from "./fair-queue.ts";

export type RunStatus = "completed" | "timed_out" | "canceled" | "crashed";

export interface RunOutcome {
  status: RunStatus;
  /** One per job step; steps that never ran are "skipped". */
  steps: StepOutcome[];
  /** Why the run did not complete; "shutdown" when the pool closed before it could finish. */
  error?: string;
}

export interface SubmitOptions {
  /**
   * The organization the job is for: waiting jobs are started fair across orgs
   * (src/jobs/fair-queue.ts). Jobs without one share a single org.
   */
  org?: OrgKey;
  /** One per job step, counted from the step's own start; a non-finite value means no limit. */
  stepTimeoutsMs: number[];
  /** Called in step order, before that step's onStepEnd. May be called before submit() returns
   * (a job given to an idle worker starts at once). */
  onStepStart?(index: number): void;
  /** Called once for every step that started, including one ended by a limit, cancel or crash. */
  onStepEnd?(index: number, outcome: StepOutcome): void;
}

export interface SubmittedJob {
  done: Promise<RunOutcome>;
  /** A queued job leaves the queue, one waiting in a worker is dropped there; a running one has
   * its worker terminated. No-op once done. */
  cancel(reason?: string): void;
}

export interface PoolStats {
  /** Workers. */
  size: number;
  /** Jobs the pool keeps its workers fed with: size × jobsPerWorker (see WorkerPool.capacity). */
  capacity: number;
  /** Workers running a job. */
  busy: number;
  /** Jobs waiting in the pool for a worker. */
  queued: number;
  /** Jobs handed to a worker that has not started them yet (pipelined behind its current job). */
  pipelined: number;
}

export type PoolEvent =
  | { type: "worker_ready"; worker: number }
  | {
      type: "worker_exit";
      worker: number;
      /**
       * recycled: replaced between jobs, past WORKER_MAX_RETAINED or maxHeapBytes (no job was
       * stopped); `message` says the heap kept when it was the heap.
       */
      reason: "crashed" | "timed_out" | "canceled" | "shutdown" | "memory" | "recycled";
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
  /**
   * Jobs a worker holds at once: the running one and those handed to it to start next, so it does
   * not idle while the main thread settles one job and sends the next. Default 2; 1 = no pipelining.
   * Only jobs of at most PIPELINE_MAX_BYTES are pipelined.
   */
  jobsPerWorker?: number;
  /**
   * A job's time limit in all, counted from its first step's start: a step still running when it
   * runs out ends as a step over its own limit does (`timed_out`). Default: none.
   */
  runTimeoutMs?: number;
  onEvent?(event: PoolEvent): void;
  /**
   * The process's memory (resident set, bytes) past which the step that has run longest is
   * stopped (memory.ts): workers share the server's process, and a step's own heap has no bound
   * in Bun (an XPath doubling a string took the process to 5.8 GB). Default: none.
   */
  memoryLimitBytes?: number;
  /** Reads the process's memory; default process.memoryUsage.rss (tests pass their own). */
  memoryProbe?: () => number;
  /** The workers' process.env; default: this process's. */
  workerEnv?: Record<string, string>;
  /** XPath expressions a worker may hold for good before it is replaced; default WORKER_MAX_RETAINED. */
  maxRetained?: number;
  /**
   * Heap a worker may keep after a full collection, bytes, before it is replaced between jobs
   * (src/jobs/heap.ts; the server's `worker_max_heap_mb`). Default: none.
   */
  maxHeapBytes?: number;
}

/** Map to 503 + Retry-After: the server is saturated, not the request wrong. */
export class PoolFullError extends Error {
  override name = "PoolFullError";
}

export class PoolClosedError extends Error {
  override name = "PoolClosedError";
}
