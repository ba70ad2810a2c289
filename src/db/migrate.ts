// Migrations are SQL files embedded in the binary (imported as text), one history for both
// dialects: version N exists for SQLite (migrations/NNNN_name.sql) and PostgreSQL
// (migrations/postgres/NNNN_name.sql) alike and means the same change. Each runs once, in a
// transaction. SQLite tracks the version in PRAGMA user_version; PostgreSQL in a table, under an
// advisory lock so that nodes starting together migrate once.
import type { Database } from "bun:sqlite";
import m0001 from "./migrations/0001_init.sql" with { type: "text" };
import m0002 from "./migrations/0002_webhooks.sql" with { type: "text" };
import m0003 from "./migrations/0003_run_list_indexes.sql" with { type: "text" };
import m0004 from "./migrations/0004_org_schemas.sql" with { type: "text" };
import m0005 from "./migrations/0005_cache_generation.sql" with { type: "text" };
import m0006 from "./migrations/0006_run_indexes_by_status.sql" with { type: "text" };
import m0007 from "./migrations/0007_run_findings.sql" with { type: "text" };
import m0008 from "./migrations/0008_stored_xml_schemas.sql" with { type: "text" };
import m0009 from "./migrations/0009_nodes.sql" with { type: "text" };
import m0010 from "./migrations/0010_ascending_indexes.sql" with { type: "text" };
import m0014 from "./migrations/0014_webhook_generation.sql" with { type: "text" };
import m0016 from "./migrations/0016_audit_and_versions.sql" with { type: "text" };
import m0017 from "./migrations/0017_webhook_pending_by_endpoint.sql" with { type: "text" };
import m0018 from "./migrations/0018_ids_never_reused.sql" with { type: "text" };
import m0019 from "./migrations/0019_step_configs.sql" with { type: "text" };
import m0020 from "./migrations/0020_web_session_indexes.sql" with { type: "text" };
import m0021 from "./migrations/0021_pinned_documents.sql" with { type: "text" };
import m0022 from "./migrations/0022_idempotency_in_progress.sql" with { type: "text" };
import { pinnedDocumentsPostgres, pinnedDocumentsSqlite } from "./migrations/0021_pinned_documents.ts";
import p0001 from "./migrations/postgres/0001_init.sql" with { type: "text" };
import p0002 from "./migrations/postgres/0002_webhooks.sql" with { type: "text" };
import p0003 from "./migrations/postgres/0003_run_list_indexes.sql" with { type: "text" };
import p0004 from "./migrations/postgres/0004_org_schemas.sql" with { type: "text" };
import p0005 from "./migrations/postgres/0005_cache_generation.sql" with { type: "text" };
import p0006 from "./migrations/postgres/0006_run_indexes_by_status.sql" with { type: "text" };
import p0007 from "./migrations/postgres/0007_run_findings.sql" with { type: "text" };
import p0008 from "./migrations/postgres/0008_stored_xml_schemas.sql" with { type: "text" };
import p0009 from "./migrations/postgres/0009_nodes.sql" with { type: "text" };
import p0010 from "./migrations/postgres/0010_ascending_indexes.sql" with { type: "text" };
import p0014 from "./migrations/postgres/0014_webhook_generation.sql" with { type: "text" };
import p0016 from "./migrations/postgres/0016_audit_and_versions.sql" with { type: "text" };
import p0017 from "./migrations/postgres/0017_webhook_pending_by_endpoint.sql" with { type: "text" };
import p0018 from "./migrations/postgres/0018_ids_never_reused.sql" with { type: "text" };
import p0019 from "./migrations/postgres/0019_step_configs.sql" with { type: "text" };
import p0020 from "./migrations/postgres/0020_web_session_indexes.sql" with { type: "text" };
import p0021 from "./migrations/postgres/0021_pinned_documents.sql" with { type: "text" };
import p0022 from "./migrations/postgres/0022_idempotency_in_progress.sql" with { type: "text" };
import type { PgDb } from "./postgres.ts";
import { assertForeignKeys, rebuildWithAutoincrement } from "./rebuild.ts";
import { SERVING_LOCK, serversHolding } from "./serving-lock.ts";

