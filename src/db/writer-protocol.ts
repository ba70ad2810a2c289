// Messages between the main thread (src/db/writer.ts) and the writer thread (writer-thread.ts).
import type { Param } from "./program.ts";

export interface Statement {
  sql: string;
  params: Param[];
}

/**
 * A one-row read the main thread made for a run (the webhook outbox's cache generation, outside
 * any transaction) and its row as JSON (null: none): the thread repeats it inside its
 * transaction, and a different answer fails the group (its runs are then written on the main
 * connection, where the read is exact).
 */
export interface Read {
  sql: string;
  params: Param[];
  expect: string;
}

/** One final run of a group: its submission, its run row, and the statements after it. */
export interface WireRun {
  /** What its writes were decided on. */
  reads: Read[];
  /** The submission's INSERT; its rowid is the run row's submission id. */
  submission: Statement;
  /** The run row's values; the submission id goes at the statement's `sidAt`. */
  row: Param[];
  /** Its findings (and anything else it writes), in order, after every run row. */
  after: Statement[];
}

/** A multi-row INSERT of run rows: which runs of the group it holds, in order. */
export interface RowStatement {
  sql: string;
  runs: number[];
  sidAt: number;
}

export type ToWriter =
  /**
   * `autoCheckpoint`: the connection's `wal_autocheckpoint`, the main connection's (0 while the
   * checkpoint thread copies the WAL, src/db/checkpointer.ts; SQLite's 1000 if it failed).
   */
  | { t: "open"; path: string; autoCheckpoint: number }
  /** The checkpoint thread failed after the start: checkpoint in the commits again, as the main connection does. */
  | { t: "autocheckpoint"; pages: number }
  | { t: "group"; id: number; runs: WireRun[]; rowStatements: RowStatement[] }
  | { t: "stop" };

export type FromWriter =
  | { t: "opened" }
  | { t: "openfailed"; message: string }
  /** The group's submission ids, in the order of its runs: committed. */
  | { t: "committed"; id: number; sids: number[] }
  /** Rolled back: nothing of the group was written. */
  | { t: "failed"; id: number; message: string }
  | { t: "stopped" };
