// Runs started again from their stored row after a restart (graceful, or what a crash leaves):
// their findings, attempts and times read as those of a run that never stopped.
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { join } from "node:path";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, restartTestServer, startTestServer } from "./helpers/server.ts";

const ASYNC = { "content-type": "application/json", prefer: "respond-async" };
/** A step that fails with two findings (no id, no name), then a held one. */
const TWO = {
  slug: "two",
  fail_fast: false,
  allowed_file_types: ["JSON"],
  steps: [
    { name: "schema", validator: "json_schema", config: { schema: { required: ["id", "name"] } } },
    { name: "hold", validator: "test_hold", config: {} },
  ],
};

const submit = (s: TestServer, slug: string, doc: string) =>
  call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, { token: s.rootToken, raw: doc, headers: ASYNC });

/** SQL on a stopped server's database (either backend): what a crash would have left there. */
async function whileStopped(s: TestServer, text: string, ...params: (string | number)[]) {
  if (s.databaseUrl) {
    const pg = new SQL(s.databaseUrl);
    let n = 0;
    await pg.unsafe(text.replace(/\?/g, () => `$${++n}`), params);
    await pg.close();
    return;
  }
  const db = new Database(join(s.dataDir, "assay.db"));
  db.query(text).run(...params);
  db.close();
}

/** What a kill -9 leaves of runs it interrupted: `running`, claimed by the dead process. */
const asCrashed = (s: TestServer, ids: string[]) =>
  whileStopped(
    s,
    `UPDATE runs SET status = 'running', node_id = 'test-node' WHERE id IN (${ids.map(() => "?").join(", ")})`,
    ...ids,
  );

describe("a run executed again after a restart", () => {
  for (const how of ["graceful", "crash"] as const)
    test(`${how}: its steps' findings are shown, counted and paged like any run's`, async () => {
      let s = await startTestServer({ workers: 1, shutdown_grace_ms: 50 });
      try {
        await createWorkflow(s, s.rootToken, TWO);
        const gate = s.gates.gate();
        const r = await submit(s, "two", gate.doc());
        expect(r.status).toBe(202);
        await gate.held();
        // Graceful: past its grace period the held step goes back to the queue.
        await s.stop();
        if (how === "crash") await asCrashed(s, [r.json.id]);
        s = await restartTestServer(s, { workers: 1 });
        await gate.held(2);
        gate.open();
        const run = await waitForRun(s, s.rootToken, r.json.url);
        expect(run.summary.errors).toBe(2);
        expect(run.steps.map((x: { findings_count: number }) => x.findings_count)).toEqual([2, 0]);
        expect(run.steps[0].findings.map((f: { severity: string }) => f.severity)).toEqual(["error", "error"]);
        const f = await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/findings/`, { token: s.rootToken });
        expect(f.json.count).toBe(2);
        expect(f.json.results.map((x: { step_order: number }) => x.step_order)).toEqual([1, 1]);
        const list = await call(s, "GET", "/api/v1/orgs/acme/runs/", { token: s.rootToken });
        expect(list.json.results[0].steps.map((x: { findings_count: number }) => x.findings_count)).toEqual([2, 0]);
      } finally {
        await s.close();
      }
    });
});
