// A database as a build before migration N left it: every migration up to N − 1 applied by hand,
// recorded as that build recorded them, then `seed` written. A SQLite data dir, or a new
// PostgreSQL database when the suite runs there. The server under test migrates it at start.
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS } from "../../src/db/migrate.ts";
import { DB_FILE } from "../../src/db/open.ts";
import { createPgDb } from "../../src/db/postgres.ts";
import type { Program } from "../../src/db/program.ts";
import { createSqliteDb } from "../../src/db/sqlite.ts";
import { emptyPgDatabase, onPostgres } from "./backend.ts";
import { testTempDir } from "./temp.ts";

const APPLIED_AT = "2026-11-20T10:00:00.000Z";

export interface OldDatabase {
  /** Settings for testConfig: the data dir, and on PostgreSQL the database's URL. */
  config: Record<string, unknown>;
  drop(): Promise<void>;
}

/**
 * A database at schema `before − 1`. `additiveColumn`: the history table with its `additive`
 * column, as later builds wrote it; earlier builds wrote three columns, and the server adds it.
 */
export async function databaseBefore(
  before: number,
  seed: () => Program<void>,
  opts: { additiveColumn?: boolean; prefix?: string } = {},
): Promise<OldDatabase> {
  const dir = testTempDir(opts.prefix ?? `assay-before-${before}-`);
  const previous = MIGRATIONS.filter((x) => x.version < before);
  if (!onPostgres) {
    const raw = new Database(join(dir, DB_FILE), { create: true, strict: true });
    raw.exec("PRAGMA journal_mode = WAL");
    for (const m of previous) {
      raw.exec(m.sqlite);
      raw.exec(`PRAGMA user_version = ${m.version}`);
    }
    await createSqliteDb(raw).tx(seed);
    raw.close();
    return { config: { data_dir: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const empty = await emptyPgDatabase();
  const pg = createPgDb(empty.url, { max: 1 });
  const additive = opts.additiveColumn ?? false;
  await pg.sql.unsafe(
    `CREATE TABLE assay_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL${additive ? ", additive INTEGER NOT NULL DEFAULT 0" : ""})`,
  );
  for (const m of previous) {
    await pg.sql.unsafe(m.postgres);
    await pg.sql.unsafe(
      `INSERT INTO assay_schema_migrations VALUES ($1, $2, $3${additive ? ", $4" : ""})`,
      additive ? [m.version, m.name, APPLIED_AT, m.additive ? 1 : 0] : [m.version, m.name, APPLIED_AT],
    );
  }
  await pg.tx(seed);
  await pg.close();
  return {
    config: { data_dir: dir, database_url: empty.url },
    async drop() {
      rmSync(dir, { recursive: true, force: true });
      await empty.drop();
    },
  };
}
