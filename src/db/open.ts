// Opening the database: SQLite in the data dir (the default) or PostgreSQL when a database URL
// is configured. SQLite pragmas are set once here (STYLE: PocketBase): WAL so readers and the CLI
// never block the server; synchronous=NORMAL on purpose — in WAL a crash loses nothing
// committed, a power loss can lose the last commits; foreign keys on; a busy timeout so the CLI
// and the server can share the file.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PG_IDLE_IN_TRANSACTION_TIMEOUT_MS } from "../config.ts";
import { createOwnerOnly, dataDirError } from "./dir-access.ts";
import { type TablePrivilege, assertAssayFile, migratePostgres, migrateSqlite } from "./migrate.ts";
import { type PgDb, createPgDb } from "./postgres.ts";
import { DatabaseUnavailable, get } from "./program.ts";
import { type SqliteDb, createSqliteDb } from "./sqlite.ts";
import { formatDatabaseUrl, parseDatabaseUrl } from "./url.ts";
import { namesNoHost } from "./url-query.ts";

export const DB_FILE = "assay.db";

export type AnyDb = SqliteDb | PgDb;

export interface DbConfig {
  data_dir: string;
  database_url: string | null;
  database_pool_size?: number;
  /** Absent: PG_IDLE_IN_TRANSACTION_TIMEOUT_MS (a command given only a URL, `assay db copy`). */
  database_idle_in_transaction_timeout_ms?: number;
}

/** The raw SQLite connection of a data dir, pragmas set, migrated unless `readonly`. */
export function openDatabase(dataDir: string, opts: { readonly?: boolean } = {}): Database {
  let db: Database | null = null;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // An empty file is a new database to SQLite; created first so that it is the owner's only.
    createOwnerOnly(join(dataDir, DB_FILE));
    db = new Database(join(dataDir, DB_FILE), { create: true, strict: true });
    setUp(db, opts);
    return db;
  } catch (e) {
    db?.close();
    throw dataDirError(dataDir, DB_FILE, e);
  }
}

function setUp(db: Database, opts: { readonly?: boolean }) {
  // Before anything is written to it (WAL mode included): another application's file stays as it was.
  assertAssayFile(db);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA temp_store = MEMORY");
  // 2 MB page cache (SQLite's default), set on purpose: 32 MB grew RSS to ~288 MiB under load
  // and 8 MB kept 6–8 MiB more after a 10 MiB submission, neither with a throughput gain (paired
  // runs, docs/benchmarks.md); the OS page cache holds the rest.
  db.exec("PRAGMA cache_size = -2000");
  if (!opts.readonly) migrateSqlite(db);
}

/**
 * Query parameters shown as they are in logs and messages. Every other value is masked: libpq
 * and Bun's client take a password as `?password=` too, and the other names that carry secrets
 * (sslpassword, sslkey, passfile …) are not a closed list, so only known-harmless ones are kept.
 */
const SHOWN_PARAMS = new Set([
  "host",
  "hostaddr",
  "port",
  "dbname",
  "user",
  "sslmode",
  "sslrootcert",
  "application_name",
  "connect_timeout",
  "target_session_attrs",
]);

/** A URL without its password (in the userinfo or the query), for logs and messages. */
export function redactUrl(url: string): string {
  const parsed = parseDatabaseUrl(url);
  if (!parsed) return "postgres://…";
  try {
    const u = parsed.url;
    if (u.password) u.password = "***";
    const masked = [...u.searchParams.keys()].some((k) => !SHOWN_PARAMS.has(k.toLowerCase()));
    if (masked) {
      const kept = new URLSearchParams();
      for (const [k, v] of u.searchParams) kept.append(k, SHOWN_PARAMS.has(k.toLowerCase()) ? v : "***");
      u.search = kept.toString();
    }
    return formatDatabaseUrl(parsed);
  } catch {
    return "postgres://…";
  }
}

/** Where the data lives, for the start line and error messages. */
export const describeDb = (c: DbConfig) =>
  c.database_url ? `PostgreSQL ${redactUrl(c.database_url)}` : `SQLite in ${c.data_dir}`;

