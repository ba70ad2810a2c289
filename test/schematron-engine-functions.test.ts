// Found by the pentest of 2026-11-30: fontoxpath's own functions (namespace
// http://fontoxml.com/fontoxpath) passed the save-time check. `evaluate#2` runs a string as XPath
// when the step runs, where no check reads it, so it reopened hole 5 of issue #19: fontoxpath's
// backtracking tokenize() (its Q{…} name, refused when written directly) gave up on `(a+)+b|!`
// over "a"*40 + "!" and answered "no match", and the run SUCCEEDED on a document holding "!".
// Every function of that namespace is now refused at save, however it is named.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
});
afterAll(() => s.close());

const FX = "http://fontoxml.com/fontoxpath";
const INNER = "count(Q{http://www.w3.org/2005/xpath-functions}tokenize(., &quot;(a+)+b|!&quot;)) = 1";

const schema = (test: string) =>
  `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:ns prefix="f" uri="${FX}"/><sch:pattern><sch:rule context="/a"><sch:assert test="${test}">bad</sch:assert></sch:rule></sch:pattern></sch:schema>`;

// The message quotes the test as the XML attribute reads (entities replaced).
const unescaped = (test: string) => test.replaceAll("&quot;", '"');

describe("fontoxpath's own functions are refused at save", () => {
  test.each([
    [`f:evaluate('${INNER}', map{'.': .})`, "f:evaluate#2"],
    [`Q{${FX}}evaluate('${INNER}', map{'.': .})`, `Q{${FX}}evaluate#2`],
    [`f:evaluate#2('${INNER}', map{'.': .})`, "f:evaluate#2"],
    [`'${INNER}' => f:evaluate(map{'.': .})`, "f:evaluate#2"],
    ["f:version() = '0'", "f:version#0"],
  ])("%s", async (test, named) => {
    const before = await s.count("workflows");
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug: "engine",
        name: "engine",
        allowed_file_types: ["XML"],
        steps: [{ name: "sch", validator: "schematron", config: { schema: schema(test) } }],
      },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "invalid_expression",
          message: `line 1: the assert test "${unescaped(test)}" calls ${named}, a function of the XPath engine itself, which Assay does not allow (evaluate() would run a string as XPath that no check reads)`,
        },
      ]),
    );
    expect(await s.count("workflows")).toBe(before);
  });

  test("the rule written without it gets the true answer: the run fails on the '!'", async () => {
    const plain = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="/a"><sch:assert test="count(tokenize(., '(a+)+b|!')) = 1">bad</sch:assert></sch:rule></sch:pattern></sch:schema>`;
    const saved = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug: "plain",
        name: "plain",
        allowed_file_types: ["XML"],
        steps: [{ name: "sch", validator: "schematron", config: { schema: plain } }],
      },
    });
    expect(saved.status).toBe(201);
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/plain/runs/", {
      token: s.rootToken,
      raw: `<a>${"a".repeat(40)}!</a>`,
      headers: { "content-type": "application/xml", prefer: "wait=30" },
    });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("failed");
    expect(r.json.steps[0].findings.map((f: { code: string }) => f.code)).toEqual([
      "schematron.failed_assert",
    ]);
  });
});
