// Group commit: the run writes issued during one turn of the event loop (new runs, queued →
// running, final states) share one transaction; each caller's promise settles only after that
// commit, so a 201/202 still means the run is on disk. A commit costs far more than the rows in
// it — on SQLite a WAL frame per dirty page (the tails of the run indexes are dirtied by every
// run), on PostgreSQL a round trip and a WAL flush — measured in docs/benchmarks.md.
//
// SQLite: one synchronous transaction on the next turn (or, with a window set, at least that long
// after the last commit, so that runs finishing one after another share a commit); while the checkpoint
// thread restarts the WAL the next commit waits for it (src/db/write-gate.ts).
// PostgreSQL: the writes that gather while earlier groups are in flight form the next group; at
// most PG_GROUPS groups are in flight at once (each holds a pooled connection).
import type { Db, Program } from "../db/program.ts";
import type { SqliteDb } from "../db/sqlite.ts";
import { writeGateOf } from "../db/write-gate.ts";

interface Pending {
  make: () => Program<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface WriteBatcher {
  /**
   * Runs the program `make()` builds inside the next group transaction; resolves after it
   * commits. `urgent`: commit on the next turn even under load (a worker waits on it: queued →
   * running). `make` may be called twice (a group that failed is retried write by write).
   */
  write<T>(make: () => Program<T>, urgent?: boolean): Promise<T>;
}

/**
 * Minimum spacing of two SQLite commits under load, ms: the default of the `commit_window_us`
 * setting. 0: the writes of a turn commit on the next turn, and the writes that come while one
 * commit runs share the next. Was 1 ms, which left the core idle ~25 % of the time under measure
 * 1's load (every request in flight waited for the timer) and made one client's sequential runs
 * wait ~1 ms each. 0 gave 1.44× the sync runs/s at 16 connections, 3× at 4 and 5.5× at 1, with a
 * shorter p99 once the WAL restart stopped holding commits over a long file sync
 * (checkpoint-worker.ts; docs/benchmarks.md, fifteenth pass).
 */
export const WINDOW_MS = 0;
/** Group transactions in flight at once on PostgreSQL. */
export const PG_GROUPS = 4;

export function createWriteBatcher(db: Db, windowMs = WINDOW_MS): WriteBatcher {
  return db.dialect === "sqlite" ? sqliteBatcher(db as SqliteDb, windowMs) : pgBatcher(db);
}

function* group(items: Pending[]): Program<unknown[]> {
  const out: unknown[] = [];
  for (const it of items) out.push(yield* it.make());
  return out;
}

function sqliteBatcher(db: SqliteDb, windowMs: number): WriteBatcher {
  let pending: Pending[] = [];
  let scheduled = false;
  let timer: Timer | null = null;
  let lastFlush = Number.NEGATIVE_INFINITY;
  const gate = writeGateOf(db.raw);
  let gated = false;

  function flush() {
    if (timer) clearTimeout(timer);
    timer = null;
    // Another thread of the process writing (the shared lock, write-gate.ts) puts it off the same way.
    const lock = gate.lock;
    if (gate.held || (lock && !lock.tryAcquire())) {
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
    try {
      commit();
    } finally {
      lock?.release();
    }
  }

  function commit() {
    scheduled = false;
    lastFlush = performance.now();
    const items = pending;
    pending = [];
    let results: unknown[];
    try {
      results = db.txSync(group(items));
    } catch {
      // One failing write must not fail the others: the group rolled back, so each write is
      // retried alone and only the faulty one rejects.
      for (const it of items) {
        try {
          it.resolve(db.txSync(it.make()));
        } catch (e) {
          it.reject(e);
        }
      }
      return;
    }
    for (let i = 0; i < items.length; i++) items[i]!.resolve(results[i]);
  }

  return {
    write<T>(make: () => Program<T>, urgent = false): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ make, resolve: resolve as (v: unknown) => void, reject });
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

function pgBatcher(db: Db): WriteBatcher {
  let pending: Pending[] = [];
  let scheduled = false;
  let inFlight = 0;

  async function commit(items: Pending[]) {
    try {
      // Side by side on the transaction's connection: the statements of the group are pipelined.
      const results = await db.txGroup(items.map((it) => it.make));
      for (let i = 0; i < items.length; i++) items[i]!.resolve(results[i]);
    } catch {
      // As on SQLite: the group rolled back; each write is retried alone.
      await Promise.all(
        items.map((it) =>
          db.tx(it.make).then(
            (v) => it.resolve(v),
            (e) => it.reject(e),
          ),
        ),
      );
    }
  }

  function flush() {
    scheduled = false;
    if (!pending.length || inFlight >= PG_GROUPS) return;
    const items = pending;
    pending = [];
    inFlight++;
    void commit(items).finally(() => {
      inFlight--;
      if (pending.length && !scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  }

  return {
    write<T>(make: () => Program<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ make, resolve: resolve as (v: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