/**
 * Opens (and migrates, unless told not to) the configured database. PostgreSQL that cannot be
 * reached at start is waited for up to `waitMs` (a node starting with its database), then the
 * error names the server without its password.
 */
export async function openDb(
  c: DbConfig,
  opts: {
    migrate?: boolean;
    waitMs?: number;
    /** Called once, when the first attempt failed and the wait begins (the URL without its password). */
    onWaiting?: (database: string, error: string) => void;
    /** PostgreSQL: the privileges checked on Assay's tables (default: all four; READS to only read). */
    privileges?: readonly TablePrivilege[];
  } = {},
): Promise<AnyDb> {
  const migrate = opts.migrate ?? true;
  if (!c.database_url) {
    const raw = openDatabase(c.data_dir, { readonly: !migrate });
    return createSqliteDb(raw);
  }
  let db: PgDb;
  try {
    db = createPgDb(c.database_url, {
      max: c.database_pool_size ?? 20,
      idleInTransactionTimeoutMs:
        c.database_idle_in_transaction_timeout_ms ?? PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    });
  } catch (e) {
    throw tlsProblem(c, e) ?? e;
  }
  const deadline = Date.now() + (opts.waitMs ?? 0);
  let waited = false;
  for (;;) {
    try {
      if (migrate) await migratePostgres(db, opts.privileges);
      // A statement, not ping(): ping's false hid why, so a database that does not exist or a
      // refused password read "cannot reach …: no answer"; they are said as `migrate` says them.
      else await db.exec(get("SELECT 1"));
      return db;
    } catch (e) {
      // A TLS failure is no outage to wait out; through a statement (no migration: the admin
      // commands) it comes as DatabaseUnavailable with the client's error as its cause.
      const tls =
        tlsProblem(c, e instanceof DatabaseUnavailable && e.cause ? e.cause : e) ??
        startupParameterRefused(c, e);
      if (tls || (!(e instanceof DatabaseUnavailable) && !isConnectionError(e))) {
        await db.close();
        throw tls ?? e;
      }
      if (Date.now() >= deadline) {
        await db.close();
        if (isTooManyConnections(e)) throw tooManyConnections(c, e);
        const noHost = namesNoHost(parseDatabaseUrl(c.database_url), process.env)
          ? "; the URL names no host, so Bun's PostgreSQL client tried localhost over TCP (libpq would use its Unix socket): name the host, or the socket's directory (postgres://user:password@/assay?host=/run/postgresql)"
          : "";
        throw new Error(`cannot reach ${redactUrl(c.database_url)}: ${(e as Error).message}${noHost}`);
      }
      if (!waited) opts.onWaiting?.(redactUrl(c.database_url), (e as Error).message);
      waited = true;
      await Bun.sleep(500);
    }
  }
}

function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: string })?.code ?? "";
  return /CONNECTION|ECONN/.test(code) || isTooManyConnections(e);
}

/**
 * A pooler in front refused the startup parameter Assay sends (PgBouncer passes on only those it
 * tracks, and closes the connection with "unsupported startup parameter"): no outage to wait out,
 * and "cannot reach …: database unavailable (08P01)" said neither what nor where to change it.
 */
function startupParameterRefused(c: DbConfig, e: unknown): Error | null {
  const said = (x: unknown) => String((x as { message?: unknown } | null)?.message ?? "");
  const text = `${said(e)} ${said(e instanceof Error ? e.cause : null)}`;
  if (!/unsupported startup parameter:? *idle_in_transaction_session_timeout/i.test(text)) return null;
  return new Error(
    `PostgreSQL ${redactUrl(c.database_url!)} refused the startup parameter idle_in_transaction_session_timeout (a pooler such as PgBouncer passes on only the parameters it tracks). Set ASSAY_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS=0 and set it on Assay's role instead: ALTER ROLE … SET idle_in_transaction_session_timeout = '10s' (docs/postgres.md, "Roles and privileges").`,
  );
}

/**
 * 53300 too_many_connections: max_connections (or the role's or database's CONNECTION LIMIT) is
 * used up. Waited for at start like an unreachable server (a node stopping frees its share).
 */
