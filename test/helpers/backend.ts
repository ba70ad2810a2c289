// Which database the API tests run against: SQLite in a temp data dir (the default), or — with
// ASSAY_TEST_DATABASE=postgres — a fresh database per server in the process's throwaway
// PostgreSQL cluster (test/helpers/pg-cluster.ts). The same test files run on both (`npm test`
// runs the suite twice, scripts/test.ts).
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { join } from "node:path";
import { DB_FILE } from "../../src/db/open.ts";
import { type Param, all } from "../../src/db/program.ts";
import { createSqliteDb } from "../../src/db/sqlite.ts";
import { migratePostgres } from "../../src/db/migrate.ts";
import { createPgDb } from "../../src/db/postgres.ts";
import { sharedPgCluster } from "./pg-cluster.ts";

export type Backend = "sqlite" | "postgres";
export const BACKEND: Backend = process.env.ASSAY_TEST_DATABASE === "postgres" ? "postgres" : "sqlite";
export const onPostgres = BACKEND === "postgres";

const TEMPLATE = "assay_template";
let admin: Promise<{ sql: SQL; baseUrl: string }> | null = null;
let seq = 0;

/** A connection to the cluster's `postgres` database, and a migrated template to copy. */
function adminConnection() {
  admin ??= (async () => {
    const cluster = await sharedPgCluster();
    const sql = new SQL({ url: `${cluster.baseUrl}postgres`, max: 2 });
    await sql.unsafe(`CREATE DATABASE ${TEMPLATE}`);
    const tpl = createPgDb(`${cluster.baseUrl}${TEMPLATE}`, { max: 2 });
    await migratePostgres(tpl);
    await tpl.close();
    return { sql, baseUrl: cluster.baseUrl };
  })();
  return admin;
}

/** A new, migrated, empty PostgreSQL database; returns its URL and a function that drops it. */
export async function freshPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const { sql, baseUrl } = await adminConnection();
  const name = `assay_t${process.pid}_${++seq}`;
  await sql.unsafe(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
  return {
    url: `${baseUrl}${name}`,
    async drop() {
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** An empty PostgreSQL database with no tables (for migration and copy tests). */
export async function emptyPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const { sql, baseUrl } = await adminConnection();
  const name = `assay_e${process.pid}_${++seq}`;
  await sql.unsafe(`CREATE DATABASE ${name}`);
  return {
    url: `${baseUrl}${name}`,
    async drop() {
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * A second connection to a test server's database, as the `assay` CLI (or another node) opens
 * while the server runs: a SQLite connection to the same file, or a PostgreSQL client of its own.
 */
export interface OtherConnection {
  sql<T = Record<string, unknown>>(text: string, ...params: Param[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function otherConnection(s: {
  dataDir: string;
  databaseUrl: string | null;
}): Promise<OtherConnection> {
  if (s.databaseUrl) {
    const db = createPgDb(s.databaseUrl, { max: 1 });
    return { sql: (text, ...params) => db.exec(all(text, ...params)), close: () => db.close() };
  }
  const raw = new Database(join(s.dataDir, DB_FILE));
  raw.exec("PRAGMA busy_timeout = 5000");
  raw.exec("PRAGMA foreign_keys = ON");
  const db = createSqliteDb(raw);
  return {
    sql: (text, ...params) => db.exec(all(text, ...params)),
    close: async () => raw.close(),
  };
}
