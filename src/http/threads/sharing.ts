// What the main thread shares with its HTTP threads (ASSAY_HTTP_THREADS > 1) so that they serve
// sync runs themselves (thread-runs.ts): on SQLite the write lock (src/db/write-lock.ts) — taken
// here by the main connection too — and the rate-limit budgets (ratelimit-memory.ts); on both
// backends the board (board.ts) with the queue's depth, published here, and the threads' request
// counts; and the threads' reports, added to this thread's metrics when /metrics is read.
import type { Config } from "../../config.ts";
import type { AnyDb } from "../../db/open.ts";
import { writeGateOf } from "../../db/write-gate.ts";
import { WriteLock } from "../../db/write-lock.ts";
import type { Metrics } from "../../metrics/registry.ts";
import { MemoryBudgets } from "../ratelimit-memory.ts";
import { ThreadBoard } from "./board.ts";
import type { HttpThreads } from "./index.ts";
import { ThreadCounts } from "./relay.ts";
import type { ThreadReport, ThreadRunsInit } from "./thread-runs.ts";

/**
 * How often the queue's depth is published for the threads (ms): their sync runs' 503 of a full
 * queue reads it at most this late. A write per change would need a hook in every writer of it.
 */
export const DEPTH_EVERY_MS = 10;

/** What the HTTP threads did, summed, for the gauges that count this process's work. */
export interface ThreadTotals {
  inlineJobs: number;
  statements: number;
  transactions: number;
}

export function shareWithThreads(config: Config, db: AnyDb, queueDepth: () => number) {
  const lock = db.dialect === "sqlite" ? WriteLock.create(1) : null;
  if (lock && db.dialect === "sqlite") {
    writeGateOf(db.raw).share(lock);
    // Other connections write too: a transaction takes SQLite's write lock at BEGIN (sqlite.ts).
    db.beginImmediate();
  }
  const budgets = db.dialect === "sqlite" ? MemoryBudgets.create() : null;
  const board = ThreadBoard.create(config.http_threads);
  const counts = new ThreadCounts(config.http_threads);
  counts.attachBoard(board);
  const totals: ThreadTotals = { inlineJobs: 0, statements: 0, transactions: 0 };
  const publish = () => {
    board.queueDepth = queueDepth();
  };
  publish();
  const timer = setInterval(publish, DEPTH_EVERY_MS);
  timer.unref?.();
  let metrics: Metrics | null = null;
  return {
    budgets,
    counts,
    totals,
    /** For startHttpThreads; `autoCheckpoint`: the main connection's setting now. */
    runsInit(autoCheckpoint: number): ThreadRunsInit {
      return {
        config,
        lock: lock?.init ?? null,
        autoCheckpoint,
        budgets: budgets?.init ?? null,
        board: board.init,
      };
    },
    /** Where the threads' reports go: this registry (histograms, counters) and `totals`. */
    reportTo(m: Metrics) {
      metrics = m;
      if (lock)
        m.gauge(
          "assay_db_write_lock_held_seconds_total",
          "Time the threads of this server held the SQLite write lock (one writer at a time): the serial share of the writes.",
          () => [[{}, lock.heldSeconds()]],
          "counter",
        );
    },
    onReport(r: ThreadReport) {
      metrics?.absorb(r.delta);
      totals.inlineJobs += r.inlineJobs;
      totals.statements += r.statements;
      totals.transactions += r.transactions;
    },
    /** Once the threads run: /metrics asks them first. */
    started(threads: HttpThreads) {
      metrics?.beforeRender(() => threads.collect());
    },
    stop() {
      clearInterval(timer);
    },
  };
}
export type ThreadSharing = ReturnType<typeof shareWithThreads>;
