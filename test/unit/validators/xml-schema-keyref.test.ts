// A keyref that matches no key: libxml2 gives the error a line and no node; the finding gets the
// element's path and column all the same (src/validators/xml-schema/keyref-node.ts).
import { beforeAll, describe, expect, test } from "bun:test";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const xsd = (attrs = "") => `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" ${attrs}>
  <xs:element name="root"><xs:complexType><xs:sequence>
   <xs:element name="item" maxOccurs="unbounded"><xs:complexType><xs:attribute name="id" type="xs:string"/><xs:attribute name="v" type="xs:string"/></xs:complexType></xs:element>
   <xs:element name="ref" maxOccurs="unbounded"><xs:complexType><xs:sequence><xs:element name="v" type="xs:string"/></xs:sequence><xs:attribute name="to" type="xs:string"/></xs:complexType></xs:element>
  </xs:sequence></xs:complexType>
  <xs:key name="k"><xs:selector xpath="item"/><xs:field xpath="@id"/><xs:field xpath="@v"/></xs:key>
  <xs:keyref name="kr" refer="k"><xs:selector xpath="ref"/><xs:field xpath="@to"/><xs:field xpath="v"/></xs:keyref>
  </xs:element></xs:schema>`;
const items = '<item id="a" v="1"/><item id="b" v="2"/>';
const check = (doc: string, schema = xsd()) =>
  run("xml_schema", { schema_type: "xsd", schema }, doc, "XML").findings.map((f) => [
    f.rule,
    f.path,
    f.line,
    f.column,
  ]);
const RULE = "cvc-identity-constraint.4.3";

describe("a keyref that matches no key is located at its element", () => {
  test("one element a line: its path, line and column", () => {
    const doc = `<root>\n${items}\n<ref to="a"><v>1</v></ref>\n  <ref to="zz"><v>1</v></ref>\n</root>`;
    expect(check(doc)).toEqual([[RULE, "/root/ref[2]", 4, 3]]);
  });
  test("a document on one line: the element whose fields hold the key values", () => {
    const doc = `<root>${items}<ref to="a"><v>1</v></ref><ref to="zz"><v>1</v></ref><ref to="b"><v>2</v></ref></root>`;
    expect(check(doc)).toEqual([[RULE, "/root/ref[2]", 1, doc.indexOf('<ref to="zz"') + 1]]);
  });
  test("two elements on the line with the same values: no path is guessed", () => {
    const doc = `<root>${items}<ref to="zz"><v>1</v></ref><ref to="zz"><v>1</v></ref></root>`;
    // (libxml2's two errors are one finding: same message, same line.)
    expect(check(doc)).toEqual([[RULE, null, 1, null]]);
  });
  test("in a namespace", () => {
    const schema = xsd('targetNamespace="urn:t" xmlns:t="urn:t" elementFormDefault="qualified"')
      .replace(/xpath="(item|ref|v)"/g, 'xpath="t:$1"')
      .replace('refer="k"', 'refer="t:k"');
    const doc = `<root xmlns="urn:t">\n${items}\n<ref to="zz"><v>1</v></ref>\n</root>`;
    expect(check(doc, schema)).toEqual([[RULE, "/*/*[3]", 3, 1]]);
  });
});
