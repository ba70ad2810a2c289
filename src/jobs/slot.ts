// One worker thread and what the pool knows about it. A slot outlives its workers: when one is
// terminated or dies, the pool spawns the next into the same slot.
import { Lru } from "./lru.ts";
import { shortError, shortWorkerError } from "./outcome.ts";
import type { FromWorker, ToWorker } from "./protocol.ts";
import { CONFIG_CACHE_SIZE } from "./worker-loop.ts";

export interface SlotHandlers {
  message(message: FromWorker): void;
  /** The worker died on its own; `message` says why, for people. */
  crashed(message: string): void;
  /** A worker we stopped has really ended. */
  stopped(ms: number): void;
}

/** The step the worker is running, as the pool infers it (protocol.ts), and its time limit. */
export interface RunningStep {
  index: number;
  startedAt: number;
  timer?: Timer;
}

export class WorkerSlot<Job> {
  worker: Worker | null = null;
  ready = false;
  everReady = false;
  /** Jobs posted to this worker, in order: the first is running, the rest wait in the worker. */
  jobs: Job[] = [];
  step: RunningStep | null = null;
  /** Keys whose config this worker holds, as far as we know: those are sent without config. */
  readonly known = new Lru<string, true>(CONFIG_CACHE_SIZE);
  respawnTimer?: Timer;
  /** XPath expressions this worker holds for good, as it last said (protocol.ts `retained`). */
  retained = 0;
  /** Past the pool's bound of those or of its heap: takes no more jobs and is replaced once its own have ended. */
  recycle = false;
  /** Why, for the log, when it is its heap. */
  recycleWhy?: string;

  constructor(
    readonly id: number,
    private readonly url: URL | string,
    private readonly on: SlotHandlers,
    private readonly env?: Record<string, string>,
  ) {}

  get idle(): boolean {
    return this.worker !== null && this.ready && this.jobs.length === 0;
  }

  /** Ends the running step's time limit; returns the step. */
  endStep(): RunningStep | null {
    const step = this.step;
    this.step = null;
    clearTimeout(step?.timer);
    return step;
  }

  spawn(): void {
    this.respawnTimer = undefined;
    this.ready = false;
    this.retained = 0;
    this.recycle = false;
    this.recycleWhy = undefined;
    this.known.clear();
    let worker: Worker;
    try {
      worker = new Worker(this.url, this.env ? { env: this.env } : undefined);
    } catch (err) {
      this.on.crashed(shortError(err));
      return;
    }
    this.worker = worker;
    // Events of a worker already replaced are stale: compare identity before acting. Bun sends
    // `error` (uncaught error, failed load) then `close`; either alone also means it is gone.
    worker.addEventListener("message", (e: MessageEvent<FromWorker>) => {
      if (this.worker === worker) this.on.message(e.data);
    });
    worker.addEventListener("error", (e: ErrorEvent) => {
      if (this.worker === worker) this.on.crashed(shortWorkerError(e.message ?? "") || "uncaught error");
    });
    worker.addEventListener("close", (e: Event) => {
      if (this.worker === worker) this.on.crashed(`worker exited with code ${(e as CloseEvent).code}`);
    });
  }

  /** Throws if the message cannot be cloned. */
  post(message: ToWorker, transfer: Transferable[] = []): void {
    this.worker?.postMessage(message, transfer);
  }

  /** Forget the current worker and terminate it; terminate() interrupts running JS. Returns the
   * jobs it held, which the caller settles or sends elsewhere. */
  retire(): Job[] {
    const worker = this.worker;
    const jobs = this.jobs;
    this.worker = null;
    this.ready = false;
    this.jobs = [];
    this.endStep();
    if (!worker) return jobs;
    // terminate() cannot interrupt native code (a regex backtracking): report when the thread
    // really ended, so a worker that lingers shows up in the logs.
    const stopping = performance.now();
    worker.addEventListener("close", () => this.on.stopped(Math.round(performance.now() - stopping)), {
      once: true,
    });
    try {
      worker.terminate();
    } catch {
      // already gone
    }
    return jobs;
  }
}
