// minOccurs and maxOccurs beyond a C int: libxml2 refused them as not a nonNegativeInteger, and
// XML Schema 1.0 allows any (the W3C suite's particlesZ033_a, particlesZ035_a; compile.ts
// occursBounds, docs/conformance.md).
import { beforeAll, describe, expect, test } from "bun:test";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const xsd = (min: string, max: string) => `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="r"><xs:complexType><xs:sequence>
    <xs:element name="e" minOccurs="${min}" maxOccurs="${max}"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>`;
const doc = (n: number) => `<r>${"<e/>".repeat(n)}</r>`;
const rules = (schema: string, xml: string) =>
  run("xml_schema", { schema_type: "xsd", schema }, xml, "XML").findings.map((f) => f.rule);

describe("occurrence bounds beyond a C int", () => {
  test('maxOccurs="100000000000": saved, and a document of any size it can have passes', () => {
    const schema = xsd("2", "100000000000");
    expect(rules(schema, doc(2))).toEqual([]);
    expect(rules(schema, doc(500))).toEqual([]);
    expect(rules(schema, doc(1))).toEqual(["cvc-complex-type.2.4"]);
  });
  test("minOccurs and maxOccurs of 29 digits: saved, and no document has enough elements", () => {
    const schema = xsd("79228162514244337593543950335", "79228162514264337593543950335");
    expect(rules(schema, doc(3))).toEqual(["cvc-complex-type.2.4"]);
  });
  test("a minOccurs over its maxOccurs is still refused", () => {
    const issues = checkStepConfig("xml_schema", {
      schema_type: "xsd",
      schema: xsd("79228162514264337593543950335", "79228162514244337593543950335"),
    });
    // (libxml2's own words for the bound it cannot hold, as before.)
    expect(issues).toEqual([
      {
        field: "schema",
        code: "invalid_schema",
        message:
          "is not a valid XSD: line 3: Element '{http://www.w3.org/2001/XMLSchema}element', attribute 'maxOccurs': The value '79228162514244337593543950335' is not valid. Expected is '(xs:nonNegativeInteger | unbounded)'.; line 3: Element '{http://www.w3.org/2001/XMLSchema}element', attribute 'minOccurs': The value must not be greater than the value of 'maxOccurs'.",
      },
    ]);
  });
});
