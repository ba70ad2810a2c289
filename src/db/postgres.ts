// The PostgreSQL driver of the program interface (src/db/program.ts), on Bun's built-in client
// (no driver in the binary). Each statement is awaited on a pooled connection; a transaction
// holds one connection (`sql.begin`) and is run again from a fresh program when PostgreSQL
// reports a serialization failure or a deadlock. Connection trouble of any kind becomes
// DatabaseUnavailable (503 with Retry-After); the pool reconnects on the next statement.
import { SQL } from "bun";
import { parseDatabaseUrl } from "./url.ts";
import { connectTimeoutOf } from "./url-query.ts";
import {
  type Db,
  DatabaseUnavailable,
  type Op,
  type Param,
  type Program,
  RetryableConflict,
  type TxOptions,
  ReferenceGone,
  UniqueViolation,
  UnstorableText,
} from "./program.ts";

/** Attempts of a transaction that keeps losing serialization races before the error stands. */
const TX_ATTEMPTS = 5;
/** PostgreSQL's OID of int8 (bigint): Bun returns it as a string, our programs want numbers. */
const INT8 = 20;

export interface PgOptions {
  /** Pool size (connections this node may hold). */
  max?: number;
  /** Statements running longer than this are canceled by the server (ms; 0 = no limit). */
  statementTimeoutMs?: number;
  /**
   * A transaction left idle this long is ended by the server, with its session (ms; 0 or absent:
   * the role's or database's setting). Sent as a startup parameter, so every connection of the
   * pool has it from its first statement, reconnections included.
   */
  idleInTransactionTimeoutMs?: number;
}

export interface PgDb extends Db {
  readonly dialect: "postgres";
  /** The client, for PostgreSQL's own machinery (LISTEN/NOTIFY, advisory locks, COPY). */
  readonly sql: SQL;
  /**
   * Runs `work` with a database that only reads, every statement of it on one snapshot: one
   * REPEATABLE READ READ ONLY transaction held on one connection until `work` ends, free of the
   * idle-in-transaction limit (it waits while the caller writes elsewhere). `assay db copy` reads
   * its source so: a run committed meanwhile is seen whole or not at all.
   */
  snapshot<T>(work: (db: Db) => Promise<T>): Promise<T>;
}

/** `?` placeholders numbered `$1…` for PostgreSQL, skipping quoted text and identifiers. */
export function numberPlaceholders(sql: string): string {
  let out = "";
  let n = 0;
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === "?") out += `$${++n}`;
    else out += ch;
  }
  return out;
}

const CONNECTION_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ERR_POSTGRES_TLS_NOT_AVAILABLE",
  "ERR_POSTGRES_TLS_UPGRADE_FAILED",
]);

/** Engine and connection errors become the driver-neutral ones; a bug stays as it is. */
export function translatePgError(e: unknown): unknown {
  if (
    e instanceof UniqueViolation ||
    e instanceof ReferenceGone ||
    e instanceof DatabaseUnavailable ||
    e instanceof RetryableConflict ||
    e instanceof UnstorableText
  )
    return e;
  const err = e as { code?: string; errno?: string; message?: string } | null;
  if (!err || typeof err !== "object") return e;
  const state = typeof err.errno === "string" ? err.errno : "";
  if (state === "23505") return new UniqueViolation(err.message ?? "unique violation");
  if (state === "23503") return new ReferenceGone(err.message ?? "foreign key violation");
  // 22021 character_not_in_repertoire, 22P05 untranslatable_character: U+0000 in a text value.
  if (state === "22021" || state === "22P05") return new UnstorableText(state);
  if (state === "40001" || state === "40P01") return new RetryableConflict(err.message ?? state);
  // 08: connection exception; 53: insufficient resources (too many connections); 57P: the server
  // is shutting down or starting; 57014: statement timeout (query_canceled); 25P03: the session
  // ended by idle_in_transaction_session_timeout (this node was paused mid-transaction: SIGSTOP, a
  // frozen VM; docs/postgres.md).
  // The server's error is kept as the cause: a pooler's refusal of a startup parameter (08P01) is
  // said at start with what to change (src/db/open.ts).
  if (/^(08|53|57P)/.test(state) || state === "57014" || state === "25P03")
    return new DatabaseUnavailable(`database unavailable (${state})`, { cause: e });
  // The client's error is kept as the cause: a start that fails on TLS says why (src/db/open.ts).
  if (err.code && CONNECTION_CODES.has(err.code))
    return new DatabaseUnavailable(`database unavailable (${err.code})`, { cause: e });
  if (err.code === "ECONNREFUSED" || err.code === "ECONNRESET")
    return new DatabaseUnavailable(`database unavailable (${err.code})`);
  return e;
}

