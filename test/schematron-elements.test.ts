// A Schematron step reads at most ASSAY_MAX_SCHEMATRON_ELEMENTS elements (docs/limits.md): its
// document model holds ~3.3 KB a element, and a 9 MB document of 10^6 elements passed 4 GB before
// the server's memory limit stopped a step — the longest-running one, maybe another org's. The
// bound is set low here (the setting goes to the workers' environment, src/deps.ts): a document
// at it is checked, one over it fails with one finding and is not read further.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { moreStartTagsThan } from "../src/validators/schematron/element-limit.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron"><sch:pattern><sch:rule context="item"><sch:assert id="POS" test="@n > 0">n is positive</sch:assert></sch:rule></sch:pattern></sch:schema>`;

beforeAll(async () => {
  s = await startTestServer({ max_schematron_elements: 10 });
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug: "sch",
      name: "sch",
      allowed_file_types: ["XML"],
      steps: [
        { name: "well-formed", validator: "syntax", config: {} },
        { name: "rules", validator: "schematron", config: { schema } },
      ],
      fail_fast: false,
    },
  });
  expect(r.status).toBe(201);
});
afterAll(() => s.close());

/** `<list>` and `items` `<item>`s (so `items + 1` elements), the last with n="0". */
const doc = (items: number) =>
  `<list>\n<!-- a comment -->${Array.from({ length: items }, (_, i) => `<item n="${i === items - 1 ? 0 : 1}"/>`).join("\n")}\n</list>`;

async function run(text: string) {
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/sch/runs/", {
    token: s.rootToken,
    raw: text,
    headers: { "content-type": "application/xml" },
  });
  expect(r.status).toBe(201);
  return r.json;
}

test("a document of as many elements as the bound is checked", async () => {
  const r = await run(doc(9));
  expect(r.status).toBe("failed");
  expect(r.steps.map((x: { status: string }) => x.status)).toEqual(["passed", "failed"]);
  expect(r.steps[1].findings.map((f: { code: string; line: number }) => [f.code, f.line])).toEqual([
    ["schematron.POS", 10],
  ]);
});

test("one element more: one finding, the document not read", async () => {
  const r = await run(doc(10));
  expect(r.steps.map((x: { status: string }) => x.status)).toEqual(["passed", "failed"]);
  expect(r.steps[1].findings).toEqual([
    {
      severity: "error",
      code: "xml.too_many_elements",
      message:
        "the document has more than 10 elements, the most a Schematron step reads (ASSAY_MAX_SCHEMATRON_ELEMENTS): it was not checked",
      path: null,
      line: 1,
      column: 1,
      rule: null,
    },
  ]);
});

test("start tags are counted in one scan: end tags, comments, declarations and PIs are not", () => {
  const text = '<?xml version="1.0"?><!DOCTYPE a><a><!-- c --><b/><![CDATA[x]]><?pi?></a>';
  expect(moreStartTagsThan(text, 2)).toBe(false);
  expect(moreStartTagsThan(text, 1)).toBe(true);
  expect(moreStartTagsThan("", 0)).toBe(false);
  expect(moreStartTagsThan("<a", 0)).toBe(true);
  expect(moreStartTagsThan("a <", 0)).toBe(false);
});

/** A DOCTYPE whose entity `e` holds `n` `<item n="1"/>`s. */
const withEntity = (n: number, body: string) =>
  `<?xml version="1.0"?>\n<!DOCTYPE list [<!ENTITY e '${'<item n="1"/>'.repeat(n)}'>]>\n<list>${body}</list>`;

test("elements an entity holds count where they are used, not where the DOCTYPE declares them", async () => {
  // 1 + 3 × 3 elements = the bound: checked (it used to count the declaration's 3 as well: 13).
  const at = await run(withEntity(3, "&e;&e;&e;"));
  expect(at.steps.map((x: { status: string }) => x.status)).toEqual(["passed", "passed"]);
  // The declaration of an entity nobody uses holds no elements at all.
  const unused = await run(withEntity(9, '<item n="1"/><item n="0"/>'));
  expect(unused.steps.map((x: { status: string }) => x.status)).toEqual(["passed", "failed"]);
  expect(unused.steps[1].findings.map((f: { code: string }) => f.code)).toEqual(["schematron.POS"]);
  // One element more, by a fourth reference or one written out: refused.
  for (const body of ["&e;&e;&e;&e;", '&e;&e;&e;<item n="1"/>']) {
    const over = await run(withEntity(3, body));
    expect(over.steps[1].findings.map((f: { code: string }) => f.code)).toEqual(["xml.too_many_elements"]);
  }
});

test("a DOCTYPE's declarations are not counted; comments after it are", () => {
  const dtd = `<!DOCTYPE a [<!ENTITY e '<b/><b/><b/>'><!-- <c> --><?pi <d>?>]>`;
  expect(moreStartTagsThan(`<?xml version="1.0"?>\n<!-- <x> -->\n${dtd}<a>&e;</a>`, 1)).toBe(false);
  expect(moreStartTagsThan(`${dtd}<a><!-- <c> --></a>`, 1)).toBe(true);
});
