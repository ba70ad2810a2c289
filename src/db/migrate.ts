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
import m0016 from "./migrations/0016_audit_and_versions.sql" with { type: "text" };
import p0001 from "./migrations/postgres/0001_init.sql" with { type: "text" };
import p0002 from "./migrations/postgres/0002_webhooks.sql" with { type: "text" };
import p0003 from "./migrations/postgres/0003_run_list_indexes.sql" with { type: "text" };
import p0004 from "./migrations/postgres/0004_org_schemas.sql" with { type: "text" };
import p0005 from "./migrations/postgres/0005_cache_generation.sql" with { type: "text" };
import p0006 from "./migrations/postgres/0006_run_indexes_by_status.sql" with { type: "text" };
import p0007 from "./migrations/postgres/0007_run_findings.sql" with { type: "text" };
import p0008 from "./migrations/postgres/0008_stored_xml_schemas.sql" with { type: "text" };
import p0016 from "./migrations/postgres/0016_audit_and_versions.sql" with { type: "text" };
import type { PgDb } from "./postgres.ts";

export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "init", sqlite: m0001, postgres: p0001 },
  { version: 2, name: "webhooks", sqlite: m0002, postgres: p0002 },
  { version: 3, name: "run_list_indexes", sqlite: m0003, postgres: p0003 },
  { version: 4, name: "org_schemas", sqlite: m0004, postgres: p0004 },
  { version: 5, name: "cache_generation", sqlite: m0005, postgres: p0005 },
  { version: 6, name: "run_indexes_by_status", sqlite: m0006, postgres: p0006 },
  { version: 7, name: "run_findings", sqlite: m0007, postgres: p0007 },
  { version: 8, name: "stored_xml_schemas", sqlite: m0008, postgres: p0008 },
  // 9–15 are reserved for work landing in parallel (findings, run leases, …).
  { version: 16, name: "audit_and_versions", sqlite: m0016, postgres: p0016 },
];

export const LATEST = MIGRATIONS.at(-1)?.version ?? 0;

export class SchemaTooNew extends Error {
  override name = "SchemaTooNew";
}

const tooNew = (where: string, current: number) =>
  new SchemaTooNew(
    `The ${where} was written by a newer Assay (schema ${current}, this build knows ${LATEST}). Run the newer binary, or restore a backup taken before the upgrade.`,
  );

export function migrateSqlite(db: Database): number {
  const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (current > LATEST) throw tooNew("data directory", current);
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sqlite);
      db.exec(`PRAGMA user_version = ${m.version}`);
    })();
  }
  return LATEST;
}

/** Any number: the key of the advisory lock that serializes migrations across nodes. */
const MIGRATION_LOCK = 0x4153_5341; // "ASSA"

export async function migratePostgres(db: PgDb): Promise<number> {
  return db.sql.begin(async (tx) => {
    await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await tx.unsafe(
      "CREATE TABLE IF NOT EXISTS assay_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
    const rows = (await tx.unsafe("SELECT coalesce(max(version), 0) AS v FROM assay_schema_migrations")) as {
      v: number;
    }[];
    const current = Number(rows[0]?.v ?? 0);
    if (current > LATEST) throw tooNew("database", current);
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      await tx.unsafe(m.postgres);
      await tx.unsafe("INSERT INTO assay_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        m.version,
        m.name,
        new Date().toISOString(),
      ]);
    }
    return LATEST;
  });
}

/** The schema version a database is at (0 when empty), without migrating. */
export async function schemaVersion(db: {
  dialect: string;
  raw?: Database;
  sql?: PgDb["sql"];
}): Promise<number> {
  if (db.dialect === "sqlite")
    return (db.raw!.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  const rows = (await db.sql!.unsafe(
    "SELECT CASE WHEN to_regclass('assay_schema_migrations') IS NULL THEN 0 ELSE (SELECT coalesce(max(version), 0) FROM assay_schema_migrations) END AS v",
  )) as { v: number }[];
  return Number(rows[0]?.v ?? 0);
}
