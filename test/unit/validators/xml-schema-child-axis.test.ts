// An identity constraint's selector and field may write the child axis out (XML Schema 1.0
// §3.11.6: `child::p:*`, `.//child::p:row`); libxml2 refused the first as an XPath that does not
// compile and found no node with the second. Cases from the W3C XML Schema test suite
// (msData/identityConstraint idL014, idL029, idI013; docs/conformance.md, "# XML").
import { beforeAll, describe, expect, test } from "bun:test";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

/** idL014's schema (a default namespace declared, as there), with the selector and field given. */
const xsd = (selector: string, field: string) => `<?xml version="1.0"?>
<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified" targetNamespace="myNS.tempuri.org" xmlns:myNS="myNS.tempuri.org" xmlns="myNS.tempuri.org">
  <xsd:element name="root">
    <xsd:complexType><xsd:sequence><xsd:element ref="t" maxOccurs="unbounded"/></xsd:sequence></xsd:complexType>
    <xsd:unique name="tableu">
      <xsd:selector xpath="${selector}"/>
      <xsd:field xpath="${field}"/>
    </xsd:unique>
  </xsd:element>
  <xsd:element name="t" type="ttype"/>
  <xsd:complexType name="ttype">
    <xsd:sequence><xsd:element name="row" type="xsd:string" maxOccurs="unbounded"/></xsd:sequence>
  </xsd:complexType>
</xsd:schema>`;
const doc = (a: string, b: string) =>
  `<root xmlns="myNS.tempuri.org">\n<t><row>${a}</row></t>\n<t><row>${b}</row></t>\n</root>`;
const findings = (schema: string, xml: string) =>
  run("xml_schema", { schema_type: "xsd", schema }, xml, "XML").findings.map((f) => [f.rule, f.path, f.line]);

describe("the child:: axis written out in a selector or field", () => {
  test.each([
    [".//myNS:t", "child::myNS:*"],
    [".//myNS:t", "child::myNS:row"],
    [".//myNS:t", "child:: myNS:row"],
    [".//child::myNS:t", "myNS:row"],
    ["child::myNS:t", "child::myNS:*"],
    ["myNS:t | child::myNS:t", "child::myNS:row"],
  ])("selector %p, field %p: saved, and means what it says without the axis", (selector, field) => {
    const schema = xsd(selector, field);
    expect(findings(schema, doc("a", "b"))).toEqual([]);
    expect(findings(schema, doc("a", "a"))).toEqual([["cvc-identity-constraint.4.1", "/*/*[2]", 3]]);
  });
  test("`child::` with no name test after it is still refused at save", () => {
    const issues = checkStepConfig("xml_schema", { schema_type: "xsd", schema: xsd(".//myNS:t", "child::") });
    expect(issues).toEqual([
      {
        field: "schema",
        code: "invalid_schema",
        message:
          "is not a valid XSD: line 7: Element '{http://www.w3.org/2001/XMLSchema}field', attribute 'xpath': The XPath expression 'child::' could not be compiled.",
      },
    ]);
  });
});
