// GET of a run reads its row, then the chunks of findings the row's findings_count points at: two
// statements, not one snapshot. They cannot disagree because a run's findings are stored only in
// the transaction that writes its final status, once, and are never rewritten (runs are never
// deleted): a row read before that commit counts no finding, so no chunk is read beside it; a
// row read after it is final, and so are its chunks. A running run's findings come from this
// node's memory (executor.live), as they are at that moment. This file holds a run between its
// steps (a failing step's findings made, a held step after it) and checks that invariant where a
// reader would see it: the database, and the answer.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "two",
    allowed_file_types: ["JSON"],
    fail_fast: false,
    steps: [
      { name: "schema", validator: "json_schema", config: { schema: { required: ["id"] } } },
      { name: "hold", validator: "test_hold", config: {} },
    ],
  });
});
afterAll(() => s?.close());

test("a run held after a step with findings: no finding stored until the run is final", async () => {
  const gate = s.gates.gate();
  const started = await call(s, "POST", "/api/v1/orgs/acme/workflows/two/runs/", {
    token: s.rootToken,
    raw: gate.doc(),
    headers: { "content-type": "application/json", prefer: "respond-async" },
  });
  expect(started.status).toBe(202);
  const id: string = started.json.id;
  const path = new URL(started.json.url).pathname;
  await gate.held();

  const stored = async () => ({
    status: (await s.row<{ status: string }>("SELECT status FROM runs WHERE id = ?", id))!.status,
    counts: JSON.parse(
      (await s.row<{ steps: string }>("SELECT steps FROM runs WHERE id = ?", id))!.steps,
    ).map((st: { findings_count?: number }) => st.findings_count ?? 0),
    chunks: (await s.sql("SELECT run_id FROM run_findings WHERE run_id = ?", id)).length,
  });
  // The first step's findings exist, in memory: the answer shows them beside `running`.
  const running = await call(s, "GET", path, { token: s.rootToken });
  expect([running.json.status, running.json.steps.map((st: { status: string }) => st.status)]).toEqual([
    "running",
    ["failed", "running"],
  ]);
  expect(running.json.steps[0].findings.length).toBeGreaterThan(0);
  // Stored: nothing a second statement could read beside the row.
  expect(await stored()).toEqual({ status: "running", counts: [0, 0], chunks: 0 });

  gate.open("pass");
  const final = await waitForRun(s, s.rootToken, path);
  expect(final.status).toBe("failed");
  const after = await stored();
  expect(after.status).toBe("failed");
  expect(after.counts[0]).toBe(final.steps[0].findings_count);
  expect(after.chunks).toBeGreaterThan(0);
  expect(final.steps[0].findings).toEqual(running.json.steps[0].findings);
});
