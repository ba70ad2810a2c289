// `worker_max_heap_mb`: a validation worker that keeps more heap after a full collection than the
// setting says is replaced between jobs, as past its count of XPath expressions
// (schematron-worker-recycle.test.ts; docs/execution.md, "Workers replaced for what they keep"),
// and no run is lost or run twice for it. Set to 1 MB here, below any worker that loaded the
// Schematron validator (libxml2's wasm memory alone is ~34 MB): every job passes it, deterministically.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ConfigError, loadConfig } from "../src/config.ts";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const CONFIGS = 5;

beforeAll(async () => {
  s = await startTestServer({ workers: 1, worker_max_heap_mb: 1 });
  for (let i = 0; i < CONFIGS; i++) {
    const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">
  <sch:pattern>
    <sch:rule context="/*">
      <sch:assert id="A${i}" test="count(*) = ${i}">wants ${i} children</sch:assert>
    </sch:rule>
  </sch:pattern>
</sch:schema>`;
    await createWorkflow(s, s.rootToken, {
      slug: `rules-${i}`,
      allowed_file_types: ["XML"],
      steps: [{ name: "rules", validator: "schematron", config: { schema } }],
    });
  }
});
afterAll(() => s.close());

const runs = (i: number) => `/api/v1/orgs/acme/workflows/rules-${i}/runs/`;
const XML = { "content-type": "application/xml" };

/** What run `i` must find on `<doc><a/></doc>`: its assert fails unless it wants one child. */
function expected(i: number) {
  return i === 1 ? { status: "succeeded", codes: [] } : { status: "failed", codes: [`schematron.A${i}`] };
}

test("past the heap limit the worker is replaced; every run, sync or queued, ends once with its own findings", async () => {
  const pool = s.deps.pool!;
  expect(pool.maxHeapBytes).toBe(1048576);
  // Queued runs first, all at once (handed over, taken back), then sync runs one after another.
  const queued = await Promise.all(
    Array.from({ length: CONFIGS }, (_, i) =>
      call(s, "POST", runs(i), {
        token: s.rootToken,
        raw: "<doc><a/></doc>",
        headers: { ...XML, prefer: "respond-async" },
      }),
    ),
  );
  for (const r of queued) expect(r.status).toBe(202);
  const ended = await Promise.all(queued.map((r) => waitForRun(s, s.rootToken, r.json.url)));
  const sync = [];
  for (let i = 0; i < CONFIGS; i++) {
    const r = await call(s, "POST", runs(i), {
      token: s.rootToken,
      raw: "<doc><a/></doc>",
      headers: { ...XML, prefer: "wait=60" },
    });
    expect(r.status).toBe(201);
    sync.push(r.json);
  }
  for (const [i, run] of [...ended, ...sync].entries()) {
    const n = i % CONFIGS;
    const codes = run.steps[0].findings.map((f: { code: string }) => f.code);
    expect({ n, status: run.status, codes }).toEqual({ n, ...expected(n) });
  }
  // A worker runs at most one job after the one that passed the limit (the pool may have begun it
  // before it heard), then goes: 2 × CONFIGS jobs took at least CONFIGS workers, each replaced once
  // its word on its heap has come (after its last run's answer).
  await until(() => pool.recycledWorkers >= CONFIGS, "the workers to be replaced");
  // Each run once: each final, none left queued or running.
  const list = await call(s, "GET", "/api/v1/orgs/acme/runs/?page_size=200", { token: s.rootToken });
  expect(list.json.count).toBe(2 * CONFIGS);
  expect(pool.stats()).toMatchObject({ busy: 0, pipelined: 0, queued: 0 });
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
