// A start refused because the whole queue is full must not leave its org's count behind: the
// count of an org's queue is kept in the run store until the admission check reads it
// (src/runs/store.ts, queuedOfOrg). The check threw the queue's 503 before it read the org's
// count, so each such refusal left one tally for ever, and every later create of that org
// walked all of them (2026-11-29 review).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, WORKER_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;
const ASYNC = { "content-type": "application/json", prefer: "respond-async" };

beforeAll(async () => {
  // The org's share equals the queue: a full queue is counted by both checks.
  s = await startTestServer({ workers: 1, max_queue: 3, max_queue_per_org: 3 });
  await createWorkflow(s, s.rootToken, WORKER_WORKFLOW);
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
});
afterAll(() => s.close());

test("a run refused with a full queue keeps no count of its org", async () => {
  const gate = s.gates.gate("busy");
  const urls: string[] = [];
  const start = (wf: string, raw: string) =>
    call(s, "POST", runs(wf), { token: s.rootToken, raw, headers: ASYNC });
  for (let i = 0; i < s.deps.pool!.capacity; i++) {
    const r = await start("hold", gate.doc());
    expect(r.status).toBe(202);
    urls.push(r.json.url);
  }
  await until(() => s.deps.executor.stats().inFlight === s.deps.pool!.capacity, "the pool to be full");
  await until(async () => (await s.deps.executor.queueDepth()) === 0, "the held runs to leave the queue");
  for (let i = 0; i < 3; i++) {
    const r = await start("fast", "{}");
    expect(r.status).toBe(202);
    urls.push(r.json.url);
  }
  const before = await s.count("runs");
  for (let i = 0; i < 3; i++) {
    const r = await start("fast", "{}");
    expect(r.status).toBe(503);
    expect(r.json).toEqual(errorBody(503, "service_unavailable", "Too many runs are waiting; retry later."));
  }
  expect(await s.count("runs")).toBe(before);
  expect(s.deps.runs.orgsCounted()).toBe(0);
  gate.open();
  for (const url of urls) expect((await waitForRun(s, s.rootToken, url)).status).toBe("succeeded");
  expect(s.deps.runs.orgsCounted()).toBe(0);
});
