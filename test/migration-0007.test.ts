// Migration 0007 (issue #19) on a data dir written by the previous schema: the findings inside
// runs.steps move to run_findings, 200 to a chunk and in order, the step summaries keep a count,
// and the real server then serves those runs exactly as before — through the new bounded reads.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testConfig } from "../src/config.ts";
import { MIGRATIONS } from "../src/db/migrate.ts";
import { DB_FILE } from "../src/db/open.ts";
import { type RunningServer, startServer } from "../src/server.ts";
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

let dir: string;
let server: RunningServer;
let token: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "assay-m0007-"));
  // The schema as the previous release left it, and rows it wrote.
  const db = new Database(join(dir, DB_FILE), { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  for (const m of MIGRATIONS.filter((x) => x.version < 7)) {
    db.exec(m.sql);
    db.exec(`PRAGMA user_version = ${m.version}`);
  }
  const ts = "2026-11-20T10:00:00.000Z";
  db.query("INSERT INTO orgs (id, slug, name, created_at) VALUES (1, 'acme', 'ACME', ?)").run(ts);
  db.query(
    "INSERT INTO workflows (id, org_id, slug, name, allowed_file_types, created_at, updated_at) VALUES (1, 1, 'wf', 'wf', '[\"JSON\"]', ?, ?)",
  ).run(ts, ts);
  for (const [sid, id, steps] of [
    [1, RUN, STEPS],
    [2, EMPTY_RUN, []],
  ] as const) {
    db.query(
      "INSERT INTO submissions (id, org_id, content_type, file_type, size, sha256, content, created_at) VALUES (?, 1, 'application/json', 'JSON', 2, 'x', CAST('{}' AS BLOB), ?)",
    ).run(sid, ts);
    db.query(
      "INSERT INTO runs (id, org_id, workflow_id, workflow_version, submission_id, status, steps, summary, created_at, finished_at) VALUES (?, 1, 1, 1, ?, 'failed', ?, ?, ?, ?)",
    ).run(id, sid, JSON.stringify(steps), JSON.stringify(SUMMARY), ts, ts);
  }
  db.close();
  server = await startServer(testConfig({ data_dir: dir, port: 0, log_level: "silent", workers: 1 }));
  const u = await server.deps.users.create({ username: "ann" });
  await server.deps.orgs.addMember(1, u.id, "viewer");
  token = (await server.deps.tokens.create(u.id, "t", null)).token;
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("migration 0007 on existing runs", () => {
  test("findings are in run_findings, 200 a chunk; runs.steps keeps summaries and counts", () => {
    const db = server.deps.db;
    expect(db.query("PRAGMA user_version").get()).toEqual({ user_version: 7 });
    const chunks = db
      .query<{ step_index: number; chunk: number; n: number }, []>(
        "SELECT step_index, chunk, json_array_length(findings) AS n FROM run_findings ORDER BY step_index, chunk",
      )
      .all();
    expect(chunks).toEqual([
      ...[0, 1, 2, 3, 4, 5].map((chunk) => ({ step_index: 0, chunk, n: 200 })),
      { step_index: 0, chunk: 6, n: 50 },
      { step_index: 1, chunk: 0, n: 3 },
    ]);
    const stored = JSON.parse(
      (db.query("SELECT steps FROM runs WHERE id = ?").get(RUN) as { steps: string }).steps,
    );
    expect(stored).toEqual(STEPS.map((s) => ({ ...s, findings: [], findings_count: s.findings.length })));
    expect((db.query("SELECT steps FROM runs WHERE id = ?").get(EMPTY_RUN) as { steps: string }).steps).toBe(
      "[]",
    );
  });

  test("GET of the run: its first 1000 findings, in their order, and every step's count", async () => {
    const r = await call(server, "GET", `/api/v1/orgs/acme/runs/${RUN}/`, { token });
    expect(r.status).toBe(200);
    expect(r.json.steps.map((s: { findings_count: number }) => s.findings_count)).toEqual([1250, 3, 0]);
    expect(r.json.steps[0].findings).toEqual(STEPS[0]!.findings.slice(0, 1000));
    expect(r.json.steps[1].findings).toEqual([]);
  });

  test("GET …/findings/: all 1253 of them, exactly as they were", async () => {
    const all: unknown[] = [];
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
      for (const { step_id: _, step_order: __, ...f } of r.json.results) all.push(f);
    }
    expect(all).toEqual([...STEPS[0]!.findings, ...STEPS[1]!.findings]);
  });
});