export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
  /**
   * True when servers of the previous release keep working on the new schema (only tables,
   * columns with defaults or nullable, and indexes were added): during a rolling upgrade the old
   * nodes go on, and an old node may even start (docs/deploy.md). False blocks old nodes.
   */
  additive?: boolean;
  /**
   * SQLite tables rebuilt with an AUTOINCREMENT id after `sqlite` runs (src/db/rebuild.ts): with
   * foreign keys off for the migration, checked before its commit.
   */
  sqliteAutoincrement?: readonly string[];
  /**
   * A table this migration creates, looked for on SQLite before the migration is taken as
   * applied: some builds of 2026-11-24 shipped a later migration without this one, and SQLite
   * then recorded only user_version, so "applied up to N" did not mean every migration up to N
   * (docs/decisions.md, "Migrations an old build skipped").
   */
  sqliteProbe?: string;
  /**
   * Rows the migration rewrites in code, after its SQL and in the same transaction (what SQL alone
   * cannot do on both engines: parse JSON without reordering keys, hash with SHA-256).
   */
  data?: {
    sqlite(db: Database): void;
    postgres(tx: Pick<PgDb["sql"], "unsafe">): Promise<void>;
  };
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "init", sqlite: m0001, postgres: p0001 },
  { version: 2, name: "webhooks", sqlite: m0002, postgres: p0002 },
  { version: 3, name: "run_list_indexes", sqlite: m0003, postgres: p0003 },
  { version: 4, name: "org_schemas", sqlite: m0004, postgres: p0004 },
  { version: 5, name: "cache_generation", sqlite: m0005, postgres: p0005 },
  { version: 6, name: "run_indexes_by_status", sqlite: m0006, postgres: p0006 },
  // Builds of 2026-11-24 10:02–12:22 ran 8 without 7 (user_version 8), 12:41–13:02 ran 10
  // without 9 (user_version 10): the probe finds the table missing and the migration runs.
  { version: 7, name: "run_findings", sqlite: m0007, postgres: p0007, sqliteProbe: "run_findings" },
  { version: 8, name: "stored_xml_schemas", sqlite: m0008, postgres: p0008 },
  { version: 9, name: "nodes", sqlite: m0009, postgres: p0009, additive: true, sqliteProbe: "rate_events" },
  // The same indexes, by the same names, in the other order: an older node's queries still hold.
  { version: 10, name: "ascending_indexes", sqlite: m0010, postgres: p0010, additive: true },
  // Triggers only: an older node writes webhooks as before and the generation moves with it.
  { version: 14, name: "webhook_generation", sqlite: m0014, postgres: p0014, additive: true },
  // 11–13 and 15 are reserved for work landing in parallel. Not additive: a node of the previous build
  // would go on changing things without writing audit entries (docs/decisions.md).
  { version: 16, name: "audit_and_versions", sqlite: m0016, postgres: p0016 },
  // An index only: an older node claims as before.
  { version: 17, name: "webhook_pending_by_endpoint", sqlite: m0017, postgres: p0017, additive: true },
  // Ids of deleted rows are never handed out again on SQLite, as on PostgreSQL. The same columns:
  // an older node reads and writes these tables as before.
  {
    version: 18,
    name: "ids_never_reused",
    sqlite: m0018,
    postgres: p0018,
    additive: true,
    sqliteAutoincrement: [
      "users",
      "api_tokens",
      "web_sessions",
      "steps",
      "org_schemas",
      "webhooks",
      "webhook_attempts",
    ],
  },
  // Not additive: a node of the previous build would read a new version's steps without configs.
  { version: 19, name: "step_configs", sqlite: m0019, postgres: p0019 },
  // Indexes only: an older node signs in and out as before, its purge now a seek.
  { version: 20, name: "web_session_indexes", sqlite: m0020, postgres: p0020, additive: true },
  // Not additive: a node of the previous build would read a config's pinned documents as digests.
  {
    version: 21,
    name: "pinned_documents",
    sqlite: m0021,
    postgres: p0021,
    data: { sqlite: pinnedDocumentsSqlite, postgres: pinnedDocumentsPostgres },
  },
  // An index only: an older node claims and answers keys as before, its writes keeping the index.
  { version: 22, name: "idempotency_in_progress", sqlite: m0022, postgres: p0022, additive: true },
];

