// Rebuilds SQLite tables so that their `id INTEGER PRIMARY KEY` becomes AUTOINCREMENT (migration
// 18). Without it SQLite hands out max(id) + 1, so deleting the newest user, step or webhook
// gave its id to the next one: an audit entry naming "user 7" or a run naming "step 12" then
// pointed at a different row, and a client holding an old id reached a new one. PostgreSQL's
// identities never go back, and both backends must mean the same by an id.
//
// AUTOINCREMENT can only be declared by CREATE TABLE, so each table is rebuilt the way SQLite's
// documentation prescribes (ALTER TABLE, "other kinds of table schema changes"): foreign keys
// off (outside the transaction, the caller's job), a new table from the stored CREATE statement,
// the rows copied, the old table dropped, the new one renamed, its indexes and triggers
// recreated from their stored statements, and `PRAGMA foreign_key_check` before the commit.
import type { Database } from "bun:sqlite";

const ID_COLUMN = /(\bid\s+INTEGER\s+PRIMARY\s+KEY)(?!\s+AUTOINCREMENT)\b/i;

/** The CREATE TABLE statement of `table` under the name `as`, its id AUTOINCREMENT. */
export function autoincrementSql(createSql: string, table: string, as: string): string {
  const head = new RegExp(`^\\s*CREATE\\s+TABLE\\s+"?${table}"?\\s*\\(`, "i");
  if (!head.test(createSql) || !ID_COLUMN.test(createSql))
    throw new Error(`migration 18: unexpected schema of table ${table}`);
  return createSql.replace(head, `CREATE TABLE ${as} (`).replace(ID_COLUMN, "$1 AUTOINCREMENT");
}

/** Rebuilds `table` with an AUTOINCREMENT id; the rows, indexes and triggers stay as they were. */
export function rebuildWithAutoincrement(db: Database, table: string): void {
  const create = db.query("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?").get(table) as {
    sql: string;
  } | null;
  if (!create) throw new Error(`migration 18: table ${table} is missing`);
  if (/\bAUTOINCREMENT\b/i.test(create.sql)) return;
  // Automatic indexes (UNIQUE columns) have no statement and come back with the table.
  const attached = db
    .query(
      "SELECT sql FROM sqlite_schema WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL",
    )
    .all(table) as { sql: string }[];
  const temp = `${table}__rebuilt`;
  db.exec(autoincrementSql(create.sql, table, temp));
  db.exec(`INSERT INTO ${temp} SELECT * FROM ${table}`);
  db.exec(`DROP TABLE ${table}`);
  db.exec(`ALTER TABLE ${temp} RENAME TO ${table}`);
  for (const a of attached) db.exec(a.sql);
}

/** Throws when a row points at a parent that is not there (run before committing a rebuild). */
export function assertForeignKeys(db: Database): void {
  const broken = db.query("PRAGMA foreign_key_check").all() as { table: string; parent: string }[];
  if (broken.length)
    throw new Error(
      `migration 18: ${broken.length} rows lost their parent (first: ${broken[0]!.table} → ${broken[0]!.parent})`,
    );
}
