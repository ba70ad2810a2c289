// Runs written once in their final state (the sync runs a client waits for) that gather for the
// same group commit (src/runs/batch.ts) share one multi-row INSERT INTO runs, instead of one
// statement each: under measure 1's load a group holds ~11 runs, and a statement costs ~1.5 µs
// of binding, stepping and resetting beyond its row on SQLite, plus a trip through the program
// driver (docs/benchmarks.md, ninth pass). The submissions go to the driver in one step
// (insertEach): SQLite inserts them one by one, for each rowid; PostgreSQL as one multi-row
// INSERT … RETURNING. On PostgreSQL every statement is a round trip and a parse, bind and
// execute of its own, so a group of runs costs three statements (the submissions, the runs, and
// each org's webhooks read once: `once`, src/db/program.ts) where it cost three a run
// (docs/benchmarks.md, twentieth pass).
//
// Same transaction, same rows, same promises: each caller's promise settles after the commit with
// its own submission id. If the shared write fails, each run is written again alone, so only a
// faulty one rejects (as the batcher does for its writes).
//
// With the writer thread (src/db/writer.ts) the same group goes there as statements and values
// (`wire`), one group in flight at a time: the runs that arrive meanwhile form the next one. A run
// whose writes depend on what it reads in the transaction (the webhook outbox of an org that has
// webhooks) is written by the main connection's group commit, as without the thread.
import { type Param, type Program, ReferenceGone, each, insert, insertEach, run } from "../db/program.ts";
import type { WriterThread } from "../db/writer.ts";
import type { RowStatement, WireRun } from "../db/writer-protocol.ts";
import type { WriteBatcher } from "./batch.ts";

/** Rows per statement: 16 parameters each, far below SQLite's limit, and few statements to prepare. */
const ROWS_PER_STATEMENT = 64;
const COLUMNS =
  "INSERT INTO runs (id, org_id, workflow_id, workflow_version, submission_id, status, steps, created_by, created_by_name, created_at, attempts, started_at, summary, error, finished_at, duration_ms) VALUES ";
const ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)";
/** Where row() puts the submission id. */
const SID_AT = 4;
const statements: string[] = [];
/** The INSERT of k rows (built once per k). */
export const insertFinalRuns = (k: number): string =>
  (statements[k] ??= COLUMNS + Array.from({ length: k }, () => ROW).join(", "));

/** One final run's part of the shared write. */
export interface FinalRows {
  /** The submission's INSERT (its id is the generated key `id`). */
  submission(): { sql: string; params: Param[] };
  /** The run row's values, in the order of the columns above (attempts excepted). */
  row(sid: number): Param[];
  /** What follows the run row in its transaction: its findings, the outbox. */
  after(): Program<void>;
  /**
   * Inside the transaction, synchronously: true when after() would write nothing (no findings,
   * no Idempotency-Key, and final hooks that know they write nothing for this run as of this
   * transaction's reads). A group's runs of an org without webhooks then skip it after the first.
   */
  idle(): boolean;
  /**
   * The same writes as statements for the writer thread (the row's submission id left at 0), or
   * null when one of them needs what the transaction reads.
   */
  wire(): WireRun | null;
  /**
   * The same run without its user (`created_by` null, the name kept): written when the user was
   * deleted while the run executed, as the deletion leaves a stored run's row (ON DELETE SET NULL).
   */
  withoutUser?(): FinalRows;
}

interface Entry {
  rows: FinalRows;
  resolve(sid: number): void;
  reject(e: unknown): void;
}

function* shared(list: readonly Entry[]): Program<number[]> {
  // The submissions in one step of the driver, each INSERT run alone for its rowid (a run row
  // needs it), in runs of the same statement (they all are today).
  const sids: number[] = [];
  for (let at = 0; at < list.length; ) {
    const first = list[at]!.rows.submission();
    const params = [first.params];
    let next = at + 1;
    for (; next < list.length; next++) {
      const s = list[next]!.rows.submission();
      if (s.sql !== first.sql) break;
      params.push(s.params);
    }
    for (const id of yield* insertEach(first.sql, "id", params)) sids.push(id);
    at = next;
  }
  for (let at = 0; at < list.length; at += ROWS_PER_STATEMENT) {
    const part = list.slice(at, at + ROWS_PER_STATEMENT);
    const params: Param[] = [];
    part.forEach((e, i) => {
      for (const p of e.rows.row(sids[at + i]!)) params.push(p);
    });
    yield* run(insertFinalRuns(part.length), ...params);
  }
  // Each run's findings, Idempotency-Key link and outbox rows: independent of the other runs',
  // so on PostgreSQL their statements go side by side (`each`), as when each run was a program.
  const after: Program<void>[] = [];
  for (const e of list) if (!e.rows.idle()) after.push(e.rows.after());
  yield* each(after);
  return sids;
}

