// The SQLite driver of the program interface (src/db/program.ts). Programs run synchronously on
// the one writer connection: a transaction is a single synchronous block (bun:sqlite requires
// it), so nothing else can interleave with it, and the hot paths pay no await per statement.
import { type Database, SQLiteError, type Statement } from "bun:sqlite";
import { writeGateOf } from "./write-gate.ts";
import {
  type Db,
  DatabaseUnavailable,
  type Op,
  type Program,
  type TxOptions,
  ReferenceGone,
  UniqueViolation,
  get,
} from "./program.ts";

/** Prepared statements kept per connection; dynamic SQL (IN lists) beyond this starts over. */
const STATEMENT_CACHE = 1000;
/** How long /readyz waits for another process's write lock before it answers 503. */
const PING_WAIT_MS = 1000;
const PING_RETRY_MS = 50;
/** A transaction that failed on the lock sooner than this did not wait in the busy handler (5 s). */
const FAILED_AT_ONCE_MS = 1000;

export interface SqliteDb extends Db {
  readonly dialect: "sqlite";
  /** The connection, for SQLite's own machinery (checkpoints, backup, the write gate). */
  readonly raw: Database;
  /** Runs a program now, synchronously (each statement commits on its own). */
  execSync<T>(p: Program<T>): T;
  /** Runs a program in one transaction, synchronously. */
  txSync<T>(p: Program<T>, opts?: TxOptions): T;
  /** The cache generation, read synchronously (src/db/generation.ts). */
  generation(): number;
  /**
   * Another connection of this process writes too (the writer thread, src/db/writer.ts): every
   * transaction takes the write lock at BEGIN from now on. A deferred one that read first would
   * otherwise fail at its first write (SQLITE_BUSY, no wait) if the other committed meanwhile.
   */
  beginImmediate(): void;
}

/** The message of a transaction that met another process's write lock. */
export const LOCKED = "the database is locked by another process";

/** Engine errors become the driver-neutral ones; anything else is a bug and stays as it is. */
export function translateSqliteError(e: unknown): unknown {
  if (e instanceof SQLiteError) {
    if (/UNIQUE|PRIMARY KEY/.test(e.message)) return new UniqueViolation(e.message);
    if (/FOREIGN KEY/.test(e.message)) return new ReferenceGone(e.message);
    if (/SQLITE_BUSY|database is locked/i.test(`${e.code} ${e.message}`))
      return new DatabaseUnavailable(LOCKED);
    // The disk (or a quota) is full: a 503 the client may retry once the operator made room, and
    // a warning that says so, not a 500 logged as our bug. SQLite rolled the transaction back.
    if (/SQLITE_FULL|disk is full/i.test(`${e.code} ${e.message}`))
      return new DatabaseUnavailable("the disk holding the database is full");
  }
  return e;
}

