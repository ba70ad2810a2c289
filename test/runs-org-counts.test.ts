// The run store counts, per org, its queued runs not committed yet and those committed while an
// org's queue is being counted (the per-org share, ASSAY_MAX_QUEUE_PER_ORG). Those counts must
// live only as long as they are needed: kept for every org that ever queued a run, they grew with
// the instance's orgs, deleted ones included (found by the soak, docs/benchmarks.md).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const ORGS = 12;
const WORKFLOW = {
  slug: "plain",
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
};

beforeAll(async () => {
  // A queue share of one run: every start of an org counts that org's queue.
  s = await startTestServer({ max_queue_per_org: 1 });
});
afterAll(() => s.close());

test("after async runs of many orgs have ended, no org's count is kept", async () => {
  const urls: { token: string; url: string }[] = [];
  for (let i = 0; i < ORGS; i++) {
    const { token } = await s.user(`admin${i}`, `org${i}`, "admin");
    await createWorkflow(s, token, WORKFLOW, `org${i}`);
    const r = await call(s, "POST", `/api/v1/orgs/org${i}/workflows/plain/runs/`, {
      token,
      raw: "{}",
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    urls.push({ token, url: r.json.url });
  }
  for (const { token, url } of urls) expect((await waitForRun(s, token, url)).status).toBe("succeeded");
  expect(s.deps.runs.orgsCounted()).toBe(0);
});
