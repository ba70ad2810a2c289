// A Schematron step reads at most 10,000 attributes on one element (docs/limits.md): its tree
// builder adds each in time linear in those already there. Namespace declarations are attributes
// to it too, but the bound counted `@*`, which leaves them out: a start tag of 100,000
// `xmlns:pN` declarations (2.4 MB) held a worker past the step's time limit (2026-11-29). They
// count together now.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug: "sch",
      name: "sch",
      allowed_file_types: ["XML"],
      steps: [{ name: "rules", validator: "schematron", config: { schema, timeout_ms: 100_000 } }],
    },
  });
  expect(r.status).toBe(201);
});
afterAll(() => s.close());

const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron"><sch:pattern><sch:rule context="item"><sch:assert id="A" test="@a0 = '1'">a0 is 1</sch:assert></sch:rule></sch:pattern></sch:schema>`;

const list = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** `<item>` on line 2 with `a0`, `attributes - 1` more attributes and `declarations` namespaces. */
const doc = (attributes: number, declarations: number) =>
  `<list>\n<item a0="2" ${list(attributes - 1, "b")
    .map((a) => `${a}="x"`)
    .join(" ")} ${list(declarations, "p")
    .map((p) => `xmlns:${p}="urn:${p}"`)
    .join(" ")}/>\n</list>`;

async function run(text: string) {
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/sch/runs/", {
    token: s.rootToken,
    raw: text,
    headers: { "content-type": "application/xml", prefer: "respond-async" },
  });
  expect(r.status).toBe(202);
  const done = await waitForRun(s, s.rootToken, r.headers.get("location") ?? "", 110_000);
  const { status, error, findings } = done.steps[0];
  return { run: done.status, step: status, error: error ?? null, findings };
}

const tooMany = {
  run: "failed",
  step: "failed",
  error: null,
  findings: [
    {
      severity: "error",
      code: "xml.too_many_attributes",
      message: "the element <item> has more than 10000 attributes: the document was not checked",
      path: null,
      line: 2,
      column: null,
      rule: null,
    },
  ],
};

test("100,000 namespace declarations on one element: one error at it, nothing checked", async () => {
  expect(await run(doc(1, 100_000))).toEqual(tooMany);
}, 120_000);

test("9,000 attributes and 1,001 namespace declarations are over the bound together", async () => {
  expect(await run(doc(9_000, 1_001))).toEqual(tooMany);
}, 120_000);

test("9,000 attributes and 1,000 namespace declarations are read and checked", async () => {
  const r = await run(doc(9_000, 1_000));
  expect(r).toMatchObject({ run: "failed", step: "failed", error: null });
  expect(r.findings.map((f: Record<string, unknown>) => [f.code, f.line])).toEqual([["schematron.A", 2]]);
}, 120_000);

test("namespace declarations that a comment or CDATA section only mentions are not counted", async () => {
  const mention = list(20_000, "p")
    .map((p) => `xmlns:${p}="u"`)
    .join(" ");
  const text = `<list><!-- <item ${mention}> --><item a0="1"><![CDATA[<item ${mention}>]]></item></list>`;
  expect(await run(text)).toEqual({ run: "succeeded", step: "passed", error: null, findings: [] });
}, 120_000);
