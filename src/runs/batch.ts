// Group commit: the run writes issued during one turn of the event loop (new runs, queued →
// running, final states) share one transaction, committed on the next turn; each caller's promise
// settles only after that commit, so a 201/202 still means the run is on disk. A commit costs far
// more than the rows in it (WAL frames, and the checkpoints they trigger): measured in
// docs/benchmarks.md.
import type { Database } from "bun:sqlite";

interface Pending {
  fn: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface WriteBatcher {
  /** Runs `fn` (synchronous SQL) inside the next group transaction; resolves after it commits. */
  write<T>(fn: () => T): Promise<T>;
}

export function createWriteBatcher(db: Database): WriteBatcher {
  let pending: Pending[] = [];
  let scheduled = false;

  function flush() {
    scheduled = false;
    const items = pending;
    pending = [];
    let results: unknown[];
    try {
      results = db.transaction(() => items.map((it) => it.fn()))();
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
    write<T>(fn: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