export function createSqliteDb(db: Database): SqliteDb {
  const statements = new Map<string, Statement>();
  const prepared = (sql: string): Statement => {
    let st = statements.get(sql);
    if (!st) {
      if (statements.size >= STATEMENT_CACHE) statements.clear();
      st = db.prepare(sql);
      statements.set(sql, st);
    }
    return st;
  };
  const stats = { statements: 0, transactions: 0 };
  const step = (o: Op): unknown => {
    if (o.op === "once") return drive(o.load());
    if (o.op === "each") return o.programs.map((p) => drive(p));
    if (o.op === "alone") return drive(o.program);
    stats.statements++;
    const st = prepared(o.sql);
    switch (o.op) {
      case "get":
        return st.get(...o.params);
      case "all":
        return st.all(...o.params);
      case "run":
        return st.run(...o.params).changes;
      case "insert":
        return Number(st.run(...o.params).lastInsertRowid);
      case "insertEach": {
        stats.statements += o.rows.length - 1;
        const ids: number[] = new Array(o.rows.length);
        for (let i = 0; i < o.rows.length; i++) ids[i] = Number(st.run(...o.rows[i]!).lastInsertRowid);
        return ids;
      }
    }
  };
  const drive = <T>(p: Program<T>): T => {
    let r = p.next();
    while (!r.done) {
      let out: unknown;
      try {
        out = step(r.value);
      } catch (e) {
        r = p.throw(translateSqliteError(e));
        continue;
      }
      r = p.next(out);
    }
    return r.value;
  };
  // Built once: bun:sqlite's transaction() defines its variants on every call.
  const inTx = db.transaction(<T>(p: Program<T>) => drive(p));
  let immediate = false;
  const gate = writeGateOf(db);
  const txSync = <T>(p: Program<T>, opts?: TxOptions): T => {
    stats.transactions++;
    // Other threads of the process write too (write-gate.ts): one at a time, never in SQLite's
    // busy handler. Callers that can wait looked at the gate first; this waits only for a race.
    const lock = gate.lock;
    lock?.acquire();
    try {
      return (immediate || opts?.immediate ? inTx.immediate(p) : inTx(p)) as T;
    } catch (e) {
      throw translateSqliteError(e);
    } finally {
      lock?.release();
    }
  };
  const readGeneration = generationReader(db);
  /** One try of the readiness probe, with no busy wait. */
  const tryReadAndLock = (): "ok" | "busy" | "failed" => {
    const saved = (db.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout;
    db.exec("PRAGMA busy_timeout = 0");
    try {
      const read = () => get("PRAGMA schema_version");
      // A writer of this process holds the lock (the writer thread's group, a WAL restart, an
      // HTTP thread): the process is writing, so reading is all there is left to prove.
      if (gate.held) drive(read());
      else txSync(read(), { immediate: true });
      return "ok";
    } catch (e) {
      return translateSqliteError(e) instanceof DatabaseUnavailable ? "busy" : "failed";
    } finally {
      db.exec(`PRAGMA busy_timeout = ${saved}`);
    }
  };
  const tx = <T>(make: () => Program<T>, opts?: TxOptions): Promise<T> => self.tx(make, opts);
  const self: SqliteDb = {
    dialect: "sqlite",
    raw: db,
    stats,
    execSync: drive,
    txSync,
    beginImmediate() {
      immediate = true;
    },
    exec<T>(p: Program<T>): Promise<T> {
      try {
        return Promise.resolve(drive(p));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    // One snapshot: the program in a deferred transaction, which takes no lock (WAL readers never
    // wait). Run without a break on this connection is not enough: outside a transaction each
    // statement reads its own snapshot, and another connection's commit between two of them (the
    // writer thread, an HTTP thread, the CLI) was seen by the second only (test/db-read-snapshot).
    read<T>(p: Program<T>): Promise<T> {
      try {
        return Promise.resolve(inTx.deferred(p) as T);
      } catch (e) {
        return Promise.reject(translateSqliteError(e));
      }
    },
    tx<T>(make: () => Program<T>, opts?: TxOptions): Promise<T> {
      // Another writer of this process holds the lock (a WAL restart, the writer thread's group,
      // write-gate.ts): wait for it here, between turns, and not in SQLite's busy handler, which
      // puts the whole thread to sleep.
      if (gate.held)
        return new Promise<T>((resolve, reject) => gate.whenOpen(() => tx(make, opts).then(resolve, reject)));
      const started = performance.now();
      try {
        return Promise.resolve(txSync(make(), opts));
      } catch (e) {
        // Another process (the CLI, a script) holds the write lock or committed since this
        // deferred transaction's first read: SQLite fails its first write at once, without the
        // busy handler a first write gets, and the client got a 503 for an admin command run
        // beside the server. Run again IMMEDIATE: it waits for the lock like any first write.
        // Not when the failure came after that wait (a lock held for the whole busy timeout).
        if (
          !immediate &&
          !opts?.immediate &&
          e instanceof DatabaseUnavailable &&
          e.message === LOCKED &&
          performance.now() - started < FAILED_AT_ONCE_MS
        )
          try {
            return Promise.resolve(txSync(make(), { ...opts, immediate: true }));
          } catch (again) {
            return Promise.reject(again);
          }
        return Promise.reject(e);
      }
    },
    txGroup(makes) {
      return this.tx(function* () {
        const out: unknown[] = [];
        for (const make of makes) out.push(yield* make());
        return out;
      });
    },
    generation: readGeneration,
    async ping() {
      // Ready means the file can be read and written now (docs/deploy.md). `SELECT 1` touches no
      // file: with another process holding the write lock (a BEGIN EXCLUSIVE in the sqlite3
      // shell) it answered ready while every write waited out the busy timeout and got a 503.
      // So the probe takes the write lock and lets it go, writing nothing; it does not wait in
      // SQLite's busy handler (that sleeps the whole thread) but looks again between turns.
      const deadline = Date.now() + PING_WAIT_MS;
      for (;;) {
        const got = tryReadAndLock();
        if (got !== "busy") return got === "ok";
        if (Date.now() >= deadline) return false;
        await Bun.sleep(PING_RETRY_MS);
      }
    },
    async close() {
      statements.clear();
      try {
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } finally {
        db.close();
      }
    },
  };
  return self;
}

/**
 * One read of the generation per turn of the event loop while this connection writes nothing:
 * the requests handled in one turn arrived together, so none can follow from another's answer (a
 * revocation's response leaves in its turn at the earliest; a request sent after it is read in a
 * later one). A write of our own in between (a PATCH reading back what it wrote) forces a fresh
 * read: total_changes() counts this connection's writes and, touching no table, costs no read
 * transaction; the generation read does, ~10 µs under load (docs/decisions.md).
 */
function generationReader(db: Database): () => number {
  // Prepared on first use: a connection to a database without the table (a tool's) never reads it.
  let sel: Statement<{ value: number }, []> | null = null;
  let changes: Statement<{ n: number }, []> | null = null;
  let turn: number | null = null;
  let turnChanges = -1;
  const clear = () => {
    turn = null;
  };
  return () => {
    changes ??= db.prepare<{ n: number }, []>("SELECT total_changes() AS n");
    sel ??= db.prepare<{ value: number }, []>("SELECT value FROM cache_generation WHERE id = 1");
    const n = changes.get()!.n;
    if (turn === null || n !== turnChanges) {
      if (turn === null) setImmediate(clear);
      turn = sel.get()!.value;
      turnChanges = n;
    }
    return turn;
  };
}