type Rows = Record<string, unknown>[] & {
  columns?: { name: string; type: number }[];
  affectedRows?: number;
  count?: number;
};

/** int8 columns as numbers (ids and counts; all fit in 2^53 here). */
function normalize(rows: Rows): Rows {
  const cols = rows.columns;
  if (!cols || !rows.length) return rows;
  const int8 = cols.filter((c) => c.type === INT8).map((c) => c.name);
  if (!int8.length) return rows;
  for (const r of rows) for (const c of int8) if (typeof r[c] === "string") r[c] = Number(r[c]);
  return rows;
}

/** Rows per statement of insertEach (bounded by PostgreSQL's 65,535 parameters of a statement). */
const EACH_ROWS = 256;
const repeated = new Map<string, string>();
/** `INSERT … VALUES (?, …)` with its one VALUES tuple written `k` times. */
export function repeatValues(sql: string, k: number): string {
  if (k === 1) return sql;
  const key = `${k}\u0000${sql}`;
  let out = repeated.get(key);
  if (out === undefined) {
    const m = /^([\s\S]*\bVALUES\s*)(\([^()]*\))\s*$/i.exec(sql);
    if (!m) throw new Error("insertEach needs an INSERT ending in one VALUES tuple");
    out = m[1] + Array.from({ length: k }, () => m[2]).join(", ");
    if (repeated.size > 1000) repeated.clear();
    repeated.set(key, out);
  }
  return out;
}

const hasNul = (p: unknown) => typeof p === "string" && p.includes("\u0000");

