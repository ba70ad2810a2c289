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

export class WorkerSlot<Job> {
  worker: Worker | null = null;
  ready = false;
  everReady = false;
  job: Job | null = null;
  /** Keys whose config this worker holds, as far as we know: those are sent without config. */
  readonly known = new Lru<string, true>(CONFIG_CACHE_SIZE);
  respawnTimer?: Timer;

  constructor(
    readonly id: number,
    private readonly url: URL | string,
    private readonly on: SlotHandlers,
  ) {}

  get idle(): boolean {
    return this.worker !== null && this.ready && this.job === null;
  }

  spawn(): void {
    this.respawnTimer = undefined;
    this.ready = false;
    this.known.clear();
    let worker: Worker;
    try {
      worker = new Worker(this.url);
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

  /** Forget the current worker and terminate it; terminate() interrupts running JS. */
  retire(): void {
    const worker = this.worker;
    this.worker = null;
    this.ready = false;
    this.job = null;
    if (!worker) return;
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
  }
}
