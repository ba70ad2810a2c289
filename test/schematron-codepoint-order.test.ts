// Schematron orders strings by code point (XPath F&O 3.1 §5.3.2, the Unicode codepoint
// collation) in `<`, `<=`, `>`, `>=`, `lt`, `le`, `gt`, `ge`, min(), max() and array:sort():
// fontoxpath compared UTF-16 code units, so '😀' (U+1F600) came before U+FFFD and U+FF04
// (src/validators/schematron/codepoint-order.ts), however min(), max() and array:sort() are
// reached (an arrow, `max(?)`, `max#1`), and whatever a schema binds `xs` to. Through the server: a workflow's asserts over a
// document, both backends.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
});
afterAll(() => s.close());

// @a: U+1F600 (an emoji, outside the BMP); @b: U+FFFD; @c: U+FF04; @n: untyped "10".
const DOC = `<r a="😀" b="&#xFFFD;" c="&#xFF04;" n="10"><v>😀</v><v>&#xFFFD;</v></r>`;

let n = 0;
/**
 * The asserts among `tests` that fail on DOC (each is written to hold), with their findings.
 * `ns`: the schema's `sch:ns` declarations.
 */
async function failing(tests: string[], ns = "") {
  const asserts = tests
    .map((t, i) => `<sch:assert id="t${i}" test="${t.replaceAll("<", "&lt;")}">t${i}</sch:assert>`)
    .join("");
  const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">${ns}<sch:pattern><sch:rule context="/r">${asserts}</sch:rule></sch:pattern></sch:schema>`;
  const slug = `order-${++n}`;
  await createWorkflow(s, s.rootToken, {
    slug,
    allowed_file_types: ["XML"],
    steps: [{ name: "sch", validator: "schematron", config: { schema } }],
  });
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: DOC,
    headers: { "content-type": "application/xml" },
  });
  expect(r.status).toBe(201);
  return (r.json.steps[0].findings as { code: string; message: string; rule: string }[]).map(
    (f) => `${f.rule}: ${f.code}: ${f.message}`,
  );
}

test("an astral character sorts after U+FFFD and U+FF04, in every operator, min(), max() and array:sort()", async () => {
  expect(
    await failing([
      "@a > @b",
      "@a >= @b",
      "@b < @a",
      "@b <= @a",
      "@a gt @b",
      "@a ge @c",
      "@c lt @a",
      "@b le @a",
      "not(@a < @b)",
      "'😀' > '&#xFFFD;'",
      "string(@a) gt string(@b)",
      "v > '&#xFFFD;'",
      "max(v/string()) = '😀'",
      "min(v/string()) = '&#xFFFD;'",
      "max((string(@b), '😀', string(@c))) = '😀'",
      "min((string(@a), string(@c))) = '&#xFF04;'",
      "count(v[. > '&#xFFFD;']) = 1",
      "(@a > @b) and ('a' < 'b')",
      "string-join(array:sort(array { v })?* ! string(), ',') = '&#xFFFD;,😀'",
      "array:sort(array { v })(2) is v[1]",
      // A number literal that is not a whole operand: these still order strings.
      "@b < '😀' || 0",
      "'😀' || 1 > @b",
    ]),
  ).toEqual([]);
});

test("comparisons among BMP strings, numbers, dates and untyped values answer as before", async () => {
  expect(
    await failing([
      "'b' > 'a'",
      "'&#xFF04;' > 'z'",
      "@b > @c",
      "not('a' > 'a')",
      "'a' le 'a'",
      "@n > 9",
      "not(@n > '9')",
      "@n lt '9'",
      "max((1, 3, 2)) = 3",
      "min(@n) = 10",
      "max(('b', 'a')) = 'b'",
      "deep-equal(array:sort([3, 1, 2]), [1, 2, 3])",
      "deep-equal(array:sort(['b', 'a', '&#xFF04;']), ['a', 'b', '&#xFF04;'])",
      "xs:date('2020-01-01') lt xs:date('2021-01-01')",
      "empty(() lt 'a')",
      "not(() > 'a')",
    ]),
  ).toEqual([]);
});

test("a comparison of a string with a number is still the engine's error", async () => {
  expect(await failing(["'a' < 1", "'a' lt 1", "(1, 2) gt 1"])).toEqual([
    "'a' < 1: schematron.evaluation_error: the assert t0 could not be evaluated: XPTY0004: ltOp not available for xs:string and xs:integer",
    "'a' lt 1: schematron.evaluation_error: the assert t1 could not be evaluated: XPTY0004: ltOp not available for xs:string and xs:integer",
    "(1, 2) gt 1: schematron.evaluation_error: the assert t2 could not be evaluated: XPTY0004: Sequences to compare are not singleton.",
  ]);
});

