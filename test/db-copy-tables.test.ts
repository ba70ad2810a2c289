// `assay db copy` copies the tables it lists (src/db/copy.ts COPY_TABLES) and leaves out those it
// names as schema or transient state (NOT_COPIED): every table of a migrated database is one or
// the other, so a migration's new table (pinned_documents, 21) cannot be left behind by a copy.
// On SQLite, or PostgreSQL when the suite runs there.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { COPY_TABLES, NOT_COPIED } from "../src/db/copy.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
});
afterAll(() => s.close());

test("every table of the schema is copied or named as not copied", async () => {
  const rows = await s.sql<{ name: string }>(
    s.databaseUrl
      ? "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()"
      : "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%'",
  );
  const listed = [...COPY_TABLES.map((t) => t.name), ...NOT_COPIED].sort();
  expect(rows.map((r) => r.name).sort()).toEqual(listed);
});