export function createPgDb(url: string, opts: PgOptions = {}): PgDb {
  const sql = new SQL({
    url,
    max: opts.max ?? 20,
    idleTimeout: 60,
    // The URL's connect_timeout, as libpq reads it (the option given here wins over the URL's).
    connectionTimeout: connectTimeoutOf(parseDatabaseUrl(url)) ?? 10,
    connection: {
      ...(opts.statementTimeoutMs ? { statement_timeout: String(opts.statementTimeoutMs) } : {}),
      ...(opts.idleInTransactionTimeoutMs
        ? { idle_in_transaction_session_timeout: String(opts.idleInTransactionTimeoutMs) }
        : {}),
    },
  });
  const texts = new Map<string, string>();
  const text = (s: string, suffix = "") => {
    const k = suffix ? `${s}\u0000${suffix}` : s;
    let t = texts.get(k);
    if (t === undefined) {
      t = numberPlaceholders(s) + suffix;
      if (texts.size > 5000) texts.clear();
      texts.set(k, t);
    }
    return t;
  };
  const stats = { statements: 0, transactions: 0 };
  /** Per connection handle: the end of the last `alone` program started on it (run in turn). */
  const alones = new WeakMap<SQL, Promise<void>>();
  /**
   * Per transaction: its programs that are sending statements (not waiting for other programs:
   * `each`, `once`, `alone`), and the `alone` programs waiting for there to be none. An `alone`
   * program takes the audit chain's head (src/audit/append.ts), which every audited write takes
   * last, after the rows it changes (an org's suspension: the org's row, then the head). In a
   * group commit, whose programs run side by side, a cancel's entry took the head while another
   * run of the group had still to take its org's row (a foreign key's share): with a suspension
   * of that org between the two, each waited for the other until PostgreSQL broke the cycle
   * after deadlock_timeout. Waiting until the transaction's other programs are done or waiting
   * themselves, the head comes last in a group too (test/audit-group-lock-order.test.ts).
   */
  const sending = new WeakMap<SQL, { n: number; quiet: ((ended?: Error) => void)[] }>();
  // Counted only while the transaction lasts (inTx): a program of a group that failed may still
  // be running when the group has ended.
  const busy = (q: SQL) => {
    const b = sending.get(q);
    if (b) b.n++;
  };
  const idle = (q: SQL) => {
    const b = sending.get(q);
    if (!b || b.n === 0 || --b.n > 0 || b.quiet.length === 0) return;
    const go = b.quiet;
    b.quiet = [];
    for (const f of go) f();
  };
  /** Resolves once no program of the transaction is sending statements (the pool: at once). */
  const quiet = (q: SQL): Promise<void> => {
    const b = sending.get(q);
    return !b || b.n === 0
      ? Promise.resolve()
      : new Promise((resolve, reject) => b.quiet.push((ended) => (ended ? reject(ended) : resolve())));
  };
  /** `wait`, with this program counted as not sending meanwhile. */
  const aside = async <T>(q: SQL, wait: () => Promise<T>): Promise<T> => {
    idle(q);
    try {
      return await wait();
    } finally {
      busy(q);
    }
  };
  /** Per transaction (its connection's handle): the answers of `once` reads, as promises. */
  const onces = new WeakMap<SQL, Map<string, Promise<unknown>>>();
  /** A transaction's work; its `once` answers end with it, whether or not its handle is reused. */
  const inTx = async <T>(t: SQL, work: (q: SQL) => Promise<T>): Promise<T> => {
    sending.set(t, { n: 0, quiet: [] });
    try {
      return await work(t);
    } finally {
      onces.delete(t);
      // A program still waiting when its group failed is refused, not left pending for good (it
      // held its closure until the process ended) nor let through onto a finished transaction.
      const waiting = sending.get(t)?.quiet ?? [];
      sending.delete(t);
      for (const f of waiting) f(new Error("the transaction ended before this program could run"));
    }
  };
  const step = async (q: SQL, o: Op): Promise<unknown> => {
    if (o.op === "once") {
      // The pool (exec, outside a transaction) keeps nothing: each call may be another snapshot.
      if (q === sql) return drive(q, o.load());
      let memo = onces.get(q);
      if (!memo) {
        memo = new Map();
        onces.set(q, memo);
      }
      let answer = memo.get(o.key);
      if (!answer) {
        answer = drive(q, o.load());
        memo.set(o.key, answer);
      }
      const loaded = answer;
      return aside(q, () => loaded);
    }
    if (o.op === "each") {
      // Its programs counted before this one stops being: between the two the transaction read
      // as quiet, and a waiting `alone` went ahead of their statements (as with `once` above).
      const started = driveAll(q, o.programs);
      return aside(q, () => started);
    }
    if (o.op === "alone")
      return aside(q, async () => {
        // After the transaction's other statements (see `sending`), then behind the connection's
        // previous `alone` program, whether it succeeded or not.
        await quiet(q);
        const before = alones.get(q) ?? Promise.resolve();
        const mine = before.then(() => drive(q, o.program));
        const settled = mine.then(
          () => {},
          () => {},
        );
        alones.set(q, settled);
        try {
          return await mine;
        } finally {
          if (alones.get(q) === settled) alones.delete(q);
        }
      });
    stats.statements++;
    // PostgreSQL text cannot hold U+0000, so no stored value equals a string that has one (SQLite
    // answers "no rows" too): a lookup by such a key finds nothing instead of failing. A write
    // with one fails with UnstorableText (400).
    if ((o.op === "get" || o.op === "all") && /^\s*SELECT\b/i.test(o.sql) && o.params.some(hasNul))
      return o.op === "get" ? undefined : [];
    if (o.op === "insertEach") return insertRows(q, o);
    if (o.op === "insert") {
      const rows = normalize((await q.unsafe(text(o.sql, ` RETURNING ${o.key}`), o.params)) as Rows);
      return Number(rows[0]?.[o.key]);
    }
    const rows = (await q.unsafe(text(o.sql), o.params)) as Rows;
    if (o.op === "run") return rows.affectedRows ?? rows.count ?? 0;
    normalize(rows);
    return o.op === "get" ? rows[0] : [...rows];
  };
  /**
   * insertEach as one multi-row INSERT … RETURNING per EACH_ROWS rows: one statement for a group
   * commit's submissions instead of one per run (each a round trip and PostgreSQL's own parse,
   * bind and execute). The keys come from a sequence, drawn as the rows are inserted, in the
   * order of the VALUES list: sorted, they are the rows' keys in order (RETURNING's own order is
   * not promised by PostgreSQL, though it is the same in practice).
   */
  const insertRows = async (q: SQL, o: Extract<Op, { op: "insertEach" }>): Promise<number[]> => {
    const ids: number[] = [];
    for (let at = 0; at < o.rows.length; at += EACH_ROWS) {
      const part = o.rows.slice(at, at + EACH_ROWS);
      if (at > 0) stats.statements++;
      const params: Param[] = [];
      for (const r of part) for (const p of r) params.push(p);
      const rows = normalize(
        (await q.unsafe(text(repeatValues(o.sql, part.length), ` RETURNING ${o.key}`), params)) as Rows,
      );
      const got = rows.map((r) => Number(r[o.key])).sort((a, b) => a - b);
      if (got.length !== part.length)
        throw new Error(`insertEach: ${got.length} keys for ${part.length} rows`);
      for (const id of got) ids.push(id);
    }
    return ids;
  };
  /** `counted`: already counted as sending (driveAll). */
  const drive = async <T>(q: SQL, p: Program<T>, counted = false): Promise<T> => {
    if (!counted) busy(q);
    try {
      let r = p.next();
      while (!r.done) {
        let out: unknown;
        try {
          out = await step(q, r.value);
        } catch (e) {
          r = p.throw(translatePgError(e));
          continue;
        }
        r = p.next(out);
      }
      return r.value;
    } finally {
      idle(q);
    }
  };
  /**
   * Programs side by side, each counted as sending before the first starts: the first could
   * otherwise reach its `alone` before the others had begun, and find the transaction quiet.
   */
  const driveAll = (q: SQL, programs: Program<unknown>[]): Promise<unknown[]> => {
    for (const _ of programs) busy(q);
    return Promise.all(programs.map((p) => drive(q, p, true)));
  };
  let turn: Promise<number> | null = null;
  const self: PgDb = {
    dialect: "postgres",
    sql,
    stats,
    async exec<T>(p: Program<T>): Promise<T> {
      try {
        return await drive(sql, p);
      } catch (e) {
        throw translatePgError(e);
      }
    },
    async read<T>(p: Program<T>): Promise<T> {
      stats.transactions++;
      try {
        return (await sql.begin("isolation level repeatable read read only", (t) =>
          inTx(t as unknown as SQL, (q) => drive(q, p)),
        )) as T;
      } catch (e) {
        throw translatePgError(e);
      }
    },
    async tx<T>(make: () => Program<T>, _opts?: TxOptions): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        stats.transactions++;
        try {
          return (await sql.begin((t) => inTx(t as unknown as SQL, (q) => drive(q, make())))) as T;
        } catch (e) {
          const err = translatePgError(e);
          if (err instanceof RetryableConflict && attempt < TX_ATTEMPTS) continue;
          throw err;
        }
      }
    },
    async txGroup(makes) {
      stats.transactions++;
      try {
        return (await sql.begin((t) =>
          inTx(t as unknown as SQL, (q) =>
            driveAll(
              q,
              makes.map((make) => make()),
            ),
          ),
        )) as unknown[];
      } catch (e) {
        throw translatePgError(e);
      }
    },
    // One read per turn of the event loop (the reasoning of src/db/sqlite.ts holds: a request
    // sent after another's answer is read in a later turn, so it starts a read of its own).
    generation() {
      if (!turn) {
        const read = (async () => {
          stats.statements++;
          const rows = (await sql.unsafe("SELECT value FROM cache_generation WHERE id = 1")) as Rows;
          return Number(rows[0]?.value ?? 0);
        })();
        turn = read.catch((e) => {
          throw translatePgError(e);
        });
        setImmediate(() => {
          turn = null;
        });
      }
      return turn;
    },
    async ping() {
      try {
        await sql.unsafe("SELECT 1");
        return true;
      } catch {
        return false;
      }
    },
    async snapshot<T>(work: (db: Db) => Promise<T>): Promise<T> {
      stats.transactions++;
      try {
        return (await sql.begin("isolation level repeatable read read only", (t) =>
          inTx(t as unknown as SQL, async (q) => {
            await q.unsafe("SET LOCAL idle_in_transaction_session_timeout = 0");
            const exec = async <R>(p: Program<R>): Promise<R> => {
              try {
                return await drive(q, p);
              } catch (e) {
                throw translatePgError(e);
              }
            };
            const writes = () => Promise.reject(new Error("a snapshot only reads"));
            return work({ ...self, exec, read: exec, tx: writes, txGroup: writes });
          }),
        )) as T;
      } catch (e) {
        throw translatePgError(e);
      }
    },
    async close() {
      await sql.close({ timeout: 5 });
    },
  };
  return self;
}