export const LATEST = MIGRATIONS.at(-1)?.version ?? 0;

export class SchemaTooNew extends Error {
  override name = "SchemaTooNew";
}

const tooNew = (where: string, current: number) =>
  new SchemaTooNew(
    `The ${where} was written by a newer Assay (schema ${current}, this build knows ${LATEST}). Run the newer binary, or restore a backup taken before the upgrade.`,
  );

/**
 * A SQLite file with tables, none of them Assay's history: another application's database (a
 * wrong file restored as assay.db). Migrating it mixed Assay's tables into it, or failed half-way
 * with "no such table", or called it "written by a newer Assay".
 */
export class ForeignDatabase extends Error {
  override name = "ForeignDatabase";
  readonly code = "ASSAY_FOREIGN_DB";
  constructor(readonly tables: string[]) {
    super(
      `another application's SQLite database (tables: ${tables.slice(0, 5).join(", ")}${tables.length > 5 ? ", …" : ""})`,
    );
  }
}

/** Throws ForeignDatabase unless `db` is new (no tables) or Assay's; reads only. */
export function assertAssayFile(db: Database): void {
  if (db.query("SELECT 1 FROM sqlite_schema WHERE name = 'assay_schema_migrations'").get()) return;
  const tables = (
    db
      .query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name")
      .all() as { name: string }[]
  ).map((r) => r.name);
  if (!tables.length) return;
  // A data dir from before the history table: migrated as far as user_version says, its first
  // migration's tables there.
  const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (version >= 1 && version <= LATEST && tables.includes("users") && tables.includes("orgs")) return;
  throw new ForeignDatabase(tables);
}

export function migrateSqlite(db: Database): number {
  // Applied versions are recorded in a table (as on PostgreSQL), so a migration merged with a
  // lower number than one already applied still runs; user_version mirrors the highest.
  // One IMMEDIATE transaction: two processes opening the data dir at once (a server and a CLI
  // command) read and backfill the history one after the other, never half of it. Taken only when
  // there is something to write: a data dir at this build's schema is only read.
  const readHistory = () => {
    db.exec(
      "CREATE TABLE IF NOT EXISTS assay_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL, additive INTEGER NOT NULL DEFAULT 0) STRICT",
    );
    const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    const applied = db.query("SELECT version, additive FROM assay_schema_migrations").all() as {
      version: number;
      additive: number;
    }[];
    if (!applied.length && current > 0) {
      // A data dir from before the table: everything up to user_version was applied in order.
      const backfill = db.prepare(
        "INSERT OR IGNORE INTO assay_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
      );
      for (const m of MIGRATIONS.filter((x) => x.version <= current))
        backfill.run(m.version, m.name, "before");
      applied.push(
        ...MIGRATIONS.filter((x) => x.version <= current).map((x) => ({ version: x.version, additive: 0 })),
      );
    }
    const skipped = skippedByOldBuilds(db, applied);
    if (skipped.length) {
      // Recorded as applied by a build that inferred it from user_version: run it now.
      db.query(`DELETE FROM assay_schema_migrations WHERE version IN (${skipped.join(",")})`).run();
      return { current, applied: applied.filter((r) => !skipped.includes(r.version)) };
    }
    return { current, applied };
  };
  const upToDate = (() => {
    if (!db.query("SELECT 1 FROM sqlite_schema WHERE name = 'assay_schema_migrations'").get()) return null;
    const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    const applied = db.query("SELECT version, additive FROM assay_schema_migrations").all() as {
      version: number;
      additive: number;
    }[];
    const have = new Set(applied.map((r) => r.version));
    return applied.length &&
      MIGRATIONS.every((m) => have.has(m.version)) &&
      !skippedByOldBuilds(db, applied).length
      ? { current, applied }
      : null;
  })();
  const { current, applied } = upToDate ?? db.transaction(readHistory).immediate();
  const newer = applied.filter((r) => r.version > LATEST);
  const newest = Math.max(current, ...newer.map((r) => r.version));
  if (newer.some((r) => !r.additive) || (current > LATEST && !newer.length))
    throw tooNew("data directory", newest);
  const done = new Set(applied.map((r) => r.version));
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    const rebuild = m.sqliteAutoincrement ?? [];
    // A table rebuilt with foreign keys on would cascade its DROP into every child table; the
    // pragma is ignored inside a transaction, so it is set around it.
    const keys = (db.query("PRAGMA foreign_keys").get() as { foreign_keys: number }).foreign_keys;
    if (rebuild.length) db.exec("PRAGMA foreign_keys = OFF");
    try {
      migrateOne(db, m, rebuild, current);
    } finally {
      if (rebuild.length) db.exec(`PRAGMA foreign_keys = ${keys ? "ON" : "OFF"}`);
    }
  }
  return Math.max(LATEST, current);
}

