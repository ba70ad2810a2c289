// Shared by the headless admin commands: open the data dir (the server may be running — WAL and
// a busy timeout make that safe) and build the same services the server uses.
import { loadConfig } from "../config.ts";
import { Database } from "bun:sqlite";
import { accessSync, constants, existsSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS, READS, WRITES, schemaVersion, searchPathMiss } from "../db/migrate.ts";
import { holdOffServers } from "../db/lock.ts";
import { DB_FILE, type DbConfig, describeDb, openDb } from "../db/open.ts";
import { AppError } from "../errors.ts";
import { createDeps, type Deps } from "../deps.ts";
import { createLogger } from "../lib/log.ts";
import { type Parsed, UsageError } from "./args.ts";
import { out } from "./out.ts";

/** The settings of a command on a database: --data-dir or --database-url, else the environment. */
export const configOf = (p: Parsed) => {
  const flags: Record<string, string> = {};
  if (p.flags.data_dir) flags.data_dir = p.flags.data_dir;
  if (p.flags.database_url) flags.database_url = p.flags.database_url;
  return loadConfig(process.env, flags);
};

/** A command's arguments, marked when the command only reads (readsOnly). */
type Command = Parsed & { readOnly?: boolean };

/**
 * Marks a command that only reads (`users list`, `audit verify`, `workflows export` …): on
 * PostgreSQL its role needs SELECT alone on Assay's tables (a reporting or auditing role); every
 * other command checks SELECT, INSERT, UPDATE and DELETE at its start (docs/postgres.md).
 */
export const readsOnly = (p: Parsed, only: boolean): Command => (only ? { ...p, readOnly: true } : p);

/**
 * `create`: only `assay init` may start an installation. Every other command on a data dir (or
 * database) that holds none refuses, naming it: a mistyped --data-dir, or a command run from the
 * wrong directory, would otherwise create an empty one and report an empty backup, "nothing to
 * verify", or "(none)" as a success.
 */
export async function withDeps<T>(
  p: Command,
  fn: (deps: Deps) => Promise<T>,
  opts: { create?: boolean } = {},
): Promise<T> {
  const config = configOf(p);
  if (!opts.create) {
    const missing = await requireInstallation(config).then(
      () => null,
      (e: unknown) => e,
    );
    // Bad arguments are still reported as such (exit 2): the command checks them before it
    // touches a service, and the first service it touches reports the missing installation.
    if (missing)
      return fn(
        new Proxy({} as Deps, {
          get() {
            throw missing;
          },
        }),
      );
  }
  const release = refuseUpgradeUnderServer(config);
  let db: Awaited<ReturnType<typeof openDb>>;
  try {
    db = await openDb(config, { privileges: p.readOnly ? READS : WRITES });
  } finally {
    release();
  }
  const deps = createDeps(config, db, createLogger("warn"));
  try {
    return await fn(deps);
  } finally {
    await deps.tokens.close();
    await db.close();
  }
}

/**
 * Refuses (exit 1) to upgrade a data dir's schema under a running server when a pending migration
 * is not additive: a server of the build before cannot run on it (migration 19: it would run new
 * versions' steps without their configs). A data dir the CLI opens is migrated by opening it, so
 * this runs first; it returns the release of a hold that keeps a server from starting until the
 * caller has opened (and so migrated) the database. PostgreSQL: the migration itself refuses
 * while servers hold the database (src/db/schema-hold.ts).
 */
