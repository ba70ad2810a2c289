// Schematron orders strings by code point (XPath F&O 3.1 §5.3.2, the Unicode codepoint
// collation) in `<`, `<=`, `>`, `>=`, `lt`, `le`, `gt`, `ge`, min(), max() and array:sort():
// fontoxpath compared UTF-16 code units, so '😀' (U+1F600) came before U+FFFD and U+FF04
// (src/validators/schematron/codepoint-order.ts). Through the server: a workflow's asserts over a
// document, both backends.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
});
afterAll(() => s.close());

// @a: U+1F600 (an emoji, outside the BMP); @b: U+FFFD; @c: U+FF04; @n: untyped "10".
const DOC = `<r a="😀" b="&#xFFFD;" c="&#xFF04;" n="10"><v>😀</v><v>&#xFFFD;</v></r>`;

let n = 0;
/** The asserts among `tests` that fail on DOC (each is written to hold), with their findings. */
async function failing(tests: string[]) {
  const asserts = tests
    .map((t, i) => `<sch:assert id="t${i}" test="${t.replaceAll("<", "&lt;")}">t${i}</sch:assert>`)
    .join("");
  const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="/r">${asserts}</sch:rule></sch:pattern></sch:schema>`;
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
