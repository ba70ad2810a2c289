// Migration 18 on a SQLite data dir written at schema 17: the seven tables rebuilt with an
// AUTOINCREMENT id keep every row, index, trigger and foreign key (a DROP with foreign keys on
// would have cascaded into memberships, tokens and deliveries), and foreign keys are on again
// after it. PostgreSQL's migration 18 changes nothing (its identities never went back).
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { LATEST, MIGRATIONS } from "../src/db/migrate.ts";
import { DB_FILE, openDatabase } from "../src/db/open.ts";
import { autoincrementSql } from "../src/db/rebuild.ts";
import { onPostgres } from "./helpers/backend.ts";
import { testTempDir } from "./helpers/temp.ts";

const TS = "2026-11-20T10:00:00.000Z";
const REBUILT = MIGRATIONS.find((m) => m.version === 18)!.sqliteAutoincrement!;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function at17(): string {
  const dir = testTempDir("assay-m0018-");
  dirs.push(dir);
  const db = new Database(join(dir, DB_FILE), { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA foreign_keys = ON");
  for (const m of MIGRATIONS.filter((x) => x.version < 18)) {
    db.exec(m.sqlite);
    db.exec(`PRAGMA user_version = ${m.version}`);
  }
  const q = (sql: string, ...p: (string | number)[]) => db.query(sql).run(...p);
  for (const [id, name] of [
    [1, "root"],
    [2, "ann"],
    [3, "bob"],
  ] as const)
    q("INSERT INTO users (id, username, created_at) VALUES (?, ?, ?)", id, name, TS);
  q("INSERT INTO orgs (id, slug, name, created_at) VALUES (1, 'acme', 'ACME', ?)", TS);
  q(
    "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (1, 2, 'admin', ?), (1, 3, 'viewer', ?)",
    TS,
    TS,
  );
  q(
    "INSERT INTO api_tokens (id, user_id, name, prefix, digest, created_at) VALUES (1, 2, 't', 'p1', x'00', ?), (2, 3, 't', 'p2', x'01', ?)",
    TS,
    TS,
  );
  q(
    "INSERT INTO web_sessions (id, user_id, digest, csrf, created_at, expires_at) VALUES (1, 3, x'02', 'c', ?, ?)",
    TS,
    TS,
  );
  q(
    "INSERT INTO workflows (id, org_id, slug, name, allowed_file_types, created_at, updated_at) VALUES (1, 1, 'orders', 'Orders', '[\"JSON\"]', ?, ?)",
    TS,
    TS,
  );
  q(
    "INSERT INTO steps (id, workflow_id, position, name, validator, config, created_at, updated_at) VALUES (5, 1, 1, 's', 'syntax', '{}', ?, ?)",
    TS,
    TS,
  );
  q(
    "INSERT INTO webhooks (id, org_id, url, secret, events, workflow_slugs, created_at, updated_at) VALUES (4, 1, 'http://127.0.0.1:9/h', 's', '[\"run.completed\"]', '[]', ?, ?)",
    TS,
    TS,
  );
  db.close();
  return dir;
}

/** Indexes and triggers of the whole schema, and every row of the rebuilt tables. */
function snapshot(db: Database) {
  const schema = db
    .query(
      "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE type IN ('index', 'trigger') ORDER BY name",
    )
    .all() as { name: string }[];
  const rows = Object.fromEntries(REBUILT.map((t) => [t, db.query(`SELECT * FROM ${t} ORDER BY id`).all()]));
  return { schema, rows };
}

describe.skipIf(onPostgres)("migration 0018 on a SQLite data dir at schema 17", () => {
  test("rows, indexes, triggers and foreign keys survive; ids go on from the highest", () => {
    const dir = at17();
    const before = (() => {
      const db = new Database(join(dir, DB_FILE), { strict: true });
      try {
        return snapshot(db);
      } finally {
        db.close();
      }
    })();
    const db = openDatabase(dir);
    try {
      expect((db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(LATEST);
      // Later migrations add objects of their own; everything there before is there unchanged.
      const after = snapshot(db);
      expect(after.rows).toEqual(before.rows);
      expect(after.schema.filter((o) => before.schema.some((b) => b.name === o.name))).toEqual(before.schema);
      for (const t of REBUILT) {
        const { sql } = db.query("SELECT sql FROM sqlite_schema WHERE name = ?").get(t) as { sql: string };
        expect(sql).toContain("INTEGER PRIMARY KEY AUTOINCREMENT");
        expect(sql).toMatch(new RegExp(`^CREATE TABLE "?${t}"? \\(`));
      }
      expect(db.query("PRAGMA foreign_keys").get()).toEqual({ foreign_keys: 1 });
      expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
      // The children kept their rows through the rebuild of their parents…
      expect(db.query("SELECT count(*) AS n FROM memberships").get()).toEqual({ n: 2 });
      // …and the foreign keys still act: deleting bob removes his membership, token and session.
      const gen = () => (db.query("SELECT value FROM cache_generation").get() as { value: number }).value;
      const g0 = gen();
      db.query("DELETE FROM users WHERE id = 3").run();
      expect(gen()).toBeGreaterThan(g0); // the users_gen_delete trigger is back
      expect(db.query("SELECT user_id FROM memberships").all()).toEqual([{ user_id: 2 }]);
      expect(db.query("SELECT id FROM api_tokens").all()).toEqual([{ id: 1 }]);
      expect(db.query("SELECT count(*) AS n FROM web_sessions").get()).toEqual({ n: 0 });
      // bob's id (the highest) is not handed out again.
      const next = db
        .query("INSERT INTO users (username, created_at) VALUES ('cleo', ?) RETURNING id")
        .get(TS);
      expect(next).toEqual({ id: 4 });
      const hook = db
        .query(
          "INSERT INTO webhooks (org_id, url, secret, events, workflow_slugs, created_at, updated_at) VALUES (1, 'u', 's', '[]', '[]', ?, ?) RETURNING id",
        )
        .get(TS, TS);
      expect(hook).toEqual({ id: 5 });
    } finally {
      db.close();
    }
    // A second open finds nothing to do and changes nothing.
    const again = openDatabase(dir);
    try {
      expect(
        (
          again.query("SELECT count(*) AS n FROM assay_schema_migrations WHERE version = 18").get() as {
            n: number;
          }
        ).n,
      ).toBe(1);
    } finally {
      again.close();
    }
  });
});

describe("autoincrementSql", () => {
  test("renames the table and marks the id, whatever the spacing", () => {
    expect(
      autoincrementSql(
        "CREATE TABLE users (\n  id            INTEGER PRIMARY KEY,\n  n TEXT\n) STRICT",
        "users",
        "x",
      ),
    ).toBe("CREATE TABLE x (\n  id            INTEGER PRIMARY KEY AUTOINCREMENT,\n  n TEXT\n) STRICT");
    expect(autoincrementSql('CREATE TABLE "steps"(id INTEGER PRIMARY KEY, a INT)', "steps", "y")).toBe(
      "CREATE TABLE y (id INTEGER PRIMARY KEY AUTOINCREMENT, a INT)",
    );
  });
  test("refuses a table it does not recognise rather than guess", () => {
    expect(() => autoincrementSql("CREATE TABLE t (key TEXT PRIMARY KEY)", "t", "u")).toThrow(
      "migration 18: unexpected schema of table t",
    );
    expect(() => autoincrementSql("CREATE TABLE other (id INTEGER PRIMARY KEY)", "t", "u")).toThrow(
      "migration 18: unexpected schema of table t",
    );
  });
});