export function refuseUpgradeUnderServer(config: DbConfig): () => void {
  const nothing = () => {};
  if (config.database_url) return nothing;
  const file = join(config.data_dir, DB_FILE);
  if (!existsSync(file)) return nothing;
  let raw: Database;
  let applied: Set<number>;
  try {
    raw = new Database(file, { readonly: true });
  } catch {
    return nothing; // openDb names the data dir and the reason (dir-access.ts)
  }
  try {
    // As openDb waits: a server starting (recovering its WAL) holds the file for a moment.
    raw.exec("PRAGMA busy_timeout = 5000");
    const table = raw.query("SELECT 1 FROM sqlite_schema WHERE name = 'assay_schema_migrations'").get();
    const version = (raw.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    applied = new Set(
      table
        ? (raw.query("SELECT version FROM assay_schema_migrations").all() as { version: number }[]).map(
            (r) => r.version,
          )
        : MIGRATIONS.filter((m) => m.version <= version).map((m) => m.version),
    );
  } catch (e) {
    // Still busy after the wait: a server is at work on it, so no upgrade under it.
    if (String((e as { code?: string }).code).startsWith("SQLITE_BUSY"))
      throw new AppError(409, "conflict", `The database in ${config.data_dir} is busy; try again.`);
    return nothing; // unreadable here (a WAL file it may not write): openDb says why, in its words
  } finally {
    raw.close();
  }
  const pending = MIGRATIONS.filter((m) => !applied.has(m.version) && !m.additive);
  if (!pending.length) return nothing;
  const hold = holdOffServers(config.data_dir);
  if ("release" in hold) return () => hold.release();
  const held = hold.running;
  throw new AppError(
    409,
    "conflict",
    `A server${held.pid ? ` (PID ${held.pid})` : ""} is running on ${config.data_dir}, on a schema this build would upgrade in a way it cannot run on (${pending.map((m) => `${m.version} ${m.name}`).join(", ")}). Stop it, run "assay migrate" with this build, then start this build.`,
  );
}

/** Refuses (exit 1) a data dir without a database file, or a database without Assay's schema. */
export async function requireInstallation(config: DbConfig): Promise<void> {
  if (!config.database_url) {
    unreadableDataDir(config.data_dir);
    if (sqliteSchemaVersion(join(config.data_dir, DB_FILE)) > 0) return;
  } else {
    const db = await openDb(config, { migrate: false });
    try {
      if ((await schemaVersion(db)) > 0) return;
      const miss = db.dialect === "postgres" ? await searchPathMiss(db.sql) : null;
      if (miss)
        throw new AppError(
          404,
          "not_found",
          `No Assay installation reachable in ${describeDb(config)}: ${miss.said}. ${miss.fix}`,
        );
    } finally {
      await db.close();
    }
  }
  throw new AppError(
    404,
    "not_found",
    `No Assay installation in ${describeDb(config)}: name one with --data-dir or --database-url (or ASSAY_DATA_DIR, ASSAY_DATABASE_URL), or create one with "assay init".`,
  );
}

/**
 * Refuses a data dir, or a database file in it, this user may not read. The server's user makes
 * both its own (0700, 0600), so another user's `assay users list` could not even see assay.db: it
 * was told there was no installation and to create one with `assay init`, which then failed on
 * the permission.
 */
function unreadableDataDir(dir: string): void {
  const denied = (path: string, mode: number) => {
    try {
      accessSync(path, mode);
      return false;
    } catch (e) {
      const code = (e as { code?: string }).code;
      return code === "EACCES" || code === "EPERM";
    }
  };
  if (denied(dir, constants.R_OK | constants.X_OK))
    throw new Error(`cannot read the data directory ${dir} (permission denied)`);
  const file = join(dir, DB_FILE);
  if (denied(file, constants.R_OK)) throw new Error(`cannot read ${file} (permission denied)`);
}

/**
 * The schema version of an Assay database file, read without writing to it; 0 when there is no
 * file, an empty one (a `touch`), or a SQLite file of another program. Only a file Assay migrated
 * is an installation: an empty assay.db was reported as an empty audit log and backed up, and a
 * foreign one was migrated (changed) by `users list`.
 */
function sqliteSchemaVersion(file: string): number {
  if (!existsSync(file)) return 0;
  let raw: Database;
  try {
    raw = new Database(file, { readonly: true });
  } catch {
    return 0;
  }
  try {
    raw.exec("PRAGMA busy_timeout = 5000");
    // Assay's own tables (its migrations' record, or, from a release before that record, the first
    // migration's): a foreign file may have set user_version for its own reasons.
    const ours = raw
      .query(
        "SELECT count(*) AS n FROM sqlite_schema WHERE name IN ('assay_schema_migrations', 'workflow_versions')",
      )
      .get() as { n: number };
    if (!ours.n) return 0;
    return (raw.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  } catch (e) {
    // Busy after the wait, or a WAL this user may not write: openDb says why, in its words.
    if (/SQLITE_BUSY|SQLITE_CANTOPEN|SQLITE_READONLY/.test(String((e as { code?: string }).code))) return 1;
    return 0; // not a database ("file is not a database"): not an installation
  } finally {
    raw.close();
  }
}

/** `30d`, `12h`, `90` (days) → days; null when absent. */
export function parseDuration(s: string | undefined): number | null {
  if (s === undefined) return null;
  const m = /^(\d{1,6})([dhw]?)$/.exec(s.trim());
  // A malformed argument: exit 2, like every other (src/cli/main.ts report()).
  if (!m) throw new UsageError(`"${s}" is not a duration like 30d, 2w or 12h`);
  const n = Number(m[1]);
  const days = m[2] === "h" ? n / 24 : m[2] === "w" ? n * 7 : n;
  if (days <= 0) throw new UsageError("the duration must be positive");
  // The API's bound on a token's lifetime (expires_in_days, docs/limits.md): 100 years.
  if (days > 36500) throw new UsageError("the duration is at most 36500 days (100 years)");
  return days;
}

/** One line to stdout, through the writer the process waits for before it exits (out.ts). */
export const print = (s: string) => void out(`${s}\n`);
export const table = (rows: Record<string, unknown>[], cols: string[]) => {
  if (!rows.length) return print("(none)");
  const w = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? "").length)));
  print(cols.map((c, i) => c.toUpperCase().padEnd(w[i]!)).join("  "));
  for (const r of rows) print(cols.map((c, i) => String(r[c] ?? "").padEnd(w[i]!)).join("  "));
};
