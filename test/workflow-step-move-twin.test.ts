// Moving a step past a twin (another step with the same name, validator and config): the steps'
// contents read the same in either order, but the steps are not the same ones (a step keeps its
// id through moves, docs/audit.md), so the move is a change: saved as a new version, logged, and
// answered at its new place. It was a 200 at the old place with nothing saved. Found by
// test/model-fuzz.test.ts.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

test("a step moved past its twin lands at the order asked, in a new version", async () => {
  const twin = { name: "object", validator: "json_schema", config: { schema: { type: "object" } } };
  const wf = await createWorkflow(s, s.rootToken, {
    slug: "twins",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }, twin, twin],
  });
  const [, first, second] = wf.steps;
  const entries = await s.count("audit_log");

  const r = await call(s, "PATCH", `/api/v1/orgs/acme/workflows/twins/steps/${first.id}/`, {
    token: s.rootToken,
    body: { order: 3 },
  });
  expect([r.status, r.json.id, r.json.order]).toEqual([200, first.id, 3]);
  const now = await call(s, "GET", "/api/v1/orgs/acme/workflows/twins/", { token: s.rootToken });
  expect(now.json.steps.map((x: { id: number; order: number }) => [x.id, x.order])).toEqual([
    [wf.steps[0].id, 1],
    [second.id, 2],
    [first.id, 3],
  ]);
  expect(now.json.version).toBe(wf.version + 1);
  expect(await s.count("audit_log")).toBe(entries + 1);

  // Asked to stay where it is: no change, no version, no entry.
  const same = await call(s, "PATCH", `/api/v1/orgs/acme/workflows/twins/steps/${first.id}/`, {
    token: s.rootToken,
    body: { order: 3 },
  });
  expect([same.status, same.json.order]).toEqual([200, 3]);
  const after = await call(s, "GET", "/api/v1/orgs/acme/workflows/twins/", { token: s.rootToken });
  expect(after.json.version).toBe(wf.version + 1);
  expect(await s.count("audit_log")).toBe(entries + 1);
});
