// Facets of one restriction that XML Schema 1.0 forbids and libxml2 accepted (src/validators/
// xml-schema/facets.ts): refused at save now. Cases from the W3C XML Schema test suite
// (msData/datatypes: string_minLength006, int_fractionDigits004/007 …; docs/conformance.md).
import { beforeAll, describe, expect, test } from "bun:test";
import { compileSchema, SchemaCompileError } from "../../../src/validators/xml-schema/compile.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { checkStepConfig } from "../../../src/validators/registry.ts";

beforeAll(() => loadLibxml());

const XS = 'xmlns:xsd="http://www.w3.org/2001/XMLSchema"';
/** The suite's schema shape: an element `foo` of an anonymous restriction of `base`. */
const xsd = (base: string, facets: string, more = "") => `<?xml version='1.0'?>
<xsd:schema ${XS} xmlns:t="urn:t" targetNamespace="urn:t">
  <xsd:element name="foo">
    <xsd:simpleType>
      <xsd:restriction base="${base}">
        ${facets}
      </xsd:restriction>
    </xsd:simpleType>
  </xsd:element>${more}
</xsd:schema>`;
const issues = (schema: string) => checkStepConfig("xml_schema", { schema_type: "xsd", schema });
const refused = (message: string) => [
  { field: "schema", code: "invalid_schema", message: `is not a valid XSD: ${message}` },
];

describe("minLength over maxLength in one restriction", () => {
  test.each(["xsd:string", "xsd:token", "xsd:hexBinary", "xsd:NMTOKENS"])(
    "on %p: refused at save (was saved)",
    (base) => {
      expect(issues(xsd(base, '<xsd:minLength value="6"/>\n        <xsd:maxLength value="5"/>'))).toEqual(
        refused(
          "line 6: minLength (6) is greater than maxLength (5) in the same restriction (XML Schema 1.0 Part 2 §4.3.3.4, minLength-less-than-equal-to-maxLength)",
        ),
      );
    },
  );
  test("equal, or the other way round, or either alone: saved", () => {
    for (const facets of [
      '<xsd:minLength value="5"/><xsd:maxLength value="5"/>',
      '<xsd:maxLength value="6"/><xsd:minLength value="5"/>',
      '<xsd:minLength value="6"/>',
      '<xsd:maxLength value="5"/>',
    ])
      expect({ facets, issues: issues(xsd("xsd:string", facets)) }).toEqual({ facets, issues: [] });
  });
});

describe("fractionDigits other than 0 on an integer type (0 and fixed there)", () => {
  test.each(["xsd:int", "xsd:integer", "xsd:unsignedByte", "xsd:positiveInteger"])(
    "on %p: refused at save (was saved)",
    (base) => {
      expect(issues(xsd(base, '<xsd:fractionDigits value="1"/>'))).toEqual(
        refused(
          `line 6: fractionDigits 1 on a restriction of ${base.replace("xsd:", "xs:")}, whose fractionDigits is 0 and fixed (XML Schema 1.0 Part 2 §3.3.13, §4.3.12.4)`,
        ),
      );
    },
  );
  test("through a named simple type of the same document", () => {
    const named = `\n  <xsd:simpleType name="count"><xsd:restriction base="xsd:long"><xsd:minInclusive value="0"/></xsd:restriction></xsd:simpleType>`;
    expect(issues(xsd("t:count", '<xsd:fractionDigits value="2"/>', named))).toEqual(
      refused(
        "line 6: fractionDigits 2 on a restriction of xs:long, whose fractionDigits is 0 and fixed (XML Schema 1.0 Part 2 §3.3.13, §4.3.12.4)",
      ),
    );
  });
  test("0 on an integer type, and any value on xs:decimal: saved", () => {
    expect(issues(xsd("xsd:int", '<xsd:fractionDigits value="0"/>'))).toEqual([]);
    expect(issues(xsd("xsd:decimal", '<xsd:fractionDigits value="5"/><xsd:totalDigits value="5"/>'))).toEqual(
      [],
    );
  });
  test("in a document of the set, named by its URI", () => {
    const uri = "https://schemas.example.com/t.xsd";
    const root = `<xsd:schema ${XS}><xsd:import namespace="urn:t" schemaLocation="${uri}"/></xsd:schema>`;
    expect(() =>
      compileSchema(
        {
          type: "xsd",
          schema: root,
          documents: { [uri]: xsd("xsd:int", '<xsd:fractionDigits value="1"/>') },
        },
        { atSave: true },
      ),
    ).toThrow(
      new SchemaCompileError(
        `${uri} line 6: fractionDigits 1 on a restriction of xs:int, whose fractionDigits is 0 and fixed (XML Schema 1.0 Part 2 §3.3.13, §4.3.12.4)`,
      ),
    );
  });
});

describe("what a built-in base fixes, loosened (W3C suite NMTOKENS_minLength001, token_whitespace001 …)", () => {
  test.each([
    [
      "xsd:NMTOKENS",
      '<xsd:minLength value="0"/>',
      "minLength 0 on a restriction of xs:NMTOKENS, whose minLength is 1 (XML Schema 1.0 Part 2 §4.3.2.4, §4.3.3.4)",
    ],
    [
      "xsd:IDREFS",
      '<xsd:maxLength value="0"/>',
      "maxLength 0 on a restriction of xs:IDREFS, whose minLength is 1 (XML Schema 1.0 Part 2 §4.3.2.4, §4.3.3.4)",
    ],
    [
      "xsd:normalizedString",
      '<xsd:whiteSpace value="preserve"/>',
      "whiteSpace preserve on a restriction of xs:normalizedString, whose whiteSpace is replace (a restriction may not loosen it: XML Schema 1.0 Part 2 §4.3.6.4)",
    ],
    [
      "xsd:NCName",
      '<xsd:whiteSpace value="replace"/>',
      "whiteSpace replace on a restriction of xs:NCName, whose whiteSpace is collapse (a restriction may not loosen it: XML Schema 1.0 Part 2 §4.3.6.4)",
    ],
    [
      "xsd:positiveInteger",
      '<xsd:maxExclusive value="1"/>',
      "maxExclusive 1 on a restriction of xs:positiveInteger, whose minInclusive is 1 (maxExclusive must exceed it: XML Schema 1.0 Part 2 §4.3.7.4)",
    ],
    [
      "xsd:unsignedByte",
      '<xsd:maxExclusive value="0"/>',
      "maxExclusive 0 on a restriction of xs:unsignedByte, whose minInclusive is 0 (maxExclusive must exceed it: XML Schema 1.0 Part 2 §4.3.7.4)",
    ],
  ])("on %p, %p: refused at save (was saved)", (base, facet, message) => {
    expect(issues(xsd(base, facet))).toEqual(refused(`line 6: ${message}`));
  });
  test("what narrows or keeps the base's value: saved", () => {
    for (const [base, facet] of [
      ["xsd:NMTOKENS", '<xsd:minLength value="1"/><xsd:maxLength value="1"/>'],
      ["xsd:normalizedString", '<xsd:whiteSpace value="replace"/>'],
      ["xsd:normalizedString", '<xsd:whiteSpace value="collapse"/>'],
      ["xsd:string", '<xsd:whiteSpace value="preserve"/>'],
      ["xsd:token", '<xsd:whiteSpace value="collapse"/>'],
      ["xsd:positiveInteger", '<xsd:maxExclusive value="2"/>'],
      ["xsd:integer", '<xsd:maxExclusive value="-5"/>'],
    ])
      expect({ base, facet, issues: issues(xsd(base, facet)) }).toEqual({ base, facet, issues: [] });
  });
});
