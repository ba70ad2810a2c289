// A validation worker's own heap, read inside the worker after each job, against the pool's bound
// (pool.ts maxHeapBytes, `worker_max_heap_mb`): past it the pool replaces the worker between jobs,
// as past its count of XPath expressions (docs/execution.md, "Workers replaced for what they
// keep"). Bun gives a worker's heap no limit of its own, and no thread's memory can be read from
// outside it: the worker measures itself.
import { heapSize } from "bun:jsc";

/**
 * The worker's live heap: its own VM's objects and the memory they hold outside it (libxml2's
 * wasm memory, array buffers). Measured in a Bun 1.4.5 Worker: another worker holding 190 MB did
 * not show in it, while `process.memoryUsage().rss` and `bun:jsc` memoryUsage() read the whole
 * process. Counts garbage not yet collected: only a full collection makes it the heap a worker
 * keeps. ~1 µs a read, where process.memoryUsage() (its heapTotal, the VM's blocks) took ~65 µs.
 */
export const heapBytes = (): number => heapSize();

/**
 * After each job: whether this worker keeps more heap than `limit`. A full collection costs
 * 0.1–0.7 s at the heaps in question (measured), so one runs only when the heap, garbage included,
 * reads over the limit; and once one found the worker under it, the next waits until the heap reads
 * a quarter of the limit above what that one kept: a worker that keeps just under its limit is not
 * collected after every job.
 */
export class HeapCheck {
  /** The heap reading below which no collection is worth it (besides the limit). */
  #collectAbove = 0;
  #said = false;

  /**
   * The heap kept, when over `limit` (said once: the pool replaces this worker); null otherwise.
   * `collected`: a full collection has just run (GC_EVERY_BYTES), so the reading is what it keeps.
   */
  after(limit: number | undefined, collected: boolean): number | null {
    if (!limit || this.#said) return null;
    if (!collected) {
      if (heapBytes() <= Math.max(limit, this.#collectAbove)) return null;
      Bun.gc(true);
    }
    const kept = heapBytes();
    if (kept <= limit) {
      this.#collectAbove = kept + limit / 4;
      return null;
    }
    this.#said = true;
    return kept;
  }
}