/** Versions taken as applied whose probe table is not there (see Migration.sqliteProbe). */
function skippedByOldBuilds(db: Database, applied: readonly { version: number }[]): number[] {
  const have = new Set(applied.map((r) => r.version));
  const table = db.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?");
  return MIGRATIONS.filter((m) => m.sqliteProbe && have.has(m.version) && !table.get(m.sqliteProbe)).map(
    (m) => m.version,
  );
}

function migrateOne(db: Database, m: Migration, rebuild: readonly string[], current: number): void {
  // IMMEDIATE: two processes opening the data dir at once (a server and a CLI command) wait for
  // each other's write lock (busy_timeout) instead of both reading "not applied"; the second then
  // finds it applied and does nothing.
  db.transaction(() => {
    if (db.query("SELECT 1 FROM assay_schema_migrations WHERE version = ?").get(m.version)) return;
    db.exec(m.sqlite);
    m.data?.sqlite(db);
    for (const table of rebuild) rebuildWithAutoincrement(db, table);
    if (rebuild.length) assertForeignKeys(db);
    db.query(
      "INSERT INTO assay_schema_migrations (version, name, applied_at, additive) VALUES (?, ?, ?, ?)",
    ).run(m.version, m.name, new Date().toISOString(), m.additive ? 1 : 0);
    // Read again in the transaction: another process may have applied later ones meanwhile.
    const now = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    db.exec(`PRAGMA user_version = ${Math.max(m.version, current, now)}`);
  }).immediate();
}

/** Any number: the key of the advisory lock that serializes migrations across nodes. */
export const MIGRATION_LOCK = 0x4153_5341; // "ASSA"

type PgHistory = { version: number; name: string; additive: number }[];

/** Refuses a PostgreSQL schema with a newer migration this build cannot run on (SchemaTooNew). */
export async function assertRunnable(q: Pick<PgDb["sql"], "unsafe">): Promise<PgHistory> {
  const applied = (
    (await q.unsafe("SELECT version, name, additive FROM assay_schema_migrations")) as PgHistory
  ).map((r) => ({ version: Number(r.version), name: r.name, additive: Number(r.additive) }));
  const newer = applied.filter((r) => r.version > LATEST);
  if (newer.some((r) => !r.additive)) throw tooNew("database", Math.max(...newer.map((r) => r.version)));
  return applied;
}

/**
 * Brings a PostgreSQL schema up to this build's. A schema already there is only read, so a role
 * with only SELECT/INSERT/UPDATE/DELETE on Assay's tables can serve a database its owner migrated
 * (docs/postgres.md, "Roles and privileges"). A role's statement_timeout does not apply to the
 * migration, nor to waiting for another node's: one canceled half-way would fail at every start.
 */
export async function migratePostgres(
  db: PgDb,
  privileges: readonly TablePrivilege[] = WRITES,
): Promise<number> {
  let version: number;
  try {
    version = await migratePostgresTx(db);
  } catch (e) {
    throw await explainSetupError(db.sql, e);
  }
  await checkTablePrivileges(db.sql, privileges);
  return version;
}

