import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { testConfig } from "../src/config.ts";
import { type Program, run } from "../src/db/program.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { onPostgres } from "./helpers/backend.ts";
import { databaseBefore } from "./helpers/schema-at.ts";
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

describe(`migration 0016 on existing versions (${onPostgres ? "PostgreSQL" : "SQLite"})`, () => {
  let server: RunningServer;
  let token: string;
  let drop: () => Promise<void> = async () => {};
  const V = "/api/v1/orgs/acme/workflows/orders/versions/";

  beforeAll(async () => {
    const o = await databaseBefore(16, seed, { prefix: "assay-m0016-" });
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
