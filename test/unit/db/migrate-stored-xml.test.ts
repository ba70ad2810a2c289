// Migration 0008 on a database written before it: the stored JSON Schemas keep their rows and
// become kind json_schema, with no target namespace.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { MIGRATIONS, migrateSqlite as migrate } from "../../../src/db/migrate.ts";

test("0008 keeps the stored JSON Schemas, as kind json_schema", () => {
  const db = new Database(":memory:");
  for (const m of MIGRATIONS.filter((x) => x.version <= 6)) db.exec(m.sqlite);
  db.exec("PRAGMA user_version = 6");
  db.exec("INSERT INTO orgs (id, slug, name, created_at) VALUES (1, 'acme', 'Acme', '2026-01-01T00:00:00Z')");
  db.exec(
    `INSERT INTO org_schemas (org_id, uri, schema, created_at, updated_at) VALUES (1, 'urn:x', '{"type":"object"}', 't', 't')`,
  );
  const latest = Math.max(...MIGRATIONS.map((m) => m.version));
  expect(migrate(db)).toBe(latest);
  expect(db.query("SELECT uri, kind, target_namespace, schema FROM org_schemas").all()).toEqual([
    { uri: "urn:x", kind: "json_schema", target_namespace: null, schema: '{"type":"object"}' },
  ]);
  expect((db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(latest);
});