test("min(), max() and array:sort() through an arrow, a partial application or a function reference order by code point", async () => {
  expect(
    await failing([
      "(v/string() => max()) = '😀'",
      "(v/string() => fn:min()) = '&#xFFFD;'",
      "(v/string() => Q{http://www.w3.org/2005/xpath-functions}max()) = '😀'",
      "(v/string() => max() => string-length()) = 1",
      "max(?)(v/string()) = '😀'",
      "max#1(v/string()) = '😀'",
      "fn:min#1(v/string()) = '&#xFFFD;'",
      "Q{http://www.w3.org/2005/xpath-functions}max#1(v/string()) = '😀'",
      "let $f := max#1 return $f(v/string()) = '😀'",
      "string-join(for-each(([string(@a), string(@b)], [string(@b), string(@c)]), max#1), ',') = '😀,&#xFFFD;'",
      "string-join((array { v } => array:sort())?* ! string(), ',') = '&#xFFFD;,😀'",
      "array:sort#1(array { v })(1) is v[2]",
      "string-join(array:sort(?)([string(@a), string(@c)])?*, ',') = '&#xFF04;,😀'",
    ]),
  ).toEqual([]);
});

test("through those forms, numbers, dates and untyped values answer as before, and so do errors", async () => {
  expect(
    await failing([
      "((1, 3, 2) => max()) = 3",
      "max#1((1, 3, 2)) = 3",
      "min#1(@n) = 10",
      "(@n => max()) instance of xs:double",
      "max(?)((xs:date('2020-01-01'), xs:date('2021-01-01'))) = xs:date('2021-01-01')",
      "deep-equal(array:sort#1([3, 1, 2]), [1, 2, 3])",
      "deep-equal(max(?)((1, 3, 2)), 3)",
      // An array argument is atomized, as XPath says (fontoxpath's own max returned the array).
      "deep-equal(for-each(([1, 5], [4, 2]), max#1), (5, 4))",
      "function-arity(max#1) = 1",
      "empty(max#1(()))",
      "max#1(('b', 'a')) = 'b'",
      "max#1(('a', 1))",
      "array:sort#1(1)",
    ]),
  ).toEqual([
    "max#1(('a', 1)): schematron.evaluation_error: the assert t11 could not be evaluated: FORG0006: Incompatible types to be converted to a common type",
    // The one change: `array:sort#1` is now an inline function of the same signature, which
    // fontoxpath names so (the call `array:sort(1)` still says "while calling sort").
    "array:sort#1(1): schematron.evaluation_error: the assert t12 could not be evaluated: XPTY0004 Unable to cast argument of type xs:integer to type array(*) while calling dynamic-function",
  ]);
});

test("a schema that binds the prefix xs to another namespace still orders by code point", async () => {
  const ns = `<sch:ns prefix="xs" uri="urn:example:not-schema"/>`;
  expect(
    await failing(
      [
        "@a > @b",
        "@a gt @b",
        "max(v/string()) = '😀'",
        "max#1(v/string()) = '😀'",
        "string-join(array:sort(array { v })?* ! string(), ',') = '&#xFFFD;,😀'",
        "@n > 9",
        "max((1, 2)) = 2",
      ],
      ns,
    ),
  ).toEqual([]);
});

test("compare() is by code point, and distinct-values() keeps both strings", async () => {
  // Already Assay's compare() (codepoint-functions.ts); distinct-values() is equality, which
  // UTF-16 answers as code points do.
  expect(
    await failing([
      "compare(@a, @b) = 1",
      "compare#2(@a, @c) = 1",
      "count(distinct-values((string(@a), string(@b), string(@a)))) = 2",
    ]),
  ).toEqual([]);
});

// An arrow names its function too: the save check read only calls and references, so these
// reached function-lookup() and fontoxpath's own compare() and (backtracking) tokenize().
test.each([
  [
    "(xs:QName('fn:max') => function-lookup(1))(v/string()) = '😀'",
    "calls function-lookup(), which Assay does not allow: name the function in the expression",
  ],
  [
    "(@a => Q{http://www.w3.org/2005/xpath-functions}compare(@b)) = 1",
    "calls Q{http://www.w3.org/2005/xpath-functions}compare, which Assay runs only as compare() or fn:compare()",
  ],
  [
    "count(. => Q{http://www.w3.org/2005/xpath-functions}tokenize('!')) = 1",
    "calls Q{http://www.w3.org/2005/xpath-functions}tokenize, which Assay runs only as tokenize() or fn:tokenize()",
  ],
  // As the call `nope:max(@a)` is: both problems.
  [
    "(@a => nope:max()) = 1",
    "calls nope:max#1, which is not an available function",
    'uses the prefix "nope", which no sch:ns declares',
  ],
  ["(@a => no-such-function()) = 1", "calls no-such-function#1, which is not an available function"],
])("an arrow to %s is refused at save as the call is", async (test, ...whys) => {
  const before = await s.count("workflows");
  const slug = `arrow-${++n}`;
  const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="/r"><sch:assert test="${test}">x</sch:assert></sch:rule></sch:pattern></sch:schema>`;
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug,
      name: slug,
      allowed_file_types: ["XML"],
      steps: [{ name: "sch", validator: "schematron", config: { schema } }],
    },
  });
  expect(r.status).toBe(400);
  expect(r.json).toEqual(
    errorBody(
      400,
      "invalid_request",
      "The workflow definition is invalid.",
      whys.map((why) => ({
        field: "steps[0].config.schema",
        code: "invalid_expression",
        message: `line 1: the assert test "${test}" ${why}`,
      })),
    ),
  );
  expect(await s.count("workflows")).toBe(before);
});
