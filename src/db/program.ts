// Database work as programs: a store function is a generator that yields statements and gets
// their results back, and a driver runs it. The SQLite driver runs a program synchronously, so a
// transaction is one synchronous block on the server's only writer connection, as bun:sqlite
// requires; the PostgreSQL driver awaits each statement on a pooled connection. One program, two
// dialects: the stores are written once (docs/decisions.md, "One set of stores, two dialects").
//
//   function* rename(id: number, name: string): Program<User | null> {
//     yield* run("UPDATE users SET name = ? WHERE id = ?", name, id);
//     return yield* get<User>("SELECT * FROM users WHERE id = ?", id);
//   }
//
// SQL uses `?` placeholders (the PostgreSQL driver numbers them). Portable SQL only: ISO 8601
// text timestamps, INTEGER 0/1 booleans, JSON as TEXT, no dialect functions; where a statement
// must differ, the store picks it by `db.dialect` once, at creation.

export type Param = string | number | bigint | null | Uint8Array;

export type Op =
  | { op: "get"; sql: string; params: Param[] }
  | { op: "all"; sql: string; params: Param[] }
  | { op: "run"; sql: string; params: Param[] }
  /** An INSERT whose generated integer key is returned (rowid on SQLite, RETURNING on PostgreSQL). */
  | { op: "insert"; sql: string; params: Param[]; key: string }
  /** The same INSERT once per parameter list, in order: each row's generated key, as `insert`. */
  | { op: "insertEach"; sql: string; rows: Param[][]; key: string }
  /** A read whose answer may serve the rest of its transaction (see `once`). */
  | { op: "once"; key: string; load: () => Program<unknown> }
  /** Programs independent of one another, in one step (see `each`). */
  | { op: "each"; programs: Program<unknown>[] }
  /** A program that runs in turn with the other `alone` programs of its transaction (see `alone`). */
  | { op: "alone"; program: Program<unknown> };

export type Program<T> = Generator<Op, T, unknown>;

/** The first row, or null. */
export function* get<T>(sql: string, ...params: Param[]): Program<T | null> {
  return ((yield { op: "get", sql, params }) as T | undefined) ?? null;
}

/** Every row. */
export function* all<T>(sql: string, ...params: Param[]): Program<T[]> {
  return (yield { op: "all", sql, params }) as T[];
}

/** A statement that returns no rows; resolves to the number of rows it changed. */
export function* run(sql: string, ...params: Param[]): Program<number> {
  return (yield { op: "run", sql, params }) as number;
}

/** An INSERT without RETURNING; resolves to the generated value of the integer key column. */
export function* insert(sql: string, key: string, ...params: Param[]): Program<number> {
  return (yield { op: "insert", sql, params, key }) as number;
}

/**
 * `insert` for several rows of one statement, in one step of the driver: what a group commit's
 * runs write for their submissions (src/runs/final-rows.ts) without a program per row.
 */
export function* insertEach(sql: string, key: string, rows: Param[][]): Program<number[]> {
  return (yield { op: "insertEach", sql, rows, key }) as number[];
}

/**
 * The program `load()`, whose answer a driver may keep for the rest of the transaction under
 * `key`: the programs of one group commit (src/runs/batch.ts, final-rows.ts) then read what they
 * all need once. Only for reads whose answer the transaction's own writes cannot change. Outside
 * a transaction, and on SQLite (whose reads cost no round trip), `load()` runs every time.
 */
export function* once<T>(key: string, load: () => Program<T>): Program<T> {
  return (yield { op: "once", key, load }) as T;
}

/**
 * Programs that do not depend on one another's writes, as one step: PostgreSQL sends their
 * statements side by side on the transaction's connection (pipelined: the round trips overlap),
 * SQLite runs them one after the other. Their results, in order.
 */
export function* each<T>(programs: Program<T>[]): Program<T[]> {
  if (programs.length === 0) return [];
  if (programs.length === 1) return [yield* programs[0]!];
  return (yield { op: "each", programs }) as T[];
}

/**
 * `program`, with no statement of another `alone` program of the same transaction between its
 * own: for a read-then-write of a row that every such program reads and writes (the audit chain's
 * head, src/audit/append.ts). PostgreSQL runs the programs of a group commit side by side on one
 * connection (`Db.txGroup`, `each`), so two of them could otherwise both read the row before
 * either wrote it; SQLite runs programs one after the other anyway. Not nested (it would wait for
 * itself).
 */
export function* alone<T>(program: Program<T>): Program<T> {
  return (yield { op: "alone", program }) as T;
}

/** `SELECT count(*) AS n …`: the count as a number on both dialects. */
export function* count(sql: string, ...params: Param[]): Program<number> {
  const r = yield* get<{ n: number | string }>(sql, ...params);
  return Number(r?.n ?? 0);
}

/** A list's page as `countedPage` reads it. */
export interface PageQuery {
  /** `SELECT count(*) AS n …`: the list's count. */
  count: string;
  countParams: Param[];
  /** The page: a SELECT with its ORDER BY, LIMIT and OFFSET. */
  page: string;
  pageParams: Param[];
  /** The page's order again, over its output columns as `p.<column>` (see countedPage). */
  order: string;
  /** An output column of the page that is never null (its key). */
  key: string;
}