export type TablePrivilege = "SELECT" | "INSERT" | "UPDATE" | "DELETE";
/** What the server and every command that changes something need on each of Assay's tables. */
export const WRITES: readonly TablePrivilege[] = ["SELECT", "INSERT", "UPDATE", "DELETE"];
/** What a command that only reads needs (`users list`, `audit verify` …: src/cli/context.ts). */
export const READS: readonly TablePrivilege[] = ["SELECT"];

/**
 * A role that lacks a privilege the command needs on one of Assay's tables (a table an upgrade
 * added, without ALTER DEFAULT PRIVILEGES; a role made to read only) is said at once, with the
 * statement that grants it, not as PostgreSQL's "permission denied for table …" from whichever
 * statement met it first (2026-11-29: `assay serve` stopped so, naming neither role nor schema).
 * Only what the command needs: a role with SELECT alone runs the commands that read.
 * Catalog reads only: a lock held on a table does not hold this up.
 */
async function checkTablePrivileges(sql: PgDb["sql"], privileges: readonly TablePrivilege[]): Promise<void> {
  // The privileges come from the fixed list above, never from input.
  const held = privileges.map((p) => `has_table_privilege(c.oid, '${p}')`).join(" AND ");
  const lacks = privileges.map((p) => `bool_or(NOT has_table_privilege(c.oid, '${p}')) AS "${p}"`).join(", ");
  const [row] = (await sql.unsafe(
    `SELECT current_user AS role, current_database() AS db, current_schema() AS schema, ${lacks},
       coalesce(array_agg(t.tablename::text ORDER BY t.tablename) FILTER (WHERE NOT (${held})), '{}') AS missing
     FROM pg_tables t
     JOIN pg_class c ON c.relname = t.tablename AND c.relnamespace = to_regnamespace(quote_ident(t.schemaname))
     WHERE t.schemaname = current_schema() AND t.tablename = ANY($1::text[])`,
    [[...OWN_TABLES]],
  )) as ({ role: string; db: string; schema: string | null; missing: string[] } & Record<
    TablePrivilege,
    boolean | null
  >)[];
  if (!row?.schema || !row.missing.length) return;
  // What is missing on at least one of the tables, and only that, is granted.
  const missing = privileges.filter((p) => row[p]);
  const shown = `${row.missing.slice(0, 5).join(", ")}${row.missing.length > 5 ? ", …" : ""}`;
  const which = missing.length === 1 ? missing[0] : `${missing.slice(0, -1).join(", ")} or ${missing.at(-1)}`;
  throw new DatabaseSetupError(
    `the role "${row.role}" lacks ${which} on ${row.missing.length} of Assay's tables in schema "${row.schema}" of database "${row.db}" (${shown}). Grant ${missing.length === 1 ? "it" : "them"}: GRANT ${missing.join(", ")} ON ALL TABLES IN SCHEMA ${ident(row.schema)} TO ${ident(row.role)} (${PRIVILEGES_DOC}).`,
  );
}

