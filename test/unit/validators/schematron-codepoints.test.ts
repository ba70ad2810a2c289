// Schematron's string-to-codepoints() and compare() count code points, as XPath 3.1 says
// (fn:string-to-codepoints; the Unicode codepoint collation). fontoxpath's gave UTF-16 code
// units: string-to-codepoints('😀') was (55357, 56832), which codepoints-to-string() then refused
// (FOCH0001), and compare('😀', '＄') was -1 though U+1F600 comes after U+FF04.
import { beforeAll, expect, test } from "bun:test";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const failing = (tests: string[], xml: string) => {
  const asserts = tests.map((t, i) => `<sch:assert id="t${i}" test="${t}">${i}</sch:assert>`).join("");
  const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="v">${asserts}</sch:rule></sch:pattern></sch:schema>`;
  return run("schematron", { schema }, xml, "XML").findings.map(
    (f) => `${tests[Number(f.message)]}: ${f.code}`,
  );
};

test("string-to-codepoints(): one number per character, emoji included", () => {
  expect(
    failing(
      [
        "deep-equal(string-to-codepoints(.), (128512, 233, 98))",
        "count(string-to-codepoints(.)) = string-length(.)",
        "codepoints-to-string(string-to-codepoints(.)) = .",
        "empty(string-to-codepoints(()))",
        "empty(string-to-codepoints(''))",
      ],
      "<r><v>😀éb</v></r>",
    ),
  ).toEqual([]);
});

test("compare(): by code point, so an emoji comes after U+FF04", () => {
  expect(
    failing(
      [
        "compare(., '&#xFF04;') = 1",
        "compare('&#xFF04;', .) = -1",
        "compare(., .) = 0",
        "compare('a', 'b') = -1",
        "empty(compare((), 'a'))",
        "compare(., '&#xFF04;', 'http://www.w3.org/2005/xpath-functions/collation/codepoint') = 1",
      ],
      "<r><v>😀</v></r>",
    ),
  ).toEqual([]);
});

test("Q{…}string-to-codepoints(), which would reach fontoxpath's own, is refused at save as Q{…}tokenize() is", () => {
  const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="v"><sch:assert test="Q{http://www.w3.org/2005/xpath-functions}string-to-codepoints(.) = 1">x</sch:assert></sch:rule></sch:pattern></sch:schema>`;
  expect(checkStepConfig("schematron", { schema })).toEqual([
    {
      field: "schema",
      code: "invalid_expression",
      message: expect.stringContaining(
        "calls Q{http://www.w3.org/2005/xpath-functions}string-to-codepoints, which Assay runs only as string-to-codepoints() or fn:string-to-codepoints()",
      ),
    },
  ]);
});
