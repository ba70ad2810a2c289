// `worker_max_heap_mb`: a validation worker that keeps more heap after a full collection than the
// setting says is replaced between jobs, as past its count of XPath expressions
// (schematron-worker-recycle.test.ts; docs/execution.md, "Workers replaced for what they keep"),
// and no run is lost or run twice for it. Set to 1 MB here, below any worker that loaded the
// Schematron validator (libxml2's wasm memory alone is ~34 MB): every job passes it, deterministically.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ConfigError, loadConfig } from "../src/config.ts";
import { until } from "./helpers/fixtures.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";
import { createRuleWorkflows, expectEachRunOnce, runEachQueuedThenSync } from "./helpers/worker-recycle.ts";

let s: TestServer;
const CONFIGS = 5;

beforeAll(async () => {
  s = await startTestServer({ workers: 1, worker_max_heap_mb: 1 });
  await createRuleWorkflows(s, CONFIGS, false);
});
afterAll(() => s.close());

test("past the heap limit the worker is replaced; every run, sync or queued, ends once with its own findings", async () => {
  const pool = s.deps.pool!;
  expect(pool.maxHeapBytes).toBe(1048576);
  await runEachQueuedThenSync(s, CONFIGS);
  // A worker runs at most one job after the one that passed the limit (the pool may have begun it
  // before it heard), then goes: 2 × CONFIGS jobs took at least CONFIGS workers, each replaced once
  // its word on its heap has come (after its last run's answer).
  await until(() => pool.recycledWorkers >= CONFIGS, "the workers to be replaced");
  await expectEachRunOnce(s, CONFIGS);
});

test("the setting is checked at start: a whole number of MB, 0 (no bound) or more", () => {
  const problems = (v: string) => {
    try {
      loadConfig({ ASSAY_WORKER_MAX_HEAP_MB: v });
      return [];
    } catch (e) {
      return (e as ConfigError).problems;
    }
  };
  expect(problems("0")).toEqual([]);
  expect(problems("-1")).toEqual(["ASSAY_WORKER_MAX_HEAP_MB: -1 is outside 0..16777216"]);
  expect(problems("0.5")).toEqual(['ASSAY_WORKER_MAX_HEAP_MB: "0.5" is not an integer']);
  expect(problems("256MB")).toEqual(['ASSAY_WORKER_MAX_HEAP_MB: "256MB" is not an integer']);
  expect(loadConfig({}).worker_max_heap_mb).toBe(512);
  expect(loadConfig({}, { worker_max_heap_mb: "64" }).worker_max_heap_mb).toBe(64); // --worker-max-heap-mb
});
