// One writer at a time among the threads of one process that write to the same SQLite file (the
// main thread and the HTTP threads, src/http/threads/). SQLite allows one writer at a time
// anyway, but a connection that meets another's write lock waits in SQLite's busy handler, which
// puts its whole thread to sleep for 1, 2, 5… ms: every request of that thread waits. So the
// threads take this lock, a word in shared memory, before they BEGIN: a group commit that finds
// it taken is put off (its writes gather, the next group is larger) and runs when the lock is
// released (Atomics.waitAsync), while its thread goes on serving; the WAL restart's hold
// (checkpointer.ts) takes it too. Measured: two connections that write by turns pay ~6–14 µs a
// run for the page cache each finds invalid after the other's commit (docs/benchmarks.md,
// eighteenth pass), which the threads' extra cores outweigh.

/** What another thread needs to share the lock (posted with postMessage). */
export interface WriteLockInit {
  buffer: SharedArrayBuffer;
}

/** Spins before sleeping: a commit holds the lock ~100–300 µs, a spin costs nothing useful. */
const SPINS = 64;
/** A blocking wait wakes at least this often to look again (a notify can be missed). */
const WAIT_MS = 5;

export class WriteLock {
  readonly #word: Int32Array;
  /** Microseconds the lock was held, by every thread: the serial share of the writes. */
  readonly #heldUs: BigInt64Array;
  /** Nested acquisitions by this thread (a group commit's transaction inside its flush). */
  #depth = 0;
  #since = 0;

  private constructor(
    readonly init: WriteLockInit,
    /** This thread's owner number (never 0, which means free). */
    readonly owner: number,
  ) {
    this.#word = new Int32Array(init.buffer, 0, 1);
    this.#heldUs = new BigInt64Array(init.buffer, 8, 1);
  }

  /** A new lock, held by nobody; `owner` is this thread's number (the main thread: 1). */
  static create(owner = 1): WriteLock {
    return new WriteLock({ buffer: new SharedArrayBuffer(16) }, owner);
  }

  /**
   * Seconds the lock has been held so far, all threads together: what bounds the runs/s of any
   * number of threads (metric assay_db_write_lock_held_seconds_total; the bench's projection).
   */
  heldSeconds(): number {
    return Number(Atomics.load(this.#heldUs, 0)) / 1e6;
  }

  /** The same lock from another thread, which numbers itself `owner` (unique, > 0). */
  static attach(init: WriteLockInit, owner: number): WriteLock {
    if (!(owner > 0)) throw new RangeError("owner must be > 0");
    return new WriteLock(init, owner);
  }

  /** True while another thread holds it. */
  get heldElsewhere(): boolean {
    const v = Atomics.load(this.#word, 0);
    return v !== 0 && v !== this.owner;
  }

  /** Takes it now if nobody else holds it (again if this thread does). */
  tryAcquire(): boolean {
    if (this.#depth > 0) {
      this.#depth++;
      return true;
    }
    if (Atomics.compareExchange(this.#word, 0, 0, this.owner) !== 0) return false;
    this.#depth = 1;
    this.#since = performance.now();
    return true;
  }

  /**
   * Takes it, waiting on this thread if another holds it. For the rare write that cannot be put
   * off (a transaction begun between two checks); group commits use tryAcquire and whenFree.
   */
  acquire(): void {
    for (let i = 0; !this.tryAcquire(); i++) {
      if (i < SPINS) continue;
      const v = Atomics.load(this.#word, 0);
      if (v !== 0) Atomics.wait(this.#word, 0, v, WAIT_MS);
    }
  }

  release(): void {
    if (this.#depth === 0) return;
    if (--this.#depth > 0) return;
    Atomics.add(this.#heldUs, 0, BigInt(Math.round((performance.now() - this.#since) * 1000)));
    Atomics.store(this.#word, 0, 0);
    Atomics.notify(this.#word, 0);
  }

  /** Calls `fn` on a later turn, once the lock was seen free (it may be taken again by then). */
  whenFree(fn: () => void): void {
    const v = Atomics.load(this.#word, 0);
    if (v === 0 || v === this.owner) {
      setImmediate(fn);
      return;
    }
    // waitAsync resolves on release's notify, or at once when the word changed meanwhile.
    const w = Atomics.waitAsync(this.#word, 0, v, WAIT_MS * 20);
    if (w.async) void w.value.then(fn);
    else setImmediate(fn);
  }
}
