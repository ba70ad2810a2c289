// Group commit: the run writes issued during one turn of the event loop (new runs, queued →
// running, final states) share one transaction, committed on the next turn; each caller's promise
// settles only after that commit, so a 201/202 still means the run is on disk. A commit costs far
// more than the rows in it (a WAL frame per dirty page; the tails of the run indexes are dirtied by
// every run): measured in docs/benchmarks.md. Under load, commits are spaced at least WINDOW_MS
// apart so that runs finishing one after another on the workers share a commit; a write after a
// quiet spell still commits on the next turn.
// While the checkpoint thread restarts the WAL the next commit waits for it (src/db/write-gate.ts).
import type { Database } from "bun:sqlite";
import { writeGateOf } from "../db/write-gate.ts";

interface Pending {
  fn: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface WriteBatcher {
  /**
   * Runs `fn` (synchronous SQL) inside the next group transaction; resolves after it commits.
   * `urgent`: commit on the next turn even under load (a worker waits on it: queued → running).
   */
  write<T>(fn: () => T, urgent?: boolean): Promise<T>;
}

/** Minimum spacing of two commits under load; at most this much latency is added to a write. */
export const WINDOW_MS = 1;

export function createWriteBatcher(db: Database, windowMs = WINDOW_MS): WriteBatcher {
  let pending: Pending[] = [];
  let scheduled = false;
  let timer: Timer | null = null;
  let lastFlush = Number.NEGATIVE_INFINITY;
  const gate = writeGateOf(db);
  let gated = false;
  // Built once: bun:sqlite's transaction() defines its deferred/immediate/exclusive variants on
  // every call (~0.7 % of a sync run when called per commit).
  const runAll = db.transaction((items: Pending[]) => items.map((it) => it.fn()));

  function flush() {
    if (timer) clearTimeout(timer);
    timer = null;
    if (gate.held) {
      // `scheduled` stays true: writes issued meanwhile join this commit, which runs on release.
      if (!gated) {
        gated = true;
        gate.whenOpen(() => {
          gated = false;
          flush();
        });
      }
      return;
    }
    scheduled = false;
    lastFlush = performance.now();
    const items = pending;
    pending = [];
    let results: unknown[];
    try {
      results = runAll(items);
    } catch {
      // One failing write must not fail the others: the group rolled back, so each write is
      // retried alone and only the faulty one rejects.
      for (const it of items) {
        try {
          it.resolve(db.transaction(it.fn)());
        } catch (e) {
          it.reject(e);
        }
      }
      return;
    }
    for (let i = 0; i < items.length; i++) items[i]!.resolve(results[i]);
  }

  return {
    write<T>(fn: () => T, urgent = false): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
        if (urgent && timer) {
          // Waiting out the window: commit on the next turn instead (flush clears the timer).
          clearTimeout(timer);
          timer = null;
          setImmediate(flush);
        } else if (!scheduled) {
          scheduled = true;
          const wait = urgent ? 0 : lastFlush + windowMs - performance.now();
          if (wait > 0) timer = setTimeout(flush, wait);
          else setImmediate(flush);
        }
      });
    },
  };
}
