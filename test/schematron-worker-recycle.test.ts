// A worker that has run more distinct Schematron configs than the pool's bound of XPath expressions
// is replaced between jobs (fontoxpath keeps every expression it compiled: docs/execution.md,
// "Workers replaced for what they keep"), and no run is lost or run twice for it. The bound is
// lowered through the pool's test hook (maxRetained): each config here holds 3 expressions (a
// rule's context, an assert, a report), so the 4th config passes a bound of 10.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const CONFIGS = 7;

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  s.deps.pool!.maxRetained = 10;
  for (let i = 0; i < CONFIGS; i++) {
    const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">
  <sch:pattern>
    <sch:rule context="/*">
      <sch:assert id="A${i}" test="count(*) = ${i}">wants ${i} children</sch:assert>
      <sch:report id="R${i}" test="name() = 'x${i}'">named x${i}</sch:report>
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

test("past the bound the worker is replaced; every run, sync or queued, ends once with its own findings", async () => {
  const pool = s.deps.pool!;
  // Queued runs first, all at once (handed over, taken back), then sync runs of the same configs.
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
  // 7 configs of 3 on the first worker: replaced after its 4th (12 > 10); the next one holds the
  // 3 left (9), then compiles all 7 again for the sync runs and is replaced in turn.
  expect(pool.recycledWorkers).toBeGreaterThanOrEqual(2);
  // Each run once: 14 runs, each final, none left queued or running.
  const list = await call(s, "GET", "/api/v1/orgs/acme/runs/?page_size=200", { token: s.rootToken });
  expect(list.json.count).toBe(2 * CONFIGS);
  expect(pool.stats()).toMatchObject({ busy: 0, pipelined: 0, queued: 0 });
});
