// XML columns count UTF-16 code units, as every other finding's do and as SARIF declares.
// libxml2 counts characters: an emoji (two code units) earlier on the line put the column of a
// well-formedness error one short of where JSON findings and Schematron put the same spot.
import { beforeAll, describe, expect, test } from "bun:test";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { utf16Column } from "../../../src/validators/shared/xml.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const at = (slug: string, config: Record<string, unknown>, doc: string) =>
  run(slug, config, doc, "XML").findings.map((f) => [f.code, f.line, f.column]);

describe("XML parser findings are placed in UTF-16 code units", () => {
  test("after an emoji on the line, every step that parses says the same column", () => {
    // The stray "<" is at UTF-16 index 19 (the emoji is two code units): column 20, libxml2 said 19.
    const doc = '<!--😀--><a n="x"/><';
    const expected = [["xml.not_well_formed", 1, 20]];
    expect(at("syntax", {}, doc)).toEqual(expected);
    const xsd = '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a"/></xs:schema>';
    expect(at("xml_schema", { schema_type: "xsd", schema: xsd }, doc)).toEqual(expected);
    const sch =
      '<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron"><sch:pattern><sch:rule context="a"><sch:assert test="true()">x</sch:assert></sch:rule></sch:pattern></sch:schema>';
    expect(at("schematron", { schema: sch }, doc)).toEqual(expected);
  });
  test("on a later line only that line's characters count; without astral characters nothing changes", () => {
    // The "<" of </r> (where libxml2 stops): character 14 of line 2, code unit 16 after two emoji.
    expect(at("syntax", {}, "<r>\n<!--😀😀-->&bad</r>")).toEqual([["xml.not_well_formed", 2, 16]]);
    expect(at("syntax", {}, "<r>\n<!--xx-->&bad</r>")).toEqual([["xml.not_well_formed", 2, 14]]);
  });
  test("utf16Column: characters to code units", () => {
    const text = "ab\n😀c😀d\nz";
    expect(utf16Column(text, 2, 1)).toBe(1);
    expect(utf16Column(text, 2, 2)).toBe(3); // after one emoji
    expect(utf16Column(text, 2, 4)).toBe(6);
    expect(utf16Column(text, 1, 3)).toBe(3);
    expect(utf16Column(text, null, 4)).toBe(4);
    expect(utf16Column(text, 2, null)).toBe(null);
  });
});

describe("xml_schema findings past line 65,535", () => {
  // libxml2 keeps an element's line in 16 bits; past it, it guesses from the text around the
  // element: the unexpected <b/> on line 65,539 was reported on 65,540, without a column.
  const xsd = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="r"><xs:complexType><xs:sequence><xs:element name="a" maxOccurs="unbounded" type="xs:int"/></xs:sequence></xs:complexType></xs:element></xs:schema>`;
  const doc = (before: number, tail: string) => `<r>\n${"<a>1</a>\n".repeat(before)}${tail}</r>\n`;
  test("an element's finding is on the line and column of its start tag", () => {
    // Lines: <r> is 1, the a elements 2..65,537, <a>x</a> 65,538, <b/> 65,539.
    expect(at("xml_schema", { schema_type: "xsd", schema: xsd }, doc(65_536, "<a>x</a>\n<b/>\n"))).toEqual([
      ["xml.schema_violation", 65_538, 1],
      ["xml.schema_violation", 65_539, 1],
    ]);
  });
  test("a start tag written over several lines is placed where it begins", () => {
    const tail = '<a>x</a>\n  <b\n   id="1"\n  />\n';
    expect(at("xml_schema", { schema_type: "xsd", schema: xsd }, doc(70_000, tail))).toEqual([
      ["xml.schema_violation", 70_002, 1],
      ["xml.schema_violation", 70_003, 3],
    ]);
  });
});
