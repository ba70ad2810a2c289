// The main-thread side of validation: a fixed set of Bun Workers, the jobs waiting for one (a FIFO
// per org, picked fair across orgs: fair-queue.ts), and the time limits. Pure orchestration: the caller (the runs service) owns the database and
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
import { FairQueue, type OrgKey } from "./fair-queue.ts";
import { MemoryWatch } from "./memory.ts";
import { errorStep, shortError, skippedStep } from "./outcome.ts";
import {
  CLAIM_FREE,
  CLAIM_STARTED,
  CLAIM_TAKEN,
  type FromWorker,
  type JobStep,
  type RunJob,
  type StepOutcome,
} from "./protocol.ts";
import { type RunningStep, WorkerSlot } from "./slot.ts";

export * from "./model.ts";

/**
 * queued: in the pool's queue. posted: handed to a worker behind its running job. running: its
 * worker's first job. A done task can stay in a slot's `jobs`: canceled while posted, it keeps its
 * place until the worker answers `dropped` or, if the worker had started it, until it comes first
 * and the pool stops that worker (#drop); #steal's stand-ins too.
 * `recalled`: a posted task asked back for another org's job (#recall): it returns to the queue
 * when the worker drops it, or counts as running if the worker had already started it.
 */
interface Task {
  job: RunJob;
  org: OrgKey;
  recalled: boolean;
  /** Of the bytes, read at submit: they are detached once sent. */
  size: number;
  configs: Map<string, unknown>;
  opts: SubmitOptions;
  steps: (StepOutcome | undefined)[];
  state: "queued" | "posted" | "running" | "done";
  slot: Slot | null;
  /** Handed to a busy worker: the cell that says whether it started it or another took it. */
  claim?: Int32Array<SharedArrayBuffer>;
  /** When the job's time in all runs out (performance.now()), from its first step's start. */
  deadline?: number;
  done: Promise<RunOutcome>;
  resolve(outcome: RunOutcome): void;
}
type Slot = WorkerSlot<Task>;

/**
 * Largest job handed to a busy worker. Its bytes go as a copy while the pool keeps the original, to
 * send it again if that worker dies before starting it; larger jobs wait for an idle worker and are
 * transferred without a copy.
 */
export const PIPELINE_MAX_BYTES = 64 * 1024;
/**
 * XPath expressions a worker may hold for good before it is replaced. fontoxpath caches every
 * expression it compiled (3–10 KB each, measured: 11 MB for the EN 16931 rules) in a module-level
 * map with no eviction or API to clear it, so a worker grew with every distinct Schematron config
 * it ran (+89 MB of heap at 9,000 small ones). 20,000 bounds that at ~65–200 MB a worker
 * (docs/benchmarks.md, fifteenth session) while ~18 configs the size of EN 16931 in use, or ~6,600
 * of a rule of two checks, fit without a worker being replaced again and again, each replacement
 * compiling them anew (EN 16931: ~2 s).
 */
