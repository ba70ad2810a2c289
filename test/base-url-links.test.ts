// ASSAY_BASE_URL is the public URL used in `Location`, `next` and `previous` (CONTRACT §1), a
// path included: a run's answers (201 and 202) and every list's links name it, not the address
// the request reached.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const BASE = "https://assay.example.com/behind/proxy";
let s: TestServer;
const runs = "/api/v1/orgs/acme/workflows/orders/runs/";
beforeAll(async () => {
  s = await startTestServer({ base_url: BASE });
  await createWorkflow(s, s.rootToken, {
    slug: "orders",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  await createWorkflow(s, s.rootToken, {
    slug: "other",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

const post = (headers: Record<string, string> = {}) =>
  call(s, "POST", runs, {
    token: s.rootToken,
    raw: "{}",
    headers: { "content-type": "application/json", ...headers },
  });

test("a 201 and a 202 name the run at the base URL: Location, url and the version's url", async () => {
  for (const [r, status] of [
    [await post(), 201],
    [await post({ prefer: "respond-async" }), 202],
  ] as const) {
    const at = `${BASE}/api/v1/orgs/acme/runs/${r.json.id}/`;
    expect([r.status, r.headers.get("location"), r.json.url]).toEqual([status, at, at]);
    expect(r.json.workflow.version_url).toBe(
      `${BASE}/api/v1/orgs/acme/workflows/${r.json.workflow.id}/versions/1/`,
    );
  }
});

test("next and previous of the runs and workflows lists are at the base URL, other parameters kept", async () => {
  const runsList = await call(s, "GET", "/api/v1/orgs/acme/runs/?page_size=1&page=2&workflow=orders", {
    token: s.rootToken,
  });
  expect([runsList.json.count, runsList.json.next, runsList.json.previous]).toEqual([
    2,
    null,
    `${BASE}/api/v1/orgs/acme/runs/?page_size=1&page=1&workflow=orders`,
  ]);
  expect(runsList.json.results[0].url).toStartWith(`${BASE}/api/v1/orgs/acme/runs/`);
  const workflows = await call(s, "GET", "/api/v1/orgs/acme/workflows/?page_size=1", { token: s.rootToken });
  expect([workflows.json.count, workflows.json.next, workflows.json.previous]).toEqual([
    2,
    `${BASE}/api/v1/orgs/acme/workflows/?page_size=1&page=2`,
    null,
  ]);
  expect(workflows.json.results[0].url).toBe(`${BASE}/api/v1/orgs/acme/workflows/orders/`);
});
