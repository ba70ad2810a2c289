// A test server's own validator (test_hold, docs/testing.md) is known to a restore as to a save:
// restoring a version whose step holds runs was a 400 unknown_validator, since the restore's
// check was not given the validators the instance adds. Found by test/model-fuzz.test.ts.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

test("a version with a test_hold step is restored, and its runs are held again", async () => {
  const wf = await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
  const put = await call(s, "PUT", "/api/v1/orgs/acme/workflows/hold/", {
    token: s.rootToken,
    body: { ...HOLD_WORKFLOW, name: "hold", steps: [{ name: "syntax", validator: "syntax", config: {} }] },
  });
  expect(put.status).toBe(200);
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/hold/versions/${wf.version}/restore/`, {
    token: s.rootToken,
  });
  expect([r.status, r.json.steps?.map((x: { validator: string }) => x.validator)]).toEqual([
    201,
    ["test_hold"],
  ]);

  const gate = s.gates.gate();
  const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
    token: s.rootToken,
    raw: gate.doc(),
    headers: { "content-type": "application/json", prefer: "respond-async" },
  });
  expect(run.status).toBe(202);
  await gate.held();
  gate.open();
});
