// The main-thread side of validation: a fixed set of Bun Workers, a FIFO of jobs waiting for one,
// and the time limits. Pure orchestration: the caller (the runs service) owns the database and
// learns everything through the callbacks and the `done` promise. Design: docs/execution.md.
import {
  PoolClosedError,
  type PoolEvent,
  PoolFullError,
  type PoolStats,
  type RunOutcome,
  type RunStatus,
  type SubmitOptions,
  type SubmittedJob,
  type WorkerPoolOptions,
} from "./model.ts";
import { errorStep, shortError, skippedStep } from "./outcome.ts";
import type { FromWorker, JobStep, RunJob, StepOutcome, ToWorker } from "./protocol.ts";
import { WorkerSlot } from "./slot.ts";

export * from "./model.ts";

interface Task {
  job: RunJob;
  configs: Map<string, unknown>;
  opts: SubmitOptions;
  steps: (StepOutcome | undefined)[];
  state: "queued" | "running" | "done";
  slot: Slot | null;
  current: { index: number; startedAt: number; timer?: Timer } | null;
  done: Promise<RunOutcome>;
  resolve(outcome: RunOutcome): void;
}
type Slot = WorkerSlot<Task>;

const MAX_BACKOFF_MS = 5000;
/** setTimeout fires at once for delays above 2^31-1 ms: treat those as "no limit". */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class WorkerPool {
  readonly #maxQueue: number;
  readonly #onEvent?: (event: PoolEvent) => void;
  readonly #slots: Slot[] = [];
  #queue: Task[] = [];
  #closed = false;
  #closing: Promise<void> | null = null;
  /** Crashes since the last completed job: spaces out respawns so a broken worker can't spin. */
  #crashStreak = 0;
  readonly #started = Promise.withResolvers<void>();

  constructor(options: WorkerPoolOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) throw new RangeError("size must be >= 1");
    this.#maxQueue = options.maxQueue ?? Number.POSITIVE_INFINITY;
    this.#onEvent = options.onEvent;
    this.#started.promise.catch(() => {}); // reported to whoever awaits ready(), not as unhandled
    for (let id = 0; id < options.size; id++) {
      const slot: Slot = new WorkerSlot(id, options.workerUrl, {
        message: (message) => this.#onMessage(slot, message),
        crashed: (message) => this.#crash(slot, message),
        stopped: (ms) => this.#emit({ type: "worker_stopped", worker: id, ms }),
      });
      this.#slots.push(slot);
      slot.spawn();
    }
  }

  /** Resolves once every worker has loaded; rejects if one fails to (a wrong URL, a bad build). */
  ready(): Promise<void> {
    return this.#started.promise;
  }

  get busyWorkers(): number {
    return this.#slots.filter((s) => s.job).length;
  }

  stats(): PoolStats {
    return { size: this.#slots.length, busy: this.busyWorkers, queued: this.#queue.length };
  }

  /** The job's bytes are transferred: `job.bytes` is detached when this returns. */
  submit(job: RunJob, opts: SubmitOptions): SubmittedJob {
    if (this.#closed) throw new PoolClosedError("the worker pool is shutting down");
    if (opts.stepTimeoutsMs.length !== job.steps.length) throw new TypeError("one timeout per step");
    if (!(job.bytes instanceof ArrayBuffer) || job.bytes.detached) {
      throw new TypeError("bytes must be an ArrayBuffer the caller owns");
    }
    if (this.#queue.length >= this.#maxQueue && !this.#idleSlot()) {
      throw new PoolFullError("too many validation jobs are waiting");
    }
    const { promise, resolve } = Promise.withResolvers<RunOutcome>();
    const task: Task = {
      // Take the bytes now, without copying: a queued job holds the only reference to them.
      job: { ...job, bytes: job.bytes.transfer() },
      configs: new Map(job.steps.map((s) => [s.key, s.config])),
      opts,
      steps: [],
      state: "queued",
      slot: null,
      current: null,
      done: promise,
      resolve,
    };
    this.#queue.push(task);
    this.#dispatch();
    return { done: promise, cancel: (reason) => this.#cancel(task, reason) };
  }

  /** Stop taking jobs, give running ones up to `deadlineMs` milliseconds, then stop every worker. */
  close(deadlineMs: number): Promise<void> {
    if (!this.#closing) {
      this.#closed = true; // first, so nothing below can submit or respawn
      this.#closing = this.#shutdown(deadlineMs);
    }
    return this.#closing;
  }

  async #shutdown(deadlineMs: number): Promise<void> {
    for (const task of this.#queue) this.#finish(task, "canceled", "shutdown");
    this.#queue = [];
    const running = this.#slots.flatMap((s) => (s.job ? [s.job.done] : []));
    let timer: Timer | undefined;
    const deadline = new Promise((resolve) => {
      timer = setTimeout(resolve, Math.max(0, Math.min(deadlineMs, MAX_TIMER_MS)));
    });
    await Promise.race([Promise.all(running), deadline]);
    clearTimeout(timer);
    for (const slot of this.#slots) {
      clearTimeout(slot.respawnTimer);
      const task = slot.job;
      slot.retire();
      if (!task) continue;
      this.#emit({ type: "worker_exit", worker: slot.id, reason: "shutdown", jobId: task.job.jobId });
      this.#finish(task, "canceled", "shutdown", "interrupted by server shutdown");
    }
    this.#started.reject(new PoolClosedError("the worker pool closed before it was ready"));
  }

  #onMessage(slot: Slot, message: FromWorker): void {
    if (message.type === "ready") {
      slot.ready = slot.everReady = true;
      this.#emit({ type: "worker_ready", worker: slot.id });
      if (this.#slots.every((s) => s.everReady)) this.#started.resolve();
      this.#dispatch();
      return;
    }
    if (message.type === "fatal") {
      this.#crash(slot, message.message);
      return;
    }
    const task = slot.job;
    if (!task || task.job.jobId !== message.jobId) return;
    switch (message.type) {
      case "step_start": {
        const { index } = message;
        const limit = task.opts.stepTimeoutsMs[index];
        task.current = { index, startedAt: performance.now() };
        if (Number.isFinite(limit) && limit <= MAX_TIMER_MS) {
          task.current.timer = setTimeout(() => this.#timeout(task, index, limit), Math.max(0, limit));
        }
        this.#call(task, () => task.opts.onStepStart?.(index));
        break;
      }
      case "step_end":
        clearTimeout(task.current?.timer);
        task.current = null;
        task.steps[message.index] = message.outcome;
        this.#call(task, () => task.opts.onStepEnd?.(message.index, message.outcome));
        break;
      case "missing_config": {
        // The worker evicted it from its cache: send it again; the bytes are already there.
        const config = task.configs.get(message.key);
        slot.known.set(message.key, true);
        this.#post(slot, { type: "config", jobId: task.job.jobId, key: message.key, config });
        break;
      }
      case "run_end":
        slot.job = null;
        this.#crashStreak = 0;
        this.#finish(task, "completed");
        this.#dispatch();
        break;
    }
  }

  #dispatch(): void {
    for (let slot = this.#idleSlot(); slot && this.#queue.length > 0; slot = this.#idleSlot()) {
      this.#start(slot, this.#queue.shift()!);
    }
  }

  #idleSlot(): Slot | undefined {
    return this.#slots.find((s) => s.idle);
  }

  #start(slot: Slot, task: Task): void {
    task.state = "running";
    task.slot = slot;
    slot.job = task;
    // Configs (JSON Schemas, XSDs) can be large: send each once per worker, which caches it.
    const steps = task.job.steps.map((step): JobStep => {
      const { config, ...rest } = step;
      const known = slot.known.has(step.key);
      slot.known.set(step.key, true);
      return known ? rest : { ...rest, config: task.configs.get(step.key) };
    });
    // Transfer, not copy: large structured clones to workers leak under load (STYLE.md).
    this.#post(slot, { type: "run", job: { ...task.job, steps } }, [task.job.bytes]);
  }

  #post(slot: Slot, message: ToWorker, transfer: Transferable[] = []): void {
    try {
      slot.post(message, transfer);
    } catch (err) {
      // A config that cannot be cloned: this job cannot run. The worker may be waiting for that
      // config mid-job, so it is replaced rather than reused.
      const task = slot.job;
      const why = `could not send the job to a worker: ${shortError(err)}`;
      this.#replace(slot, "crashed");
      if (task) this.#finish(task, "crashed", why, why);
    }
  }

  #timeout(task: Task, index: number, limit: number): void {
    if (task.state !== "running" || task.current?.index !== index || !task.slot) return;
    const message = `step exceeded its time limit of ${limit} ms`;
    this.#replace(task.slot, "timed_out");
    this.#finish(task, "timed_out", message, message);
  }

  #cancel(task: Task, reason = "canceled"): void {
    if (task.state === "queued") {
      this.#queue.splice(this.#queue.indexOf(task), 1);
      this.#finish(task, "canceled", reason);
    } else if (task.state === "running" && task.slot) {
      this.#replace(task.slot, "canceled");
      this.#finish(task, "canceled", reason, "canceled");
    }
  }

  /** Stop a worker mid-job on purpose and start a fresh one at once. */
  #replace(slot: Slot, reason: "timed_out" | "canceled" | "crashed"): void {
    this.#emit({ type: "worker_exit", worker: slot.id, reason, jobId: slot.job?.job.jobId });
    slot.retire();
    this.#respawn(slot, 0);
  }

  #crash(slot: Slot, message: string): void {
    const task = slot.job;
    this.#emit({ type: "worker_exit", worker: slot.id, reason: "crashed", jobId: task?.job.jobId, message });
    slot.retire();
    if (task) this.#finish(task, "crashed", `worker crashed: ${message}`, `worker crashed: ${message}`);
    if (!slot.everReady) this.#started.reject(new Error(`a validation worker failed to start: ${message}`));
    this.#crashStreak++;
    this.#respawn(
      slot,
      this.#crashStreak <= 1 ? 0 : Math.min(50 * 2 ** (this.#crashStreak - 2), MAX_BACKOFF_MS),
    );
  }

  #respawn(slot: Slot, delayMs: number): void {
    if (this.#closed) return;
    if (delayMs === 0) slot.spawn();
    else slot.respawnTimer = setTimeout(() => slot.spawn(), delayMs);
  }

  /** Settle a task once. `stepError` ends the step in progress (limit, cancel, crash, shutdown). */
  #finish(task: Task, status: RunStatus, error?: string, stepError?: string): void {
    if (task.state === "done") return;
    task.state = "done";
    task.slot = null;
    const current = task.current;
    task.current = null;
    clearTimeout(current?.timer);
    if (current && stepError !== undefined) {
      const outcome = errorStep(stepError, performance.now() - current.startedAt);
      task.steps[current.index] = outcome;
      this.#call(task, () => task.opts.onStepEnd?.(current.index, outcome));
    }
    const steps = task.job.steps.map((_, i) => task.steps[i] ?? skippedStep());
    task.resolve(error === undefined ? { status, steps } : { status, steps, error });
  }

  /** The caller's callbacks write to its database; their failure must not break the pool. */
  #call(task: Task, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#emit({ type: "callback_error", jobId: task.job.jobId, message: shortError(err) });
    }
  }

  #emit(event: PoolEvent): void {
    try {
      this.#onEvent?.(event);
    } catch {
      // logging must not break the pool
    }
  }
}
