// The pool's memory bound. Workers are threads of the server's process and Bun gives a worker's
// heap no limit of its own (node's `resourceLimits` is accepted and ignored): one Schematron
// XPath doubling a string took the process to 5.8 GB within its step's 40 s time limit, on a host
// with less memory an out-of-memory kill of the whole server. So the process's resident memory is
// read a few times a second, and past the limit the pool stops the step that has run longest
// (pool.ts #overMemory): ending its worker frees its heap (measured: 1.6 GB back within ~0.3 s of
// the worker's end). The next step is stopped only if the memory is still over once that worker
// has ended, so one hog costs one step, not every step running beside it.
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";

/** How often the process's memory is read (one syscall-free read of the resident set). */
const EVERY_MS = 200;
/** After a stop: the worker's end, then this long for its memory to be given back, before the next look. */
const SETTLE_MS = 300;
/** A stopped worker that has not ended after this long does not hold the watch any longer. */
const MAX_WAIT_MS = 5000;

export class MemoryWatch {
  #timer: ReturnType<typeof setInterval>;
  /** The worker stopped last, until it has ended and its memory had time to go. */
  #waitingFor: { worker: number; until: number } | null = null;

  constructor(
    readonly limitBytes: number,
    probe: () => number = () => process.memoryUsage.rss(),
    /** Stops one step; the id of the worker it stopped, or null when no step was running. */
    stopOne: () => number | null,
  ) {
    this.#timer = setInterval(() => {
      const now = performance.now();
      if (this.#waitingFor && now < this.#waitingFor.until) return;
      this.#waitingFor = null;
      if (probe() <= limitBytes) return;
      const worker = stopOne();
      if (worker !== null) this.#waitingFor = { worker, until: now + MAX_WAIT_MS };
    }, EVERY_MS);
    this.#timer.unref();
  }

  /** A worker has ended: if it is the one stopped last, look again once its memory is back. */
  released(worker: number): void {
    if (this.#waitingFor?.worker === worker)
      this.#waitingFor = { worker, until: performance.now() + SETTLE_MS };
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** The memory this process may use: the container's limit (cgroup v2, then v1) or the host's. */
export function availableMemoryBytes(): number {
  const host = totalmem();
  for (const file of ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]) {
    try {
      const n = Number(readFileSync(file, "utf8").trim());
      // "max" (no limit) reads as NaN; v1 says "no limit" with a huge number.
      if (Number.isFinite(n) && n > 0 && n < host) return n;
    } catch {
      // not in a cgroup of that version
    }
  }
  return host;
}

/** `memory_limit_mb` as configured, 0 meaning 80% of the memory available to the process. */
export function memoryLimitBytes(configuredMb: number): number {
  return configuredMb > 0 ? configuredMb * 1048576 : Math.floor(availableMemoryBytes() * 0.8);
}
