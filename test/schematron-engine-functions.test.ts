// Found by the pentest of 2026-11-30: fontoxpath's own functions (namespace
// http://fontoxml.com/fontoxpath) passed the save-time check. `evaluate#2` runs a string as XPath
// when the step runs, where no check reads it, so it reopened hole 5 of issue #19: fontoxpath's
// backtracking tokenize() (its Q{…} name, refused when written directly) gave up on `(a+)+b|!`
// over "a"*40 + "!" and answered "no match", and the run SUCCEEDED on a document holding "!".
// Every function of that namespace is now refused at save, however it is named. A step saved
// before keeps its config (a save re-checks only the steps it changes), so the same calls are
// refused again when a step is compiled to run (src/validators/schematron/engine-guard.ts): the
// expression is not evaluated and ends as an evaluation error naming the call, never a pass.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, restartTestServer, startTestServer } from "./helpers/server.ts";

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

// What an older build saved: the schema's PLACEHOLDER text replaced in the database with a rule
// the save-time check now refuses (the API would not take it).
const PLACEHOLDER = "placeholder-test";
const savedBefore = (rule: string) =>
  `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:ns prefix="f" uri="${FX}"/><sch:pattern><sch:rule context="/a">${rule}</sch:rule></sch:pattern></sch:schema>`;
const REFUSED = "; refused when the step runs as at save, it was not evaluated";
const ENGINE =
  ", a function of the XPath engine itself, which Assay does not allow (evaluate() would run a string as XPath that no check reads)";
const EVIL = `<a>${"a".repeat(40)}!</a>`;

describe("a step saved before the check: the calls are refused when it runs", () => {
  // [slug, rule as saved (the test replaced), the test, the finding's message]
  const cases: Array<[string, string, string]> = [
    [
      "prefixed",
      `f:evaluate('${INNER}', map{'.': .})`,
      `the assert could not be evaluated: the expression calls f:evaluate#2${ENGINE}${REFUSED}`,
    ],
    [
      "braced",
      `Q{${FX}}evaluate('${INNER}', map{'.': .})`,
      `the assert could not be evaluated: the expression calls Q{${FX}}evaluate#2${ENGINE}${REFUSED}`,
    ],
    [
      "lookup",
      `function-lookup(QName(concat('http://fontoxml.com/', 'fontoxpath'), 'evaluate'), 2)('${INNER}', map{'.': .})`,
      `the assert could not be evaluated: the expression calls function-lookup(), which Assay does not allow: name the function in the expression${REFUSED}`,
    ],
    [
      "version",
      "f:version() = '0' or true()",
      `the assert could not be evaluated: the expression calls f:version#0${ENGINE}${REFUSED}`,
    ],
  ];

  beforeAll(async () => {
    for (const [slug] of cases)
      await createWorkflow(s, s.rootToken, {
        slug,
        allowed_file_types: ["XML"],
        steps: [
          {
            name: "sch",
            validator: "schematron",
            config: { schema: savedBefore(`<sch:assert test="${PLACEHOLDER}-${slug}">bad</sch:assert>`) },
          },
        ],
      });
    for (const [slug, schema] of [
      ["let", `<sch:let name="v" value="${PLACEHOLDER}-let"/><sch:pattern><sch:rule context="/a">`],
      ["context", `<sch:pattern><sch:rule context="${PLACEHOLDER}-context">`],
    ])
      await createWorkflow(s, s.rootToken, {
        slug,
        allowed_file_types: ["XML"],
        steps: [
          {
            name: "sch",
            validator: "schematron",
            config: {
              schema: `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:ns prefix="f" uri="${FX}"/>${schema}<sch:assert test="false()">bad</sch:assert></sch:rule></sch:pattern></sch:schema>`,
            },
          },
        ],
      });
    const replacements: Array<[string, string]> = [
      ...cases.map(([slug, test]): [string, string] => [`${PLACEHOLDER}-${slug}`, test]),
      [`${PLACEHOLDER}-let`, "f:version()"],
      [`${PLACEHOLDER}-context`, "/a[f:version()]"],
    ];
    for (const [from, to] of replacements)
      for (const [table, column] of [
        ["steps", "config"],
        ["step_configs", "config"],
        ["workflow_versions", "definition"],
      ])
        await s.sql(`UPDATE ${table} SET ${column} = replace(${column}, ?, ?)`, from, to);
    // Nothing of the saved versions is cached: read from the database as after an upgrade.
    s = await restartTestServer(s);
  });

  const runOf = async (slug: string) => {
    const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
      token: s.rootToken,
      raw: EVIL,
      headers: { "content-type": "application/xml", prefer: "wait=30" },
    });
    expect(r.status).toBe(201);
    return r.json;
  };

  test.each(cases)(
    "%s: the assert is an evaluation error naming the call (was: succeeded)",
    async (slug, test, message) => {
      const stored = await call(s, "GET", `/api/v1/orgs/acme/workflows/${slug}/`, { token: s.rootToken });
      expect(stored.json.steps[0].config.schema).toBe(
        savedBefore(`<sch:assert test="${test}">bad</sch:assert>`),
      );
      const run = await runOf(slug);
      expect(run.status).toBe("failed");
      expect(run.steps[0].status).toBe("failed");
      expect(run.steps[0].findings).toEqual([
        {
          severity: "error",
          code: "schematron.evaluation_error",
          message,
          path: "/a",
          line: 1,
          column: 1,
          rule: unescaped(test),
        },
      ]);
    },
  );

  test.each([
    ["let", `the let "v" could not be evaluated`, "f:version()"],
    ["context", "the rule context could not be evaluated", "/a[f:version()]"],
  ])("a %s: an evaluation error naming the call (was: ran it)", async (slug, what, rule) => {
    const run = await runOf(slug);
    expect(run.status).toBe("failed");
    expect(run.steps[0].findings).toEqual([
      {
        severity: "error",
        code: "schematron.evaluation_error",
        message: `${what}: the expression calls f:version#0${ENGINE}${REFUSED}`,
        path: null,
        line: null,
        column: null,
        rule,
      },
    ]);
  });
});