export const isTooManyConnections = (e: unknown) =>
  (e as { errno?: unknown })?.errno === "53300" ||
  (e instanceof DatabaseUnavailable && e.message.endsWith("(53300)"));

/**
 * TLS that failed as the URL's sslmode asked (the client's words alone — "self signed
 * certificate", "Server does not support SSL" — named neither the server nor what to change).
 */
function tlsProblem(c: DbConfig, e: unknown): Error | null {
  const err = e as { code?: unknown; message?: unknown } | null;
  const code = typeof err?.code === "string" ? err.code : "";
  const message = typeof err?.message === "string" ? err.message : "";
  const url = redactUrl(c.database_url!);
  const query = parseDatabaseUrl(c.database_url!)?.url.searchParams;
  const mode = query?.get("sslmode") ?? "prefer";
  if (code === "ERR_POSTGRES_TLS_NOT_AVAILABLE")
    return new Error(
      `PostgreSQL ${url} does not offer TLS, which sslmode=${mode} requires: turn ssl on in the server, or connect with sslmode=disable where the network allows it (docs/postgres.md).`,
    );
  if (/CA file|caFile/i.test(message))
    return new Error(
      `PostgreSQL ${url}: sslrootcert=${query?.get("sslrootcert") ?? ""} cannot be read as a CA certificate (${message}): give a readable PEM file (docs/postgres.md).`,
    );
  if ((/CERT|ALTNAME/.test(code) || /certificate/i.test(message)) && query?.get("sslrootcert") === "system")
    return new Error(
      `PostgreSQL ${url}: its TLS certificate was refused (${message}). sslrootcert=system checks it against the system's CAs (OpenSSL's default CA file, or the one SSL_CERT_FILE names, and Bun's own) and its host name, as sslmode=verify-full does; give the CA's file as sslrootcert=FILE instead, or leave sslrootcert out and set sslmode=require to encrypt without checking it (docs/postgres.md).`,
    );
  if (/CERT|ALTNAME/.test(code) || /certificate/i.test(message))
    return new Error(
      `PostgreSQL ${url}: its TLS certificate was refused (${message}). sslmode=verify-full and verify-ca check it against the CA file given as sslrootcert=FILE (else the system's CAs), verify-full also its host name; sslmode=require encrypts without checking it (docs/postgres.md).`,
    );
  return null;
}

/**
 * A server's start that PostgreSQL ended for a reason the operator sets (max_connections, a
 * statement_timeout), said with what to change; null for anything else.
 */
export function startProblem(c: DbConfig, e: unknown): Error | null {
  if (!c.database_url) return null;
  if (isTooManyConnections(e)) return tooManyConnections(c, e);
  if (
    (e as { errno?: unknown })?.errno === "57014" ||
    (e instanceof DatabaseUnavailable && e.message.endsWith("(57014)"))
  )
    return new Error(
      `PostgreSQL ${redactUrl(c.database_url)} canceled a statement of the server's start (57014: the role's statement_timeout, or an administrator's cancel). Raise the role's statement_timeout or set it to 0 for Assay's role: ALTER ROLE … SET statement_timeout = 0 (docs/postgres.md, "Roles and privileges").`,
    );
  return null;
}

/**
 * Bun's client opens the whole pool at the first statement, not as load grows: a server holds
 * ASSAY_DATABASE_POOL_SIZE connections (plus its own two) from its start, whatever its load.
 */
export function tooManyConnections(c: DbConfig, e: unknown): Error {
  const pool = c.database_pool_size ?? 20;
  return new Error(
    `PostgreSQL ${redactUrl(c.database_url!)} refused a connection (${e instanceof DatabaseUnavailable ? "too many connections" : (e as Error).message}). Each server opens ASSAY_DATABASE_POOL_SIZE (${pool}) connections at its start, plus 2 of its own: lower ASSAY_DATABASE_POOL_SIZE, or raise max_connections (or the role's CONNECTION LIMIT) (docs/postgres.md, "Sizing").`,
  );
}

/** Checkpoint the WAL into the main file and close a raw SQLite connection (scripts, tests). */
export function closeDatabase(db: Database): void {
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}
