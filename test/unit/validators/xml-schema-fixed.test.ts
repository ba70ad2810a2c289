// An element's fixed value is compared in its type's value space (XML Schema 1.0 cvc-elt.5.2.2.2.2),
// not as text as libxml2 does (src/validators/xml-schema/fixed-values.ts).
import { beforeAll, describe, expect, test } from "bun:test";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { sameValue } from "../../../src/validators/xml-schema/fixed-values.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';
const schema = (decls: string, extra = "", attrs = "") =>
  `<xs:schema ${XS} ${attrs}>${extra}<xs:element name="root"><xs:complexType><xs:sequence>${decls}</xs:sequence></xs:complexType></xs:element></xs:schema>`;
const check = (xsd: string, doc: string) =>
  run("xml_schema", { schema_type: "xsd", schema: xsd }, doc, "XML").findings.map((f) => [f.rule, f.path]);

describe("an element's fixed value in its type's value space", () => {
  const decls = [
    '<xs:element name="d" type="xs:decimal" fixed="1.0"/>',
    '<xs:element name="f" type="xs:double" fixed="1e2"/>',
    '<xs:element name="b" type="xs:boolean" fixed="true"/>',
    '<xs:element name="p" type="price" fixed="2.50"/>',
    '<xs:element name="i" type="xs:int" fixed="7"/>',
    '<xs:element name="t" type="xs:token" fixed="a b"/>',
    '<xs:element name="h" type="xs:hexBinary" fixed="0A"/>',
    '<xs:element name="s" type="xs:string" fixed="1.0"/>',
  ].join("");
  const price =
    '<xs:simpleType name="price"><xs:restriction base="money"><xs:maxInclusive value="100"/></xs:restriction></xs:simpleType>' +
    '<xs:simpleType name="money"><xs:restriction base="xs:decimal"/></xs:simpleType>';
  const xsd = schema(decls, price);
  const doc = (d: string, f: string, b: string, p: string, i: string, t: string, h: string, s: string) =>
    `<root><d>${d}</d><f>${f}</f><b>${b}</b><p>${p}</p><i>${i}</i><t>${t}</t><h>${h}</h><s>${s}</s></root>`;

  test("equal values written otherwise meet it (libxml2 refused each of these)", () => {
    expect(check(xsd, doc(" 1.00 ", "100", "1", "2.5", "+007", " a  b ", "0a", "1.0"))).toEqual([]);
  });
  test("other values still break it, each at its element; a string is compared as written", () => {
    expect(check(xsd, doc("1.01", "101", "0", "2.51", "8", "a  c", "0B", "1.00"))).toEqual(
      ["d", "f", "b", "p", "i", "t", "h", "s"].map((n) => ["cvc-elt.5.2.2", `/root/${n}`]),
    );
  });
  test("in a target namespace, by reference to a global element, and with a type of another prefix", () => {
    const ns = schema(
      '<xs:element ref="tn:g"/><xs:element name="l" type="tn:n" fixed="1.5"/>',
      '<xs:element name="g" type="xs:integer" fixed="3"/><xs:simpleType name="n"><xs:restriction base="xs:double"/></xs:simpleType>',
      'targetNamespace="urn:t" xmlns:tn="urn:t" elementFormDefault="qualified"',
    );
    const ok = '<root xmlns="urn:t"><g>03</g><l>15e-1</l></root>';
    expect(check(ns, ok)).toEqual([]);
    const bad = '<root xmlns="urn:t"><g>4</g><l>1.6</l></root>';
    expect(check(ns, bad).map(([rule]) => rule)).toEqual(["cvc-elt.5.2.2", "cvc-elt.5.2.2"]);
  });
  test("where the type is not known for certain, libxml2's verdict stands", () => {
    // Two declarations of one name and fixed value, one of them a union (not resolved here).
    const xsd2 = schema(
      '<xs:element name="u" fixed="1.0"><xs:simpleType><xs:union memberTypes="xs:decimal xs:string"/></xs:simpleType></xs:element>',
    );
    expect(check(xsd2, "<root><u>1.00</u></root>")).toEqual([["cvc-elt.5.2.2", "/root/u"]]);
  });
});

describe("sameValue", () => {
  test.each([
    ["decimal", "-0.0", "0", true],
    ["decimal", "00012.3400", "12.34", true],
    ["decimal", "1e2", "100", false], // not a decimal's lexical form
    ["integer", "1.0", "1", false],
    ["float", "0.1", "0.10000000149011612", true], // one single-precision value
    ["double", "0.1", "0.10000000149011612", false],
    ["double", "INF", "1e400", true],
    ["double", "-0", "0", true],
    ["boolean", "true", "1", true],
    ["boolean", "yes", "true", false],
    ["string", " a", "a", false],
    ["normalizedString", "a\tb", "a b", true],
    ["dateTime", "2020-01-01T00:00:00Z", " 2020-01-01T00:00:00Z\n", true],
    ["date", "2020-01-01Z", "2020-01-01+00:00", false], // equal values, different text: libxml2's verdict kept
  ])("%s: %j vs %j → %p", (type, a, b, want) => {
    expect(sameValue(type, a, b)).toBe(want);
  });
});