/** A run written alone (the fallback): the same statements as one row of shared(). */
export function* alone(rows: FinalRows): Program<number> {
  const s = rows.submission();
  const sid = yield* insert(s.sql, "id", ...s.params);
  yield* run(insertFinalRuns(1), ...rows.row(sid));
  yield* rows.after();
  return sid;
}

/** The run-row INSERTs of a group of `n` runs, ROWS_PER_STATEMENT at most each. */
export function rowStatements(n: number): RowStatement[] {
  const out: RowStatement[] = [];
  for (let at = 0; at < n; at += ROWS_PER_STATEMENT) {
    const k = Math.min(ROWS_PER_STATEMENT, n - at);
    out.push({ sql: insertFinalRuns(k), runs: Array.from({ length: k }, (_, i) => at + i), sidAt: SID_AT });
  }
  return out;
}

/**
 * A run written alone, after its group failed. Only here, off the common path: a run whose user
 * was deleted meanwhile failed on the foreign key, and is written again without the user.
 */
function writeAlone(batch: WriteBatcher, e: Entry): void {
  batch
    .write(() => alone(e.rows))
    .then(e.resolve, (error) => {
      const orphan = error instanceof ReferenceGone ? e.rows.withoutUser?.() : undefined;
      if (!orphan) return e.reject(error);
      batch.write(() => alone(orphan)).then(e.resolve, e.reject);
    });
}

export function createFinalRowsWriter(batch: WriteBatcher, thread: WriterThread | null = null) {
  /** The runs waiting for the next group commit; null once that commit has taken them. */
  let open: Entry[] | null = null;
  const onMain = (entry: Entry) => {
    if (open) {
      open.push(entry);
      return;
    }
    const list = [entry];
    open = list;
    // `make` runs when the group commits (and again if the group is retried write by write):
    // runs written from then on wait for the next commit.
    const make = () => {
      if (open === list) open = null;
      return shared(list);
    };
    batch.write(make).then(
      (sids) => {
        for (let i = 0; i < list.length; i++) list[i]!.resolve(sids[i]!);
      },
      () => {
        // A transaction that failed before its program ran (PostgreSQL: no connection for its
        // BEGIN) never called `make`: the list is still open, and runs added since are in it.
        // Closed now, so that each of them is written below, and none waits for a commit that
        // will not come.
        if (open === list) open = null;
        for (const e of list) writeAlone(batch, e);
      },
    );
  };
  if (!thread)
    return (rows: FinalRows): Promise<number> =>
      new Promise((resolve, reject) => onMain({ rows, resolve, reject }));

  // The writer thread's side: the runs for the next group, and whether one is in flight.
  let queue: { entry: Entry; wire: WireRun }[] = [];
  let scheduled = false;
  let inFlight = false;
  const schedule = () => {
    if (scheduled || inFlight || !queue.length) return;
    scheduled = true;
    setImmediate(flush);
  };
  function flush() {
    scheduled = false;
    if (inFlight || !queue.length) return;
    if (!thread!.alive) {
      const list = queue;
      queue = [];
      for (const q of list) onMain(q.entry);
      return;
    }
    // A WAL restart holds the gate: the group waits for it, as the main connection's would.
    if (thread!.gate.held) {
      scheduled = true;
      thread!.gate.whenOpen(flush);
      return;
    }
    const list = queue;
    queue = [];
    inFlight = true;
    thread!
      .commit(
        list.map((q) => q.wire),
        rowStatements(list.length),
      )
      .then(
        (sids) => {
          for (let i = 0; i < list.length; i++) list[i]!.entry.resolve(sids[i]!);
        },
        () => {
          // Nothing of the group was written: each run again, alone, on the main connection.
          for (const { entry: e } of list) writeAlone(batch, e);
        },
      )
      .finally(() => {
        inFlight = false;
        schedule();
      });
  }
  return (rows: FinalRows): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      const entry = { rows, resolve, reject };
      const wire = thread.alive ? rows.wire() : null;
      if (!wire) return onMain(entry);
      queue.push({ entry, wire });
      schedule();
    });
}
