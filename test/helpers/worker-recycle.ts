// What the worker-replacement tests share (schematron-worker-recycle: past the count of XPath
// expressions; worker-heap-recycle: past the heap): workflows of distinct Schematron configs, and
// runs of each, queued then sync, that must each end once with their own config's findings however
// often the worker under them was replaced.
import { expect } from "bun:test";
import { createWorkflow, waitForRun } from "./fixtures.ts";
import { type TestServer, call } from "./server.ts";

const runs = (i: number) => `/api/v1/orgs/acme/workflows/rules-${i}/runs/`;
const XML = { "content-type": "application/xml" };
const DOC = "<doc><a/></doc>";

/** Workflows `rules-0` … `rules-{n-1}`: config i asserts i children (and, with `report`, reports a name). */
export async function createRuleWorkflows(s: TestServer, n: number, report: boolean) {
  for (let i = 0; i < n; i++) {
    const reportRule = report
      ? `\n      <sch:report id="R${i}" test="name() = 'x${i}'">named x${i}</sch:report>`
      : "";
    const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">
  <sch:pattern>
    <sch:rule context="/*">
      <sch:assert id="A${i}" test="count(*) = ${i}">wants ${i} children</sch:assert>${reportRule}
    </sch:rule>
  </sch:pattern>
</sch:schema>`;
    await createWorkflow(s, s.rootToken, {
      slug: `rules-${i}`,
      allowed_file_types: ["XML"],
      steps: [{ name: "rules", validator: "schematron", config: { schema } }],
    });
  }
}

/** What run `i` must find on DOC: its assert fails unless it wants one child. */
function expected(i: number) {
  return i === 1 ? { status: "succeeded", codes: [] } : { status: "failed", codes: [`schematron.A${i}`] };
}

/**
 * A run of each config queued, all at once (handed over, taken back), then one of each sync, one
 * after another: each ends with its own config's findings.
 */
export async function runEachQueuedThenSync(s: TestServer, n: number) {
  const queued = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      call(s, "POST", runs(i), {
        token: s.rootToken,
        raw: DOC,
        headers: { ...XML, prefer: "respond-async" },
      }),
    ),
  );
  for (const r of queued) expect(r.status).toBe(202);
  const ended = await Promise.all(queued.map((r) => waitForRun(s, s.rootToken, r.json.url)));
  const sync = [];
  for (let i = 0; i < n; i++) {
    const r = await call(s, "POST", runs(i), {
      token: s.rootToken,
      raw: DOC,
      headers: { ...XML, prefer: "wait=60" },
    });
    expect(r.status).toBe(201);
    sync.push(r.json);
  }
  for (const [i, run] of [...ended, ...sync].entries()) {
    const k = i % n;
    const codes = run.steps[0].findings.map((f: { code: string }) => f.code);
    expect({ k, status: run.status, codes }).toEqual({ k, ...expected(k) });
  }
}

/** Each run once: 2n runs, each final, none left queued or running, the pool idle. */
export async function expectEachRunOnce(s: TestServer, n: number) {
  const list = await call(s, "GET", "/api/v1/orgs/acme/runs/?page_size=200", { token: s.rootToken });
  expect(list.json.count).toBe(2 * n);
  expect(s.deps.pool!.stats()).toMatchObject({ busy: 0, pipelined: 0, queued: 0 });
}
