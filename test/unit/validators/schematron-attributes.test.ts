// A Schematron step reads at most MAX_SCHEMATRON_ATTRIBUTES attributes on one element: its tree
// builder (slimdom) adds each attribute in time linear in those already there, so 80,000 on one
// element took 30 s of the step's limit. libxml2 finds the element first, in milliseconds.
import { beforeAll, describe, expect, test } from "bun:test";
import { MAX_SCHEMATRON_ATTRIBUTES } from "../../../src/validators/limits.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const schema = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron"><sch:pattern><sch:rule context="item"><sch:assert id="A" test="@a0 = '1'">a0 is 1</sch:assert></sch:rule></sch:pattern></sch:schema>`;
const doc = (attributes: number, a0: string) =>
  `<list>\n<item a0="${a0}" ${Array.from({ length: attributes - 1 }, (_, i) => `b${i}="x"`).join(" ")}/>\n</list>`;

describe("Schematron: attributes of one element", () => {
  test(`${MAX_SCHEMATRON_ATTRIBUTES} are read and checked`, () => {
    const r = run("schematron", { schema }, doc(MAX_SCHEMATRON_ATTRIBUTES, "2"), "XML");
    expect(r.findings.map((f) => [f.code, f.rule, f.line])).toEqual([["schematron.A", "@a0 = '1'", 2]]);
  });

  test("one more is a single error at the element, and nothing is checked", () => {
    const r = run("schematron", { schema }, doc(MAX_SCHEMATRON_ATTRIBUTES + 1, "2"), "XML");
    expect(r.findings).toEqual([
      {
        severity: "error",
        code: "xml.too_many_attributes",
        message: `the element <item> has more than ${MAX_SCHEMATRON_ATTRIBUTES} attributes: the document was not checked`,
        path: null,
        line: 2,
        column: null,
        rule: null,
      },
    ]);
  });
});