export const WORKER_MAX_RETAINED = 20_000;
const MAX_BACKOFF_MS = 5000;
/** setTimeout fires at once for delays above 2^31-1 ms: treat those as "no limit". */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class WorkerPool {
  readonly #maxQueue: number;
  readonly #perWorker: number;
  readonly #runTimeoutMs: number;
  readonly #onEvent?: (event: PoolEvent) => void;
  readonly #slots: Slot[] = [];
  #queue = new FairQueue<Task>();
  #closed = false;
  #closing: Promise<void> | null = null;
  /** Crashes since the last completed job: spaces out respawns so a broken worker can't spin. */
  #crashStreak = 0;
  readonly #started = Promise.withResolvers<void>();
  readonly #memory: MemoryWatch | null;
  /** Workers replaced past maxRetained since start. */
  #recycled = 0;
  /** XPath expressions a worker may hold for good before it is replaced (#retained). Tests lower it. */
  maxRetained: number;
  /** Heap a worker may keep after a full collection before it is replaced (#heap); 0: no bound. */
  maxHeapBytes: number;

  constructor(options: WorkerPoolOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) throw new RangeError("size must be >= 1");
    this.#perWorker = options.jobsPerWorker ?? 2;
    if (!Number.isInteger(this.#perWorker) || this.#perWorker < 1) {
      throw new RangeError("jobsPerWorker must be >= 1");
    }
    this.#maxQueue = options.maxQueue ?? Number.POSITIVE_INFINITY;
    this.#runTimeoutMs = options.runTimeoutMs ?? Number.POSITIVE_INFINITY;
    this.#onEvent = options.onEvent;
    this.maxRetained = options.maxRetained ?? WORKER_MAX_RETAINED;
    this.maxHeapBytes = options.maxHeapBytes ?? 0;
    this.#started.promise.catch(() => {}); // reported to whoever awaits ready(), not as unhandled
    this.#memory = options.memoryLimitBytes
      ? new MemoryWatch(options.memoryLimitBytes, options.memoryProbe, () => this.#overMemory())
      : null;
    for (let id = 0; id < options.size; id++) {
      const slot: Slot = new WorkerSlot(
        id,
        options.workerUrl,
        {
          message: (message) => this.#onMessage(slot, message),
          crashed: (message) => this.#crash(slot, message),
          stopped: (ms) => {
            this.#memory?.released(id);
            this.#emit({ type: "worker_stopped", worker: id, ms });
          },
        },
        options.workerEnv,
      );
      this.#slots.push(slot);
      slot.spawn();
    }
  }

  /** Resolves once every worker has loaded; rejects if one fails to (a wrong URL, a bad build). */
  ready(): Promise<void> {
    return this.#started.promise;
  }

  get busyWorkers(): number {
    return this.#slots.filter((s) => s.jobs.length > 0).length;
  }

  /** Workers started and without a job: a job submitted now starts at once. */
  get idleWorkers(): number {
    return this.#slots.filter((s) => s.idle).length;
  }

  /** Workers replaced between jobs since start, past maxRetained or maxHeapBytes (#recycle). */
  get recycledWorkers(): number {
    return this.#recycled;
  }

  /** True once close() was called. */
  get closing(): boolean {
    return this.#closed;
  }

  /** Jobs to keep submitted so no worker idles between two: size × jobsPerWorker. */
  get capacity(): number {
    return this.#slots.length * this.#perWorker;
  }

  stats(): PoolStats {
    let pipelined = 0;
    for (const slot of this.#slots) pipelined += slot.jobs.filter((t) => t.state === "posted").length;
    return {
      size: this.#slots.length,
      capacity: this.capacity,
      busy: this.busyWorkers,
      queued: this.#queue.size,
      pipelined,
    };
  }

  /** The job's bytes are transferred: `job.bytes` is detached when this returns. */
  submit(job: RunJob, opts: SubmitOptions): SubmittedJob {
    if (this.#closed) throw new PoolClosedError("the worker pool is shutting down");
    if (opts.stepTimeoutsMs.length !== job.steps.length) throw new TypeError("one timeout per step");
    if (!(job.bytes instanceof ArrayBuffer) || job.bytes.detached) {
      throw new TypeError("bytes must be an ArrayBuffer the caller owns");
    }
    const size = job.bytes.byteLength;
    const waits = this.#queue.size > 0 || !this.#slotFor(size);
    if (waits && this.#queue.size >= this.#maxQueue) {
      throw new PoolFullError("too many validation jobs are waiting");
    }
    const { promise, resolve } = Promise.withResolvers<RunOutcome>();
    const task: Task = {
      // Take the bytes now, without copying: a queued job holds the only reference to them.
      job: { ...job, bytes: job.bytes.transfer() },
      org: opts.org ?? "",
      recalled: false,
      size,
      configs: new Map(job.steps.map((s) => [s.key, s.config])),
      opts,
      steps: [],
      state: "queued",
      slot: null,
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
      this.#memory?.stop();
      this.#closing = this.#shutdown(deadlineMs);
    }
    return this.#closing;
  }

  async #shutdown(deadlineMs: number): Promise<void> {
    // Jobs not started yet, in the pool or waiting in a worker, are canceled at once.
    for (const task of this.#queue.drain()) this.#finish(task, "canceled", "shutdown");
    for (const slot of this.#slots) {
      for (const task of slot.jobs) if (task.state === "posted") this.#drop(slot, task, "shutdown");
    }
    const running = this.#slots.flatMap((s) => (s.jobs[0]?.state === "running" ? [s.jobs[0].done] : []));
    let timer: Timer | undefined;
    const deadline = new Promise((resolve) => {
      timer = setTimeout(resolve, Math.max(0, Math.min(deadlineMs, MAX_TIMER_MS)));
    });
    await Promise.race([Promise.all(running), deadline]);
    clearTimeout(timer);
    for (const slot of this.#slots) {
      clearTimeout(slot.respawnTimer);
      const task = slot.jobs[0];
      const step = slot.step;
      slot.retire();
      if (task?.state !== "running") continue;
      this.#emit({ type: "worker_exit", worker: slot.id, reason: "shutdown", jobId: task.job.jobId });
      this.#finish(task, "canceled", "shutdown", "interrupted by server shutdown", step);
    }
    this.#started.reject(new PoolClosedError("the worker pool closed before it was ready"));
  }

  #onMessage(slot: Slot, message: FromWorker): void {
    switch (message.type) {
      case "ready":
        slot.ready = slot.everReady = true;
        this.#emit({ type: "worker_ready", worker: slot.id });
        if (this.#slots.every((s) => s.everReady)) this.#started.resolve();
        this.#dispatch();
        return;
      case "fatal":
        this.#crash(slot, message.message);
        return;
      case "step_end": {
        // Messages come in order: a step's end is always about the worker's first job.
        const task = slot.jobs[0];
        if (task?.job.jobId !== message.jobId) return;
        this.#ranAnyway(task, message.index);
        if (message.retained !== undefined) this.#retained(slot, message.retained);
        slot.endStep();
        if (task.state !== "done") {
          task.steps[message.index] = message.outcome;
          this.#call(task, () => task.opts.onStepEnd?.(message.index, message.outcome));
          if (slot.jobs[0] !== task) return; // the callback canceled it
        }
        if (message.end) this.#jobEnded(slot, task);
        else this.#stepStart(slot, task, message.index + 1);
        return;
      }
      case "run_end": {
        const task = slot.jobs[0];
        if (task?.job.jobId !== message.jobId) return;
        this.#ranAnyway(task, -1);
        this.#jobEnded(slot, task);
        return;
      }
      case "dropped": {
        const at = slot.jobs.findIndex(
          (t) => (t.state === "done" || t.recalled) && t.job.jobId === message.jobId,
        );
        if (at < 0) return;
        const [task] = slot.jobs.splice(at, 1);
        if (task.state === "posted") {
          // Recalled and never started: back at the head of its org's line. Its time in all
          // starts again when it really starts (#begin may have armed it on the handover).
          task.recalled = false;
          task.state = "queued";
          task.slot = null;
          task.deadline = undefined;
          this.#queue.unshift(task);
        }
        if (at === 0) {
          // We took it for started when the job before it ended: the next one starts instead.
          slot.endStep();
          this.#begin(slot);
        }
        this.#dispatch();
        return;
      }
      case "heap":
        this.#heap(slot, message.bytes);
        return;
      case "missing_config": {
        // The worker evicted it from its cache: send it again; the bytes are already there.
        const task = slot.jobs.find((t) => t.job.jobId === message.jobId);
        if (!task) return;
        const config = task.configs.get(message.key);
        slot.known.set(message.key, true);
        try {
          slot.post({ type: "config", jobId: message.jobId, key: message.key, config });
        } catch (err) {
          // A config that cannot be cloned: the worker waits for it mid-job, so it is replaced.
          const why = `could not send the job to a worker: ${shortError(err)}`;
          this.#stop(slot, "crashed", "crashed", why, why);
          this.#respawn(slot, 0);
        }
        return;
      }
    }
  }

  #dispatch(): void {
    while (this.#queue.size > 0) {
      const active = this.#active();
      const task = this.#queue.peek((org) => active.get(org) ?? 0)!;
      // In order: a large job waiting for an idle worker holds back the small ones behind it.
      const slot = this.#slotFor(task.size);
      if (!slot) {
        this.#recall(task, active);
        return;
      }
      this.#queue.take(task);
      this.#post(slot, task);
    }
    this.#steal();
  }

  /**
   * Nothing queued and a worker idle: it takes over a job handed to a busy worker. Without this,
   * that job waited for the job ahead of it however long it ran (a step may run for its whole time
   * limit on a small document too), beside an idle worker: a sync run answered 202 after its wait,
   * having never started (found by the model fuzzer, 2026-11-29). The job's claim cell decides
   * (protocol.ts): the busy worker has either started it already (then it stays there) or will
   * skip it and answer `dropped`; it is also told to drop it now. Until it answers, a stand-in
   * keeps the job's place in that worker's list, as a job canceled while handed over does.
   */
  #steal(): void {
    for (const idle of this.#slots) {
      if (!idle.idle) continue;
      const pick = this.#handedOver();
      if (!pick) return;
      const [from, at] = pick;
      const task = from.jobs[at]!;
      from.jobs[at] = { ...task, state: "done", steps: [], resolve: () => {} };
      try {
        from.post({ type: "drop", jobId: task.job.jobId });
      } catch {
        // the worker is gone: #stop resubmits nothing of a stand-in
      }
      task.state = "queued";
      task.slot = null;
      task.deadline = undefined;
      this.#post(idle, task);
    }
  }

  /**
   * The job #steal takes, its claim taken: handed to a busy worker and not started there, not
   * recalled; of the org with the fewest jobs running (as the fair pick would choose), then the
   * one that would start first. As [its slot, its index]; null when there is none.
   */
  #handedOver(): [Slot, number] | null {
    const running = new Map<OrgKey, number>();
    for (const s of this.#slots) {
      const t = s.jobs[0];
      if (t?.state === "running") running.set(t.org, (running.get(t.org) ?? 0) + 1);
    }
    const candidates: [Slot, number, number][] = [];
    for (const s of this.#slots) {
      for (let i = 1; i < s.jobs.length; i++) {
        const t = s.jobs[i];
        if (t.state === "posted" && !t.recalled && t.claim) candidates.push([s, i, running.get(t.org) ?? 0]);
      }
    }
    candidates.sort((a, b) => a[2] - b[2] || a[1] - b[1]);
    for (const [s, i] of candidates) {
      // Not FREE: its worker has started it (the end of the job ahead is still on its way here).
      if (Atomics.compareExchange(s.jobs[i].claim!, 0, CLAIM_FREE, CLAIM_TAKEN) === CLAIM_FREE) return [s, i];
    }
    return null;
  }

  /** Jobs on workers (running, or handed over and not recalled), by org. */
  #active(): Map<OrgKey, number> {
    const active = new Map<OrgKey, number>();
    for (const slot of this.#slots) {
      for (const t of slot.jobs) {
        if (t.state === "running" || (t.state === "posted" && !t.recalled))
          active.set(t.org, (active.get(t.org) ?? 0) + 1);
      }
    }
    return active;
  }

  /**
   * Pipelining decides a worker's next job before it is free; `next` (the fair pick) may be of an
   * org with fewer jobs on workers than a job already handed over. Ask the worker for those back
   * (`drop`): one that answers `dropped` returns to the queue, and `next` takes its place. One
   * worker at a time, so a single waiting job does not empty every worker's pipeline.
   */
  #recall(next: Task, active: Map<OrgKey, number>): void {
    const mine = active.get(next.org) ?? 0;
    for (const slot of this.#slots) if (slot.jobs.some((t) => t.recalled)) return;
    for (const slot of this.#slots) {
      let recalled = false;
      // From the back: the job handed over last is the one that would start last.
      for (let i = slot.jobs.length - 1; i > 0; i--) {
        const t = slot.jobs[i];
        const theirs = active.get(t.org) ?? 0;
        if (t.state !== "posted" || theirs - 1 <= mine) continue;
        active.set(t.org, theirs - 1);
        t.recalled = recalled = true;
        try {
          slot.post({ type: "drop", jobId: t.job.jobId });
        } catch {
          // the worker is gone: #stop resubmits what it held
        }
      }
      if (recalled) return;
    }
  }

  /** The worker started a job we had recalled (the `drop` came too late): it is running. */
  #ranAnyway(task: Task, index: number): void {
    if (!task.recalled) return;
    task.recalled = false;
    if (task.state !== "posted") return;
    task.state = "running";
    if (index >= 0) this.#call(task, () => task.opts.onStepStart?.(index));
  }

  /**
   * An idle worker, else (for a small job) the least loaded one with room behind its jobs. Only
   * behind a small job: large documents are the ones that take long. A job handed over is taken
   * over by a worker that frees up first (#steal).
   */
  #slotFor(size: number): Slot | undefined {
    let best: Slot | undefined;
    for (const slot of this.#slots) {
      if (!slot.worker || !slot.ready || slot.recycle) continue;
      const held = slot.jobs.length;
      if (held === 0) return slot;
      if (
        size <= PIPELINE_MAX_BYTES &&
        held < this.#perWorker &&
        slot.jobs[0].size <= PIPELINE_MAX_BYTES &&
        (!best || held < best.jobs.length)
      ) {
        best = slot;
      }
    }
    return best;
  }

  #post(slot: Slot, task: Task): void {
    const first = slot.jobs.length === 0;
    // Configs (JSON Schemas, XSDs) can be large: send each once per worker, which caches it.
    const sending = new Set<string>();
    const steps = task.job.steps.map((step): JobStep => {
      const { config, ...rest } = step;
      if (slot.known.has(step.key) || sending.has(step.key)) return rest;
      sending.add(step.key);
      return { ...rest, config: task.configs.get(step.key) };
    });
    // Transfer, not copy: large structured clones to workers leak under load (STYLE.md). A job
    // queued behind another is sent as a copy of its (small) bytes: if this worker dies first, the
    // job goes to another worker and needs them again.
    const bytes = first ? task.job.bytes : task.job.bytes.slice(0);
    task.claim = first ? undefined : new Int32Array(new SharedArrayBuffer(4));
    const job = { ...task.job, bytes, steps, claim: task.claim };
    try {
      slot.post(
        this.maxHeapBytes > 0 ? { type: "run", job, maxHeapBytes: this.maxHeapBytes } : { type: "run", job },
        [bytes],
      );
    } catch (err) {
      // A config that cannot be cloned: nothing was sent, the worker is untouched.
      const why = `could not send the job to a worker: ${shortError(err)}`;
      this.#finish(task, "crashed", why);
      return;
    }
    // Touch every step's key in step order, as the worker will when it starts the job (lru.ts).
    for (const step of task.job.steps) slot.known.set(step.key, true);
    task.state = "posted";
    task.slot = slot;
    slot.jobs.push(task);
    if (first) this.#begin(slot);
  }

  /** The worker's first job has just started (posted to it idle, or the job before it ended). */
  #begin(slot: Slot): void {
    if (slot.recycle && this.#recycle(slot)) return;
    const task = slot.jobs[0];
    if (!task || this.#stopCanceled(slot)) return;
    // A recalled job may start or be dropped: it stays posted (no callbacks, its limit armed)
    // until the worker says which (`dropped`, or its first step's end: #ranAnyway).
    if (task.state === "posted" && !task.recalled) task.state = "running";
    if (task.job.steps.length > 0) this.#stepStart(slot, task, 0);
  }

  #stepStart(slot: Slot, task: Task, index: number): void {
    const step: RunningStep = { index, startedAt: performance.now() };
    // The step's own limit, or what is left of the job's in all when that is sooner.
    task.deadline ??= step.startedAt + this.#runTimeoutMs;
    const own = task.opts.stepTimeoutsMs[index] ?? Number.POSITIVE_INFINITY;
    const left = task.deadline - step.startedAt;
    const byRun = left < own;
    const limit = byRun ? left : own;
    if (Number.isFinite(limit) && limit <= MAX_TIMER_MS) {
      const message = byRun
        ? `run exceeded its time limit of ${this.#runTimeoutMs} ms`
        : `step exceeded its time limit of ${limit} ms`;
      step.timer = setTimeout(() => this.#timeout(slot, task, step, message), Math.max(0, limit));
    }
    slot.step = step;
    // A recalled job (#recall) that the worker may be running has its limits but no callbacks yet.
    if (task.state === "running") this.#call(task, () => task.opts.onStepStart?.(index));
  }

  /**
   * The worker said how many XPath expressions it holds for good. Past maxRetained it takes no
   * new job (#slotFor), the jobs handed to it and not started go back to the head of the queue for
   * the other workers, and it is replaced as soon as no job of its own is left (#recycle).
   */
  #retained(slot: Slot, retained: number): void {
    slot.retained = retained;
    if (slot.recycle || this.#closed || retained <= this.maxRetained) return;
    slot.recycle = true;
    if (this.#takeBack(slot, 1)) this.#dispatch();
  }

  /**
   * The worker keeps more heap after a full collection than maxHeapBytes (heap.ts): replaced as
   * past maxRetained. It said so after a job's end, before starting its next: with no job of its
   * own left it is replaced now; else the job the pool has already started there (on hearing the
   * end before) runs on it to its end, and the jobs handed to it behind that one go back.
   */
  #heap(slot: Slot, bytes: number): void {
    if (slot.recycle || this.#closed) return;
    slot.recycle = true;
    const mb = (n: number) => Math.round(n / 1048576);
    slot.recycleWhy = `kept ${mb(bytes)} MB of heap, past its limit of ${mb(this.maxHeapBytes)} MB`;
    if (slot.jobs.length === 0) this.#recycle(slot);
    else if (this.#takeBack(slot, 1)) this.#dispatch();
  }

  /**
   * A worker past maxRetained whose first job has ended: the jobs it was handed and has not
   * started go back to the queue; if it started none (the pool may not have heard yet: the
   * claims say), it is replaced now, else once that job ends too. Returns whether it was replaced.
   */
  #recycle(slot: Slot): boolean {
    this.#takeBack(slot, 0);
    for (const t of slot.jobs) {
      // Running there, or canceled after it started (then #stopCanceled replaces it anyway).
      if (!t.claim || Atomics.load(t.claim, 0) === CLAIM_STARTED) return false;
    }
    // Left: jobs the worker will skip (their claims taken). No job of its is stopped.
    const why = slot.recycleWhy;
    this.#emit(
      why === undefined
        ? { type: "worker_exit", worker: slot.id, reason: "recycled" }
        : { type: "worker_exit", worker: slot.id, reason: "recycled", message: why },
    );
    this.#recycled++;
    slot.retire();
    this.#respawn(slot, 0);
    return true;
  }

  /**
   * Takes back the jobs handed to this worker from index `from` on whose claim the pool wins: to
   * the head of the queue, in their order. Returns whether it took any.
   */
  #takeBack(slot: Slot, from: number): boolean {
    const back: Task[] = [];
    for (let i = from; i < slot.jobs.length; i++) {
      const t = slot.jobs[i];
      if (t.state !== "posted" || !t.claim) continue;
      if (Atomics.compareExchange(t.claim, 0, CLAIM_FREE, CLAIM_TAKEN) === CLAIM_FREE) back.push(t);
    }
    if (back.length === 0) return false;
    slot.jobs = slot.jobs.filter((t) => !back.includes(t));
    for (const t of back) {
      t.state = "queued";
      t.slot = null;
      t.recalled = false;
      t.deadline = undefined;
    }
    for (const t of back.reverse()) this.#queue.unshift(t);
    return true;
  }

  #jobEnded(slot: Slot, task: Task): void {
    slot.jobs.shift();
    this.#crashStreak = 0;
    this.#finish(task, "completed");
    this.#begin(slot);
    this.#dispatch();
  }

  #timeout(slot: Slot, task: Task, step: RunningStep, message: string): void {
    if (slot.step !== step || slot.jobs[0] !== task) return;
    this.#stop(slot, "timed_out", "timed_out", message, message);
    this.#respawn(slot, 0);
  }

  #cancel(task: Task, reason = "canceled"): void {
    const slot = task.slot;
    if (task.state === "queued") {
      this.#queue.remove(task);
      this.#finish(task, "canceled", reason);
    } else if (task.state === "posted" && slot) {
      this.#drop(slot, task, reason);
    } else if (task.state === "running" && slot) {
      this.#stop(slot, "canceled", "canceled", reason, "canceled");
      this.#respawn(slot, 0);
    }
  }

  /**
   * Cancel a job handed over to a busy worker: it resolves `canceled` at once, steps skipped. Its
   * claim decides the rest (protocol.ts). Taken here: the worker skips it when it comes to it,
   * drop or no drop. Already started there (the pool has not heard yet): a `drop` would come too
   * late and the job would run to its time limit for nobody, so its worker is stopped as for a
   * running job, once the pool has heard the end of every job ahead of it (#stopCanceled).
   */
  #drop(slot: Slot, task: Task, reason: string): void {
    const taken =
      !task.claim || Atomics.compareExchange(task.claim, 0, CLAIM_FREE, CLAIM_TAKEN) === CLAIM_FREE;
    this.#finish(task, "canceled", reason);
    if (!taken) {
      this.#stopCanceled(slot);
      return;
    }
    try {
      slot.post({ type: "drop", jobId: task.job.jobId });
    } catch {
      // the worker is gone; its replacement never had the job
    }
  }

  /**
   * The worker's first job was canceled after the worker had started it (its claim says so): stop
   * that worker. Only its first: the results of the jobs ahead are on their way, and each end
   * heard brings the next to the front (#begin). Returns whether it stopped the worker.
   */
  #stopCanceled(slot: Slot): boolean {
    const task = slot.jobs[0];
    if (task?.state !== "done" || !task.claim || Atomics.load(task.claim, 0) !== CLAIM_STARTED) return false;
    this.#stop(slot, "canceled", "canceled", "canceled", "canceled");
    this.#respawn(slot, 0);
    return true;
  }

  /**
   * Stop a worker mid-job (limit, cancel, crash): its first job ends with `status`, the jobs waiting
   * behind it go back to the front of the queue, for the next free worker.
   */
  #stop(
    slot: Slot,
    reason: "timed_out" | "canceled" | "crashed" | "memory",
    status: RunStatus,
    error: string,
    stepError: string,
    message?: string,
  ): void {
    const task = slot.jobs[0];
    const jobId = task?.job.jobId;
    this.#emit(
      message === undefined
        ? { type: "worker_exit", worker: slot.id, reason, jobId }
        : { type: "worker_exit", worker: slot.id, reason, jobId, message },
    );
    const step = slot.step;
    const [, ...waiting] = slot.retire();
    const resubmit = waiting.filter((t) => t.state === "posted");
    for (const t of resubmit) {
      t.state = "queued";
      t.slot = null;
      t.recalled = false;
      t.deadline = undefined;
    }
    for (const t of resubmit.reverse()) this.#queue.unshift(t);
    if (task) this.#finish(task, status, error, stepError, step);
    if (this.#closed) for (const t of resubmit) this.#cancel(t, "shutdown");
    this.#dispatch();
  }

  /**
   * The process is over its memory limit: the step that has run longest is stopped (its worker
   * ends, and its heap with it). Null when no step runs: the memory is not a step's.
   */
  #overMemory(): number | null {
    let oldest: Slot | undefined;
    for (const slot of this.#slots) {
      // A job canceled after its worker started it runs until the pool hears the end of the job
      // ahead and stops it (#drop): it counts too.
      if (!slot.jobs.length || !slot.step) continue;
      if (!oldest || slot.step.startedAt < oldest.step!.startedAt) oldest = slot;
    }
    if (!oldest) return null;
    const mb = Math.round(this.#memory!.limitBytes / 1048576);
    const why = `the server's memory passed its limit of ${mb} MB while this step ran: stopped`;
    this.#stop(oldest, "memory", "crashed", why, why);
    this.#respawn(oldest, 0);
    return oldest.id;
  }

  #crash(slot: Slot, message: string): void {
    const why = `worker crashed: ${message}`;
    this.#stop(slot, "crashed", "crashed", why, why, message);
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
  #finish(
    task: Task,
    status: RunStatus,
    error?: string,
    stepError?: string,
    step?: RunningStep | null,
  ): void {
    if (task.state === "done") return;
    task.state = "done";
    task.recalled = false;
    task.slot = null;
    if (step && stepError !== undefined) {
      const outcome = errorStep(stepError, performance.now() - step.startedAt);
      task.steps[step.index] = outcome;
      this.#call(task, () => task.opts.onStepEnd?.(step.index, outcome));
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
