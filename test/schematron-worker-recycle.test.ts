// A worker that has run more distinct Schematron configs than the pool's bound of XPath expressions
// is replaced between jobs (fontoxpath keeps every expression it compiled: docs/execution.md,
// "Workers replaced for what they keep"), and no run is lost or run twice for it. The bound is
// lowered through the pool's test hook (maxRetained): each config here holds 3 expressions (a
// rule's context, an assert, a report), so the 4th config passes a bound of 10.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, startTestServer } from "./helpers/server.ts";
import { createRuleWorkflows, expectEachRunOnce, runEachQueuedThenSync } from "./helpers/worker-recycle.ts";

let s: TestServer;
const CONFIGS = 7;

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  s.deps.pool!.maxRetained = 10;
  await createRuleWorkflows(s, CONFIGS, true);
});
afterAll(() => s.close());

test("past the bound the worker is replaced; every run, sync or queued, ends once with its own findings", async () => {
  await runEachQueuedThenSync(s, CONFIGS);
  // 7 configs of 3 on the first worker: replaced after its 4th (12 > 10); the next one holds the
  // 3 left (9), then compiles all 7 again for the sync runs and is replaced in turn.
  expect(s.deps.pool!.recycledWorkers).toBeGreaterThanOrEqual(2);
  await expectEachRunOnce(s, CONFIGS);
});
