// Numbers the threads of one process share without a message (ASSAY_HTTP_THREADS > 1): the
// queue's depth, which the main thread keeps and an HTTP thread's sync runs are bounded by (the
// 503 of a full queue), and the requests each HTTP thread served itself, which the main thread
// counts in assay_http_thread_requests_total — read at once, so a metric read right after an
// answer includes it. A message per request would cost a thread's event loop a wake-up each.

/** What a thread needs to attach to the same board (posted with postMessage). */
export interface BoardInit {
  buffer: SharedArrayBuffer;
  threads: number;
}

export class ThreadBoard {
  readonly #depth: Int32Array;
  readonly #served: BigInt64Array;

  private constructor(readonly init: BoardInit) {
    this.#depth = new Int32Array(init.buffer, 0, 1);
    this.#served = new BigInt64Array(init.buffer, 8, init.threads);
  }

  /** A board for `threads` threads in all (the main thread is 0). */
  static create(threads: number): ThreadBoard {
    return new ThreadBoard({ buffer: new SharedArrayBuffer(8 + 8 * threads), threads });
  }

  static attach(init: BoardInit): ThreadBoard {
    return new ThreadBoard(init);
  }

  /** Runs waiting for a worker, as the main thread last published them. */
  get queueDepth(): number {
    return Atomics.load(this.#depth, 0);
  }

  set queueDepth(n: number) {
    Atomics.store(this.#depth, 0, Math.min(n, 0x7fffffff));
  }

  /** Requests thread `i` answered itself so far. */
  served(i: number): number {
    return Number(Atomics.load(this.#served, i));
  }

  countServed(i: number): void {
    Atomics.add(this.#served, i, 1n);
  }
}