async function migratePostgresTx(db: PgDb): Promise<number> {
  return db.sql.begin(async (tx) => {
    // First: waiting for another node's migration is not canceled by the role's timeout either.
    await tx.unsafe("SET LOCAL statement_timeout = 0");
    await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    const [table] = (await tx.unsafe(
      `SELECT to_regclass('assay_schema_migrations') IS NOT NULL AS present,
         EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('assay_schema_migrations')
                 AND attname = 'additive' AND NOT attisdropped) AS additive`,
    )) as { present: boolean; additive: boolean }[];
    if (table?.present && table.additive) {
      const applied = await assertRunnable(tx);
      const done = new Set(applied.map((r) => r.version));
      const newer = applied.filter((r) => r.version > LATEST);
      if (MIGRATIONS.every((m) => done.has(m.version)))
        return newer.length ? Math.max(...newer.map((r) => r.version)) : LATEST;
    }
    await tx.unsafe(
      "CREATE TABLE IF NOT EXISTS assay_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
    // Whether servers of the release before can keep running on it (rolling upgrades).
    await tx.unsafe(
      "ALTER TABLE assay_schema_migrations ADD COLUMN IF NOT EXISTS additive INTEGER NOT NULL DEFAULT 0",
    );
    const applied = await assertRunnable(tx);
    const newer = applied.filter((r) => r.version > LATEST);
    const done = new Set(applied.map((r) => r.version));
    const pending = MIGRATIONS.filter((m) => !done.has(m.version));
    await refuseUnderServers(tx, pending);
    for (const m of pending) {
      await tx.unsafe(m.postgres);
      await m.data?.postgres(tx);
      await tx.unsafe(
        "INSERT INTO assay_schema_migrations (version, name, applied_at, additive) VALUES ($1, $2, $3, $4)",
        [m.version, m.name, new Date().toISOString(), m.additive ? 1 : 0],
      );
    }
    return newer.length ? Math.max(...newer.map((r) => r.version)) : LATEST;
  });
}

/**
 * Setting up or upgrading the schema failed for a reason the operator must fix in PostgreSQL (a
 * privilege, the search_path, another application's tables): said in Assay's words, with what
 * to run, instead of the server's one-line error.
 */
export class DatabaseSetupError extends Error {
  override name = "DatabaseSetupError";
}

/** The table names Assay's migrations create (another application's tables by these names clash). */
const OWN_TABLES = new Set(
  MIGRATIONS.flatMap((m) =>
    [...m.postgres.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/gi)].map((x) =>
      x[1]!.toLowerCase(),
    ),
  ),
);

/** An identifier as SQL that can be pasted: double-quoted unless it is plain lower case. */
const ident = (name: string) => (/^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`);

const PRIVILEGES_DOC = 'docs/postgres.md, "Roles and privileges"';

/**
 * When the connected role's search_path reaches no Assay tables but another schema of the
 * database holds them (a serving role granted the tables but not given the path), what to say and
 * the statement that fixes it; null otherwise.
 */
export async function searchPathMiss(sql: PgDb["sql"]): Promise<{ said: string; fix: string } | null> {
  try {
    const [who] = (await sql.unsafe(
      `SELECT current_user AS role, current_database() AS db, current_setting('search_path') AS path,
         to_regclass('assay_schema_migrations') IS NOT NULL AS assay`,
    )) as { role: string; db: string; path: string; assay: boolean }[];
    if (!who || who.assay) return null;
    const schemas = (
      (await sql.unsafe(
        `SELECT n.nspname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relname = 'assay_schema_migrations' AND c.relkind IN ('r', 'p') ORDER BY 1`,
      )) as { name: string }[]
    ).map((r) => r.name);
    if (!schemas.length) return null;
    return {
      said: `the role "${who.role}" finds no Assay tables in its search_path (${who.path}) of database "${who.db}", but schema ${schemas.map((n) => `"${n}"`).join(", ")} holds them`,
      fix: `Set the role's search_path to it — ALTER ROLE ${ident(who.role)} SET search_path = ${ident(schemas[0]!)}, or ?options=-c%20search_path%3D${encodeURIComponent(schemas[0]!)} in the URL (${PRIVILEGES_DOC}).`,
    };
  } catch {
    return null;
  }
}

