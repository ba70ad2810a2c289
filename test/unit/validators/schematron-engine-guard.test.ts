// fontoxpath's own functions, function-lookup() and the Q{…} names of the functions Assay replaces
// are refused when a step is compiled to run (src/validators/schematron/engine-guard.ts), for a
// step saved before the save-time check: every way to name them. The configs are compiled as a
// worker compiles a stored one, without the save-time check (which refuses them all).
import { beforeAll, expect, test } from "bun:test";
import { getValidator } from "../../../src/validators/registry.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { input } from "./helpers.ts";

beforeAll(() => loadLibxml());

const FX = "http://fontoxml.com/fontoxpath";
const FN = "http://www.w3.org/2005/xpath-functions";
const ENGINE =
  "a function of the XPath engine itself, which Assay does not allow (evaluate() would run a string as XPath that no check reads)";
const REFUSED = "; refused when the step runs as at save, it was not evaluated";

const runStored = (test: string, ns = `<sch:ns prefix="f" uri="${FX}"/>`) => {
  const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">${ns}<sch:pattern><sch:rule context="/a"><sch:assert test="${test.replaceAll('"', "&quot;")}">bad</sch:assert></sch:rule></sch:pattern></sch:schema>`;
  return getValidator("schematron")!.compile({ schema })(input("<a>a</a>", "XML"), { maxFindings: 100 });
};

test.each([
  ["f:version() = '3.34.0'", `calls f:version#0, ${ENGINE}`],
  // A minus right before the prefix: `-` may be part of a name, but here it is an operator.
  ["0 -f:evaluate('1', map{}) = -1", `calls f:evaluate#2, ${ENGINE}`],
  [`Q{ ${FX} }version() = '3.34.0'`, `calls Q{${FX}}version#0, ${ENGINE}`],
  [`'1' => Q{${FX}}evaluate(map{})`, `calls Q{${FX}}evaluate#2, ${ENGINE}`],
  [`let $f := Q{${FX}}version#0 return $f() = '3.34.0'`, `calls Q{${FX}}version#0, ${ENGINE}`],
  [
    "fn:function-lookup(xs:QName('fn:true'), 0)()",
    "calls function-lookup(), which Assay does not allow: name the function in the expression",
  ],
  [`Q{${FN}}matches(., 'a')`, `calls Q{${FN}}matches, which Assay runs only as matches() or fn:matches()`],
  [
    `count(Q{${FN}}tokenize(., '(a+)+b|!')) = 1`,
    `calls Q{${FN}}tokenize, which Assay runs only as tokenize() or fn:tokenize()`,
  ],
])("%s is an evaluation error naming the call, not evaluated", (test, why) => {
  expect(runStored(test).findings).toEqual([
    {
      severity: "error",
      code: "schematron.evaluation_error",
      message: `the assert could not be evaluated: the expression ${why}${REFUSED}`,
      path: "/a",
      line: 1,
      column: 1,
      rule: test,
    },
  ]);
});

test("a prefix bound to the namespace with spaces around it is refused too", () => {
  expect(runStored("g:version() = '3.34.0'", `<sch:ns prefix="g" uri=" ${FX} "/>`).findings).toEqual([
    expect.objectContaining({
      code: "schematron.evaluation_error",
      message: `the assert could not be evaluated: the expression calls g:version#0, ${ENGINE}${REFUSED}`,
    }),
  ]);
});

test("a value-of that calls one shows the refusal; the assert's own test still decides", () => {
  const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:ns prefix="f" uri="${FX}"/><sch:pattern><sch:rule context="/a"><sch:assert test="false()">v=<sch:value-of select="f:version()"/></sch:assert></sch:rule></sch:pattern></sch:schema>`;
  const r = getValidator("schematron")!.compile({ schema })(input("<a>a</a>", "XML"), { maxFindings: 100 });
  expect(r.findings.map((f) => [f.code, f.message])).toEqual([
    ["schematron.failed_assert", `v=[the expression calls f:version#0, ${ENGINE}${REFUSED}]`],
  ]);
});

test("other Q{…} names and a schema binding the namespace without calling it run as before", () => {
  expect(runStored(`Q{${FN}}trace(false(), 'x')`).findings.map((f) => f.code)).toEqual([
    "schematron.failed_assert",
  ]);
  expect(runStored("true()").findings).toEqual([]);
});
