// Migration 0007 (issue #19) on a database written by the previous schema (a SQLite data dir, or
// PostgreSQL when the suite runs there): the findings inside
// runs.steps move to run_findings, 200 to a chunk and in order, the step summaries keep a count,
// and the real server then serves those runs exactly as before — through the new bounded reads.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testConfig } from "../src/config.ts";
import { type Program, all, get, run } from "../src/db/program.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { onPostgres } from "./helpers/backend.ts";
import { databaseBefore } from "./helpers/schema-at.ts";
import { call } from "./helpers/server.ts";

const RUN = "0190f0a0-0000-7000-8000-000000000001";
const EMPTY_RUN = "0190f0a0-0000-7000-8000-000000000002";
const finding = (step: number, i: number) => ({
  severity: i % 3 ? "error" : "warning",
  code: `test.code_${step}`,
  message: `finding ${i} of step ${step}`,
  path: `/items/${i}`,
  line: i + 1,
  column: 1,
  rule: null,
});
const step = (order: number, n: number) => ({
  step_id: order,
  order,
  name: `step ${order}`,
  validator: "json_schema",
  status: n ? "failed" : "passed",
  duration_ms: 3,
  findings: Array.from({ length: n }, (_, i) => finding(order, i)),
  error: null,
});
// 1,250 findings in step 1 (seven chunks, the last one partial), 3 in step 2, none in step 3.
const STEPS = [step(1, 1250), step(2, 3), step(3, 0)];
const SUMMARY = {
  errors: 835,
  warnings: 418,
  infos: 0,
  steps_passed: 1,
  steps_failed: 2,
  steps_skipped: 0,
  truncated: false,
};

const TS = "2026-11-20T10:00:00.000Z";
/** The rows an older release wrote: an org, a workflow, two runs (one without steps). */
function* seed(): Program<void> {
  yield* run("INSERT INTO orgs (id, slug, name, created_at) VALUES (1, 'acme', 'ACME', ?)", TS);
  yield* run(
    "INSERT INTO workflows (id, org_id, slug, name, allowed_file_types, created_at, updated_at) VALUES (1, 1, 'wf', 'wf', '[\"JSON\"]', ?, ?)",
    TS,
    TS,
  );
  for (const [sid, id, steps] of [
    [1, RUN, STEPS],
    [2, EMPTY_RUN, []],
  ] as const) {
    yield* run(
      "INSERT INTO submissions (id, org_id, content_type, file_type, size, sha256, content, created_at) VALUES (?, 1, 'application/json', 'JSON', 2, 'x', ?, ?)",
      sid,
      new TextEncoder().encode("{}"),
      TS,
    );
    yield* run(
      "INSERT INTO runs (id, org_id, workflow_id, workflow_version, submission_id, status, steps, summary, created_at, finished_at) VALUES (?, 1, 1, 1, ?, 'failed', ?, ?, ?, ?)",
      id,
      sid,
      JSON.stringify(steps),
      JSON.stringify(SUMMARY),
      TS,
      TS,
    );
  }
}

describe(`migration 0007 on existing runs (${onPostgres ? "PostgreSQL" : "SQLite"})`, () => {
  let server: RunningServer;
  let token: string;
  let drop: () => Promise<void> = async () => {};

  beforeAll(async () => {
    const older = await databaseBefore(7, seed, { prefix: "assay-m0007-" });
    drop = older.drop;
    server = await startServer(testConfig({ ...older.config, port: 0, log_level: "silent", workers: 1 }));
    const u = await server.deps.users.create({ username: "ann" }, SYSTEM);
    await server.deps.orgs.addMember(1, u.id, "viewer", SYSTEM);
    token = (await server.deps.tokens.create(u.id, "t", null, SYSTEM)).token;
  });
  afterAll(async () => {
    await server?.stop();
    await drop();
  });

  test("findings are in run_findings, 200 a chunk; runs.steps keeps summaries and counts", async () => {
    const db = server.deps.db;
    const chunks = await db.exec(
      all<{ step_index: number; chunk: number; findings: string }>(
        "SELECT step_index, chunk, findings FROM run_findings ORDER BY step_index, chunk",
      ),
    );
    expect(chunks.map((c) => [Number(c.step_index), Number(c.chunk), JSON.parse(c.findings).length])).toEqual(
      [...[0, 1, 2, 3, 4, 5].map((chunk) => [0, chunk, 200]), [0, 6, 50], [1, 0, 3]],
    );
    // In order, and exactly the objects that were stored.
    expect(chunks.filter((c) => Number(c.step_index) === 0).flatMap((c) => JSON.parse(c.findings))).toEqual(
      STEPS[0]!.findings,
    );
    const steps = async (id: string) =>
      (await db.exec(get<{ steps: string }>("SELECT steps FROM runs WHERE id = ?", id)))!.steps;
    expect(JSON.parse(await steps(RUN))).toEqual(
      STEPS.map((s) => ({ ...s, findings: [], findings_count: s.findings.length })),
    );
    expect(JSON.parse(await steps(EMPTY_RUN))).toEqual([]);
  });

  test("GET of the run: its first 1000 findings, in their order, and every step's count", async () => {
    const r = await call(server, "GET", `/api/v1/orgs/acme/runs/${RUN}/`, { token });
    expect(r.status).toBe(200);
    expect(r.json.steps.map((s: { findings_count: number }) => s.findings_count)).toEqual([1250, 3, 0]);
    expect(r.json.steps[0].findings).toEqual(STEPS[0]!.findings.slice(0, 1000));
    expect(r.json.steps[1].findings).toEqual([]);
  });

  test("GET …/findings/: all 1253 of them, exactly as they were", async () => {
    const found: unknown[] = [];
    for (let page = 1; page <= 7; page++) {
      const r = await call(
        server,
        "GET",
        `/api/v1/orgs/acme/runs/${RUN}/findings/?page=${page}&page_size=200`,
        {
          token,
        },
      );
      expect(r.json.count).toBe(1253);
      for (const { step_id: _, step_order: __, ...f } of r.json.results) found.push(f);
    }
    expect(found).toEqual([...STEPS[0]!.findings, ...STEPS[1]!.findings]);
  });
});
