// The published config schema of xml_schema (GET /api/v1/validators/) and the save agree: a
// config one refuses, the other refuses too — the rules between fields included.
import { beforeAll, describe, expect, test } from "bun:test";
import Schema from "typebox/schema";
import { checkXmlSchemaConfig } from "../../../src/validators/xml-schema/config.ts";
import { getValidator } from "../../../src/validators/registry.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";

const XSD = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a" type="xs:string"/></xs:schema>`;
const URI = "https://schemas.example.com/a.xsd";
beforeAll(() => loadLibxml());
const published = Schema.Compile(getValidator("xml_schema")!.configSchema as never);

describe("xml_schema: the published config schema says what the save accepts", () => {
  const cases: [string, Record<string, unknown>, boolean][] = [
    ["an inline XSD", { schema_type: "xsd", schema: XSD }, true],
    [
      "a stored XSD by URI, its snapshot pinned",
      { schema_type: "xsd", schema_uri: URI, documents: { [URI]: XSD } },
      true,
    ],
    ["a DTD inline", { schema_type: "dtd", schema: "<!ELEMENT a (#PCDATA)>" }, true],
    ["neither schema nor schema_uri", { schema_type: "xsd" }, false],
    ["both schema and schema_uri", { schema_type: "xsd", schema: XSD, schema_uri: URI }, false],
    ["schema_uri for a DTD", { schema_type: "dtd", schema_uri: URI }, false],
    ["documents for RelaxNG", { schema_type: "relaxng", schema: "<element/>", documents: {} }, false],
    ["an unknown key", { schema_type: "xsd", schema: XSD, schemas: "x" }, false],
  ];
  for (const [what, config, ok] of cases)
    test(`${what}: ${ok ? "accepted" : "refused"} by both`, () => {
      expect(published.Check(config)).toBe(ok);
      expect(checkXmlSchemaConfig(config, { [URI]: XSD }).length === 0).toBe(ok);
    });
});