/**
 * A list's count and its page, read on one snapshot so that they agree while items are created or
 * deleted (a page never says `count: 1` beside two items).
 *
 * PostgreSQL: one statement (`exec`), instead of two statements in a REPEATABLE READ transaction
 * (`read`: BEGIN and COMMIT are two more round trips; a page of 50 runs answered 24 % more lists
 * a second, docs/benchmarks.md, "Lists: count and page"). The count is the left side of a LEFT
 * JOIN, so an empty page (past the end, or of an empty list) is still one row, carrying the count:
 * no second statement whose count could disagree with the empty page. Each side keeps its own plan
 * (an index-only count, an index-ordered page with LIMIT). The page is a MATERIALIZED CTE: as the
 * inner side of the join it would have to be rescannable, and a deep page's sort then writes out
 * all its rows once more (last of 100,000 runs: "external sort" instead of "external merge"). The
 * outer ORDER BY sorts the page's rows only, since a subquery's order is not promised to survive a
 * join.
 *
 * SQLite: the two statements in `read` (a deferred transaction, no round trip). The one statement
 * cost SQLite more than it saved: it copies the page into a temporary table and sorts it again
 * (+86 µs a page of 50 runs, +20 %).
 */
export function countedPage<T>(db: Db, q: PageQuery): Promise<{ count: number; rows: T[] }> {
  if (db.dialect === "sqlite")
    return db.read(
      (function* () {
        const n = yield* count(q.count, ...q.countParams);
        return { count: n, rows: yield* all<T>(q.page, ...q.pageParams) };
      })(),
    );
  return db.exec(
    (function* () {
      const rows = yield* all<Record<string, unknown>>(
        `WITH p AS MATERIALIZED (${q.page}) SELECT c.n AS list_count_, p.* FROM (${q.count}) AS c LEFT JOIN p ON 1 = 1 ORDER BY ${q.order}`,
        ...q.pageParams,
        ...q.countParams,
      );
      // No row at all when the driver answers a lookup by a key PostgreSQL cannot store (U+0000).
      const n = Number(rows[0]?.list_count_ ?? 0);
      const page: T[] = [];
      for (const r of rows) {
        if (r[q.key] === null || r[q.key] === undefined) continue;
        delete r.list_count_;
        page.push(r as T);
      }
      return { count: n, rows: page };
    })(),
  );
}

/** A program that only returns a value: for code paths that sometimes need no statement. */
// biome-ignore lint/correctness/useYield: a program without statements is still a program
export function* value<T>(v: T): Program<T> {
  return v;
}

/**
 * A program around a function that works on a SQLite connection directly (tools and tests of the
 * SQLite machinery); only the SQLite driver can run it inside its transaction.
 */
// biome-ignore lint/correctness/useYield: the work is done by fn, on the driver's connection
export function* lift<T>(fn: () => T): Program<T> {
  return fn();
}

/** Unique constraint violated: both drivers throw this, whatever the engine said. */
export class UniqueViolation extends Error {
  override name = "UniqueViolation";
}

/**
 * A foreign key refused a write: the row it names was deleted after the caller looked it up (by
 * another request, node or the CLI, between its read and its transaction). Both drivers throw
 * this; a store or service that can say what is gone maps it to its own answer, the HTTP layer
 * maps any other to 409 conflict (never 500).
 */
export class ReferenceGone extends Error {
  override name = "ReferenceGone";
}

/**
 * The database could not be reached or gave up on a statement (connection refused or lost,
 * server shutting down, statement timeout). Mapped to 503 service_unavailable with Retry-After.
 */
export class DatabaseUnavailable extends Error {
  override name = "DatabaseUnavailable";
}

/** The transaction lost a race it can win if run again (serialization failure, deadlock). */
export class RetryableConflict extends Error {
  override name = "RetryableConflict";
}

/**
 * A text value the database cannot store (PostgreSQL refuses U+0000 in text). A 400: the request
 * carried it.
 */
export class UnstorableText extends Error {
  override name = "UnstorableText";
}

export type Dialect = "sqlite" | "postgres";

export interface TxOptions {
  /**
   * Take the write lock at the start (SQLite BEGIN IMMEDIATE): for check-then-write programs.
   * PostgreSQL programs lock the rows they check (`FOR UPDATE`, see `forUpdate`).
   */
  immediate?: boolean;
}

/** A database, either dialect. Every method may throw DatabaseUnavailable. */
export interface Db {
  readonly dialect: Dialect;
  /** Runs a program; each statement commits on its own. */
  exec<T>(p: Program<T>): Promise<T>;
  /**
   * Runs a program of reads on one snapshot: a webhook delivery and its attempts agree whatever
   * commits meanwhile. PostgreSQL: a REPEATABLE READ READ ONLY transaction (each statement of
   * `exec`, or of a READ COMMITTED transaction, reads its own snapshot), two more round trips;
   * SQLite: a deferred transaction (no lock, no round trip). A list's count and page:
   * `countedPage`, one statement on PostgreSQL.
   */
  read<T>(p: Program<T>): Promise<T>;
  /**
   * Runs a program in one transaction. `make` may be called again when the transaction must be
   * retried (a serialization failure on PostgreSQL): it must build a fresh program each time.
   */
  tx<T>(make: () => Program<T>, opts?: TxOptions): Promise<T>;
  /**
   * Runs independent programs in one transaction and returns their results in order. SQLite runs
   * them one after the other; PostgreSQL runs them side by side on the transaction's connection,
   * so their statements are pipelined (one round trip carries many) — the group commit's case.
   * If any fails, the whole group is rolled back and the error is thrown.
   */
  txGroup(makes: (() => Program<unknown>)[]): Promise<unknown[]>;
  /** Reads the cache generation (src/db/generation.ts); at most one read per turn of the event loop. */
  generation(): number | Promise<number>;
  /** Whether the database answers (readiness). */
  ping(): Promise<boolean>;
  /** Statements and transactions run so far (metrics: round trips per run on PostgreSQL). */
  readonly stats: { statements: number; transactions: number };
  close(): Promise<void>;
}

/** `FOR UPDATE` on PostgreSQL, nothing on SQLite (whose writer holds the whole database). */
export const forUpdate = (d: Dialect) => (d === "postgres" ? " FOR UPDATE" : "");
