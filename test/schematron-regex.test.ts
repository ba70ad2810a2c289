// Hole 5 of issue #19, a variant found against the built binary: Schematron's tokenize() and
// replace() ran on JavaScript's backtracking RegExp (fontoxpath's own implementations). On
// `(a+)+b|!` over "a"*40 + "!" the engine gave up after about a second and answered "no match",
// so `count(tokenize(., '(a+)+b|!')) = 1` and `replace(., '(a+)+b|!', '') = .` passed a document
// holding "!". Now both run on RE2 with the pattern's true answer; what RE2 cannot run, and the
// ways around the names (Q{…} names, function-lookup), are refused at save or are an error.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const EVIL = `<a>${"a".repeat(40)}!</a>`;
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
});
afterAll(() => s.close());

const schema = (test: string) =>
  `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="/a"><sch:assert test="${test}">bad</sch:assert></sch:rule></sch:pattern></sch:schema>`;

let n = 0;
async function runWith(test: string, doc = EVIL) {
  const slug = `sch-${++n}`;
  await createWorkflow(s, s.rootToken, {
    slug,
    allowed_file_types: ["XML"],
    steps: [{ name: "sch", validator: "schematron", config: { schema: schema(test) } }],
  });
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: doc,
    headers: { "content-type": "application/xml", prefer: "wait=30" },
  });
  expect(r.status).toBe(201);
  return r.json;
}

const codes = (run: { steps: Array<{ findings: Array<{ code: string }> }> }) =>
  run.steps[0].findings.map((f) => f.code);

describe("tokenize() and replace() get the pattern's true answer", () => {
  test.each([
    ["count(tokenize(., '(a+)+b|!')) = 1"],
    ["fn:count(fn:tokenize(., '(a|a)*b|!')) = 1"],
    ["replace(., '(a+)+b|!', '') = ."],
    ["fn:replace(., '(a|a)*b|!', '', 'i') = ."],
  ])("%s: the document holding '!' fails (was: succeeded)", async (test) => {
    const run = await runWith(test);
    expect(run.status).toBe("failed");
    expect(codes(run)).toEqual(["schematron.failed_assert"]);
  });

  test.each([
    ["string-join(tokenize('a1b22c', '[0-9]+'), ',') = 'a,b,c'"],
    ["empty(tokenize('', ','))"],
    ["count(tokenize('a,b,', ',')) = 3"],
    [`replace('2026-11-24', '(\\d+)-(\\d+)-(\\d+)', '$3.$2.$1') = '24.11.2026'`],
    [`replace('a$b', '\\$', '[\\$]') = 'a[$]b'`],
    ["replace('abc', 'B', 'x', 'i') = 'axc'"],
  ])("%s: XPath's meaning", async (test) => {
    const run = await runWith(test, "<a/>");
    expect([run.status, codes(run)]).toEqual(["succeeded", []]);
  });

  // Computed patterns: a literal one that can never run is refused at save (below).
  test.each([
    ["count(tokenize(., concat('(a)', '\\1'))) = 1", "FORX0002"],
    ["count(tokenize(., concat('x', '?'))) = 1", "FORX0003"],
    ["replace(., 'a', concat('$', '')) = .", "FORX0004"],
    // Checked before any match: an input the pattern does not match does not hide it.
    ["replace(., 'no match here', concat('\\', 'x')) = .", "FORX0004"],
    ["replace(., 'a', 'b', string('q')) = .", "FORX0001"],
  ])("%s: an evaluation error, never a pass", async (test, code) => {
    const run = await runWith(test);
    expect(run.status).toBe("failed");
    expect(run.steps[0].findings).toEqual([
      expect.objectContaining({
        code: "schematron.evaluation_error",
        message: expect.stringContaining(code),
      }),
    ]);
  });
});

describe("the ways around the names are refused at save", () => {
  test.each([
    [
      "count(Q{http://www.w3.org/2005/xpath-functions}tokenize(., '!')) = 1",
      "calls Q{http://www.w3.org/2005/xpath-functions}tokenize, which Assay runs only as tokenize() or fn:tokenize()",
    ],
    [
      "count(function-lookup(xs:QName('fn:tokenize'), 2)(., '!')) = 1",
      "calls function-lookup(), which Assay does not allow: name the function in the expression",
    ],
  ])("%s", async (test, why) => {
    const before = await s.count("workflows");
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug: "around",
        name: "around",
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
          message: `line 1: the assert test "${test}" ${why}`,
        },
      ]),
    );
    expect(await s.count("workflows")).toBe(before);
  });

  test.each([
    [
      "count(tokenize(., '(a)\\1')) = 1",
      'calls tokenize() with a pattern that can never run (FORX0002: the pattern "(a)\\\\1" is not supported (patterns run on a linear-time engine, docs/validators.md): backreferences (\\1, \\k<name>) are not supported: they cannot run in linear time)',
    ],
    [
      "matches(., '[a-')",
      'calls matches() with a pattern that can never run (FORX0002: Error parsing pattern "[a-" at offset 3: expected one of "]", "-[", "-", "-", "\\", "any character" but found "")',
    ],
  ])("a literal pattern that can never run is refused at save: %s", async (test, why) => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug: "never",
        name: "never",
        allowed_file_types: ["XML"],
        steps: [{ name: "sch", validator: "schematron", config: { schema: schema(test) } }],
      },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      {
        field: "steps[0].config.schema",
        code: "invalid_expression",
        message: `line 1: the assert test "${test}" ${why}`,
      },
    ]);
  });

  test("a named reference tokenize#2 resolves to ours", async () => {
    const run = await runWith("count(tokenize#2(., '(a+)+b|!')) = 1");
    expect(codes(run)).toEqual(["schematron.failed_assert"]);
  });
});

// Pentest 2026-11-30: a pattern computed when the step ran was compiled without the cost check
// literal ones got at save; `matches(., concat('((a{1000}){1000})', '{1000}'))` (a billion
// automaton positions) took the server to 6.4 GB in 20 s, stopped only by ASSAY_MEMORY_LIMIT_MB.
// Every pattern is now checked before it is compiled (src/validators/shared/regex-cost.ts).
describe("a computed pattern past the cost bound is an evaluation error, not compiled", () => {
  const expand = (p: string) =>
    `FORX0002: the pattern ${JSON.stringify(p.length > 60 ? `${p.slice(0, 60)}…` : p)} would expand to more than 20000 positions (its counted repetitions, multiplied where nested): it is not compiled`;
  test.each([
    ["matches(., concat('((a{1000}){1000})', '{1000}'))", "((a{1000}){1000}){1000}"],
    // 40,000 positions: compiled before (~0.1 s), and the assert passed.
    ["not(matches(., concat('(a{200})', '{200}')))", "(a{200}){200}"],
    ["count(tokenize(., string-join(for $i in 1 to 30 return 'a{1000}', ''))) = 1", "a{1000}".repeat(30)],
  ])("%s (was: compiled)", async (test, pattern) => {
    const run = await runWith(test);
    expect(run.status).toBe("failed");
    expect(run.steps[0].findings).toEqual([
      {
        severity: "error",
        code: "schematron.evaluation_error",
        message: `the assert could not be evaluated: ${expand(pattern)}`,
        path: "/a",
        line: 1,
        column: 1,
        rule: test,
      },
    ]);
  });

  test("a computed pattern within it runs as before", async () => {
    const run = await runWith(
      "matches(., concat('^a{40}', '!$')) and count(tokenize(., concat('!', ''))) = 2",
    );
    expect([run.status, codes(run)]).toEqual(["succeeded", []]);
  });
});