async function explainSetupError(sql: PgDb["sql"], e: unknown): Promise<unknown> {
  const err = e as { errno?: unknown; message?: string } | null;
  const state = err?.errno;
  if (state !== "42501" && state !== "3F000" && state !== "42P07") return e;
  const said = `PostgreSQL: ${err?.message ?? state}`;
  let who: { role: string; db: string; schema: string | null; path: string; assay: boolean } | undefined;
  try {
    [who] = (await sql.unsafe(
      `SELECT current_user AS role, current_database() AS db, current_schema() AS schema,
         current_setting('search_path') AS path,
         to_regclass('assay_schema_migrations') IS NOT NULL AS assay`,
    )) as NonNullable<typeof who>[];
  } catch {
    return e; // not even that (CONNECT refused, the server gone): the server's own words
  }
  if (!who) return e;
  const role = ident(who.role);
  const db = `database "${who.db}"`;
  if (!who.assay && state !== "42P07") {
    // Assay's tables in a schema this role's search_path does not reach (a serving role given
    // the grants but not the path): it would otherwise be told to create the tables anew.
    const miss = await searchPathMiss(sql);
    if (miss) return new DatabaseSetupError(`${miss.said} (${said}). ${miss.fix}`);
  }
  if (state === "3F000" || !who.schema)
    return new DatabaseSetupError(
      `the role "${who.role}" has no schema to create Assay's tables in, in ${db}: no schema of its search_path (${who.path}) exists (${said}). Create one it owns — CREATE SCHEMA assay AUTHORIZATION ${role}; ALTER ROLE ${role} SET search_path = assay — or correct the search_path (${PRIVILEGES_DOC}).`,
    );
  const schema = ident(who.schema);
  if (state === "42P07") {
    if (who.assay) return e;
    const clash = (
      (await sql
        .unsafe("SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1")
        .catch(() => [])) as { name: string }[]
    )
      .map((r) => r.name)
      .filter((n) => OWN_TABLES.has(n));
    return new DatabaseSetupError(
      `schema "${who.schema}" of ${db} holds another application's tables by the names of Assay's (${clash.slice(0, 5).join(", ") || said}${clash.length > 5 ? ", …" : ""}); nothing was changed. Give Assay an empty database or a schema of its own: CREATE SCHEMA assay AUTHORIZATION ${role}; ALTER ROLE ${role} SET search_path = assay (${PRIVILEGES_DOC}).`,
    );
  }
  // Assay's tables are there (its history among them): this build must change them, as their owner.
  if (who.assay || /must be owner/i.test(err?.message ?? ""))
    return new DatabaseSetupError(
      `the role "${who.role}" does not own Assay's tables in schema "${who.schema}" of ${db}, and this build must upgrade them (${said}). Run "assay migrate" once as the role that owns them, then start the server again (${PRIVILEGES_DOC}).`,
    );
  return new DatabaseSetupError(
    `the role "${who.role}" may not create tables in schema "${who.schema}" of ${db} (${said}); Assay creates its tables at the first start and on upgrades. Give it a schema of its own — CREATE SCHEMA assay AUTHORIZATION ${role}; ALTER ROLE ${role} SET search_path = assay — or the privilege on this one: GRANT CREATE ON SCHEMA ${schema} TO ${role} (${PRIVILEGES_DOC}).`,
  );
}

export class SchemaInUse extends Error {
  override name = "SchemaInUse";
}

/**
 * A migration that servers of the build before cannot run on is applied only when no server
 * holds the database (src/db/schema-hold.ts): the exclusive lock, kept to the commit, also keeps
 * a server from starting on the old schema meanwhile (it waits, then finds it too new).
 */
async function refuseUnderServers(
  tx: Pick<PgDb["sql"], "unsafe">,
  pending: readonly Migration[],
): Promise<void> {
  const blocking = pending.filter((m) => !m.additive);
  if (!blocking.length) return;
  const [row] = (await tx.unsafe(`SELECT pg_try_advisory_xact_lock(${SERVING_LOCK}) AS got`)) as {
    got: boolean;
  }[];
  if (row?.got) return;
  const n = await serversHolding(tx);
  throw new SchemaInUse(
    `${n === 1 ? "A server is" : `${n} servers are`} running on this database, on a schema this build would upgrade in a way ${n === 1 ? "it" : "they"} cannot run on (${blocking.map((m) => `${m.version} ${m.name}`).join(", ")}). Stop every node, run "assay migrate" with this build, then start this build.`,
  );
}

/** The schema version a database is at (0 when empty), without migrating. */
export async function schemaVersion(db: {
  dialect: string;
  raw?: Database;
  sql?: PgDb["sql"];
}): Promise<number> {
  if (db.dialect === "sqlite")
    return (db.raw!.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  // Two statements: one that names a missing table fails when planned, whatever a CASE says.
  const [table] = (await db.sql!.unsafe(
    "SELECT to_regclass('assay_schema_migrations') IS NOT NULL AS present",
  )) as { present: boolean }[];
  if (!table?.present) return 0;
  const rows = (await db.sql!.unsafe(
    "SELECT coalesce(max(version), 0) AS v FROM assay_schema_migrations",
  )) as {
    v: number;
  }[];
  return Number(rows[0]?.v ?? 0);
}
