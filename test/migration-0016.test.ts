// Migration 0016 (issue 24) on a database written by the previous schema (a SQLite data dir, or
// PostgreSQL when the suite runs there): a workflow at version 2 whose snapshots held only steps,
// file types and fail-fast. The current version gets the settings it was saved with; the older one
// stays without them and says so; both keep their steps, can be compared and run.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SYSTEM } from "../src/audit/actor.ts";
import { testConfig } from "../src/config.ts";
import { MIGRATIONS } from "../src/db/migrate.ts";
import { DB_FILE } from "../src/db/open.ts";
import { createPgDb } from "../src/db/postgres.ts";
import { type Program, run } from "../src/db/program.ts";
import { createSqliteDb } from "../src/db/sqlite.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { emptyPgDatabase, onPostgres } from "./helpers/backend.ts";
import { call, errorBody } from "./helpers/server.ts";

const TS = "2026-11-20T10:00:00.000Z";
const step = (required: string[]) => ({
  id: 1,
  order: 1,
  name: "shape",
  validator: "json_schema",
  is_active: true,
  config: { schema: { type: "object", required } },
});
// As the previous release wrote them: no name, description, status or retention.
const def = (version: number, required: string[]) => ({
  workflow_id: 1,
  version,
  slug: "orders",
  allowed_file_types: ["JSON"],
  fail_fast: true,
  steps: [step(required)],
});

function* seed(): Program<void> {
  yield* run("INSERT INTO orgs (id, slug, name, created_at) VALUES (1, 'acme', 'ACME', ?)", TS);
  yield* run(
    "INSERT INTO workflows (id, org_id, slug, name, description, allowed_file_types, retention_days, version, created_at, updated_at) VALUES (1, 1, 'orders', 'Orders \"2\"', 'All orders', '[\"JSON\"]', 30, 2, ?, ?)",
    TS,
    TS,
  );
  yield* run(
    "INSERT INTO steps (id, workflow_id, position, name, validator, config, is_active, created_at, updated_at) VALUES (1, 1, 1, 'shape', 'json_schema', ?, 1, ?, ?)",
    JSON.stringify(step(["id", "total"]).config),
    TS,
    TS,
  );
  for (const [n, required] of [
    [1, ["id"]],
    [2, ["id", "total"]],
  ] as const)
    yield* run(
      "INSERT INTO workflow_versions (workflow_id, version, definition, created_at) VALUES (1, ?, ?, ?)",
      n,
      JSON.stringify(def(n, [...required])),
      TS,
    );
}

async function older(): Promise<{ config: Record<string, unknown>; drop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "assay-m0016-"));
  const previous = MIGRATIONS.filter((x) => x.version < 16);
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
  await pg.sql.unsafe(
    "CREATE TABLE assay_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
  );
  for (const m of previous) {
    await pg.sql.unsafe(m.postgres);
    await pg.sql.unsafe("INSERT INTO assay_schema_migrations VALUES ($1, $2, $3)", [m.version, m.name, TS]);
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

describe(`migration 0016 on existing versions (${onPostgres ? "PostgreSQL" : "SQLite"})`, () => {
  let server: RunningServer;
  let token: string;
  let drop: () => Promise<void> = async () => {};
  const V = "/api/v1/orgs/acme/workflows/orders/versions/";

  beforeAll(async () => {
    const o = await older();
    drop = o.drop;
    server = await startServer(testConfig({ ...o.config, port: 0, log_level: "silent", workers: 1 }));
    const u = await server.deps.users.create({ username: "ann" }, SYSTEM);
    await server.deps.orgs.addMember(1, u.id, "executor", SYSTEM);
    token = (await server.deps.tokens.create(u.id, "t", null, SYSTEM)).token;
  });
  afterAll(async () => {
    await server?.stop();
    await drop();
  });

  test("the current version gets its settings; the older one says it has none", async () => {
    const v2 = await call(server, "GET", `${V}2/`, { token });
    expect(v2.json).toMatchObject({
      version: 2,
      is_current: true,
      created_by: null,
      settings_recorded: true,
      name: 'Orders "2"',
      description: "All orders",
      status: "active",
      retention_days: 30,
      steps: [step(["id", "total"])],
    });
    const v1 = await call(server, "GET", `${V}1/`, { token });
    expect(v1.json).toMatchObject({ version: 1, settings_recorded: false, name: null, status: null });
    expect(v1.json.steps).toEqual([step(["id"])]);
    const list = await call(server, "GET", V, { token });
    expect(list.json.results.map((x: { step_count: number }) => x.step_count)).toEqual([1, 1]);
  });

  test("the diff names the settings version 1 never recorded instead of guessing", async () => {
    const d = await call(server, "GET", `${V}2/diff/`, { token });
    expect(d.json.changes).toEqual([
      {
        path: "/steps/1/config/schema/required/1",
        op: "added",
        after: "total",
        step: { id: 1, name: "shape" },
      },
    ]);
    expect(d.json.unrecorded.sort()).toEqual(["description", "name", "retention_days", "status"]);
  });

  test("version 1 still runs; a version it never had is 409", async () => {
    const r = await call(server, "POST", "/api/v1/orgs/acme/workflows/orders/runs/?version=1", {
      token,
      raw: '{"id": 1}',
      headers: { "content-type": "application/json" },
    });
    expect(r.json.status).toBe("succeeded");
    const gone = await call(server, "POST", "/api/v1/orgs/acme/workflows/orders/runs/?version=3", {
      token,
      raw: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(gone.json).toEqual(
      errorBody(
        409,
        "workflow_version_unavailable",
        'Workflow "orders" has no version 3: its versions are 1 to 2.',
        [{ field: "version", code: "unavailable", message: "No version 3." }],
      ),
    );
  });
});
