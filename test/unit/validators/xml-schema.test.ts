import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { LineIndex } from "../../../src/validators/shared/position.ts";
import { entityMayHoldMarkup, parseXml, positionForXPath } from "../../../src/validators/shared/xml.ts";
import { incompleteResult } from "../../../src/validators/xml-schema/index.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { brief, codes, run } from "./helpers.ts";

// The XML engine is loaded on demand (src/validators/shared/libxml.ts), as a worker does.
beforeAll(() => loadLibxml());

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/validators/${name}`, import.meta.url), "utf8");
const xsd = fixture("order.xsd");
const rng = fixture("addressbook.rng");
const dtd = fixture("note.dtd");

const validate = (schema_type: string, schema: string, xml: string, extra: Record<string, unknown> = {}) =>
  run("xml_schema", { schema_type, schema, ...extra }, xml, "XML");

const slimmed = (r: ReturnType<typeof run>) =>
  r.findings.map(({ code, message, path, line, column, rule }) => ({
    code,
    message,
    path,
    line,
    column,
    rule,
  }));

describe("xml_schema: XSD", () => {
  test("a valid document passes", () => {
    expect(validate("xsd", xsd, '<order><id>1</id><item sku="a" qty="2"/></order>').findings).toEqual([]);
  });

  test("violations carry line, column (start tag) and XPath", () => {
    const xml = '<order>\n  <id>abc</id>\n  <item sku="a" qty="0"/>\n  <item qty="1"/>\n  <bogus/>\n</order>';
    const r = validate("xsd", xsd, xml);
    expect(brief(r, true)).toEqual([
      { code: "xml.schema_violation", line: 2, column: 3, path: "/order/id" },
      { code: "xml.schema_violation", line: 3, column: 3, path: "/order/item[1]" },
      { code: "xml.schema_violation", line: 4, column: 3, path: "/order/item[2]" },
      { code: "xml.schema_violation", line: 5, column: 3, path: "/order/bogus" },
    ]);
    expect(r.findings[0].message).toContain("'abc' is not a valid value");
  });

  test("a start tag over several lines: the finding is at its '<', not on the line it ends on", () => {
    // libxml2 reports the line where the start tag ends (3 here) and no column.
    const xml =
      '<order><id>1</id><item\n  sku="a"\n  qty="0"/>\n<item sku="b"\n qty="1"\n><x/></item></order>';
    expect(brief(validate("xsd", xsd, xml), true)).toEqual([
      { code: "xml.schema_violation", line: 1, column: 18, path: "/order/item[1]" },
      { code: "xml.schema_violation", line: 4, column: 1, path: "/order/item[2]" },
    ]);
  });

  test("a start tag over several lines ending where a sibling of its name begins: each finding on its own tag", () => {
    const first = '<order><id>1</id><item\n  sku="a" qty="0"/><item sku="b" qty="1"/></order>';
    expect(brief(validate("xsd", xsd, first), true)).toEqual([
      { code: "xml.schema_violation", line: 1, column: 18, path: "/order/item[1]" },
    ]);
    const second = '<order><id>1</id><item\n  sku="a" qty="1"/><item sku="b" qty="0"/></order>';
    expect(brief(validate("xsd", xsd, second), true)).toEqual([
      { code: "xml.schema_violation", line: 2, column: 20, path: "/order/item[2]" },
    ]);
  });

  test("positionForXPath: only a start tag still open where the reported line begins", () => {
    const at = (text: string, line: number, xpath: string, message = "") =>
      positionForXPath(new LineIndex(text), line, xpath, message);
    expect(at('<r>\n<item\n  a="1"\n  b="x>y"/>', 4, "/r/item")).toEqual({ line: 2, column: 1 });
    expect(at('<r><p:item\n a="1"/>', 2, "/r/item")).toEqual({ line: 1, column: 4 });
    // The last '<' is another element's, or a tag that ended above: libxml2's line, no column.
    expect(at('<r><other\n a="1"/>', 2, "/r/item")).toEqual({ line: 2, column: null });
    expect(at('<r><item a="1"/>\n</r>', 2, "/r/item")).toEqual({ line: 2, column: null });
    expect(at("<item/>", 1, "/item")).toEqual({ line: 1, column: 1 });
  });

  test("a not-well-formed document is reported as such, not validated", () => {
    expect(brief(validate("xsd", xsd, "<order><id>1</order>"))).toEqual([
      { code: "xml.not_well_formed", line: 1, column: 21 },
    ]);
  });

  test("an element repeated on one line (minified XML) gets its own column, not the first one's", () => {
    const schema = (tns: string) =>
      `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"${tns}><xs:element name="a"><xs:complexType><xs:sequence>` +
      '<xs:element name="c" minOccurs="0"><xs:complexType><xs:sequence><xs:element name="b" type="xs:int"/></xs:sequence></xs:complexType></xs:element>' +
      '<xs:element name="b" type="xs:int" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element></xs:schema>';
    const plain = schema("");
    const at = (xml: string, s = plain) => brief(validate("xsd", s, xml), true);
    expect(at("<a><b>1</b><b>x</b></a>")).toEqual([
      { code: "xml.schema_violation", line: 1, column: 12, path: "/a/b[2]" },
    ]);
    // A same-named element nested in a sibling, a comment and a '>' in an attribute are not counted.
    expect(at('<a><c><b>y</b></c><!-- <b> --><b>1</b><b n=">">x</b></a>')).toEqual([
      { code: "xml.schema_violation", line: 1, column: 7, path: "/a/c/b" },
      { code: "xml.schema_violation", line: 1, column: 39, path: "/a/b[2]" },
      { code: "xml.schema_violation", line: 1, column: 39, path: "/a/b[2]" },
    ]);
    expect(at("<a>\n<b>1</b>\n<b>2</b><b>x</b></a>")).toEqual([
      { code: "xml.schema_violation", line: 3, column: 9, path: "/a/b[3]" },
    ]);
    // In a default namespace libxml2 writes "*", counting every element sibling.
    const ns = schema(' targetNamespace="urn:x" xmlns="urn:x" elementFormDefault="qualified"');
    expect(at('<a xmlns="urn:x"><b>1</b>\n<b>2</b><b>x</b></a>', ns)).toEqual([
      { code: "xml.schema_violation", line: 2, column: 9, path: "/*/*[3]" },
    ]);
    expect(at('<p:a xmlns:p="urn:x"><p:b>1</p:b><p:b>x</p:b></p:a>', ns)).toEqual([
      { code: "xml.schema_violation", line: 1, column: 34, path: "/p:a/p:b[2]" },
    ]);
  });

  test("a document declaring plain-text entities keeps exact columns; one whose entities may hold elements does not", () => {
    const schema =
      '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a"><xs:complexType><xs:sequence>' +
      '<xs:element name="b" type="xs:int" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element></xs:schema>';
    const doc = `<!DOCTYPE a [<!ENTITY co "ACME"> <!ENTITY % p 'x'>]>\n<a><b>1</b><b>x</b></a>`;
    expect(brief(validate("xsd", schema, doc), true)).toEqual([
      { code: "xml.schema_violation", line: 2, column: 12, path: "/a/b[2]" },
    ]);
    expect(entityMayHoldMarkup(doc)).toBe(false);
    expect(entityMayHoldMarkup("<a/>")).toBe(false);
    // Elements, a character reference that may make one, a reference to another entity, a
    // declaration not read (external, or an unmatched quote): the scan is not trusted.
    for (const dtd of ['"<b>1</b>"', '"&#60;b/>"', '"&co;"', 'SYSTEM "x.ent"', '"unclosed'])
      expect(entityMayHoldMarkup(`<!DOCTYPE a [<!ENTITY e ${dtd}>]><a/>`)).toBe(true);
  });

  test("findings are capped with truncated", () => {
    const items = Array.from({ length: 20 }, () => '<item sku="a" qty="0"/>').join("\n");
    const r = validate("xsd", xsd, `<order><id>1</id>\n${items}</order>`, { max_findings: 3 });
    expect(r.findings).toHaveLength(3);
    expect(r.truncated).toBe(true);
  });

  test("the compiled schema is reused across runs (cache) without leaking state", () => {
    for (let i = 0; i < 50; i++) {
      expect(codes(validate("xsd", xsd, "<order><id>x</id></order>"))).toEqual([
        "xml.schema_violation",
        "xml.schema_violation",
      ]);
    }
  });
});

describe("xml_schema: validation libxml2 cannot finish", () => {
  // No document reaches this since internal entities are substituted (the last known trigger):
  // the mapping is checked on its own. The data was not judged: the step ends `error`.
  test("is the step's error, not a failed verdict", () => {
    expect(incompleteResult("Invalid input or internal error")).toEqual({
      findings: [
        {
          severity: "error",
          code: "xml.validation_error",
          message: "validation could not complete: Invalid input or internal error",
          path: null,
          line: null,
          column: null,
          rule: "xml:validation-incomplete",
        },
      ],
      truncated: false,
      error: "validation could not complete: Invalid input or internal error",
    });
  });
});

describe("xml_schema: RelaxNG and DTD", () => {
  test("RelaxNG reports one bad value once, with a rule", () => {
    const xml = "<addressBook><card><name>x</name><age>x</age></card></addressBook>";
    const r = validate("relaxng", rng, xml);
    expect(r.findings).toEqual([
      {
        severity: "error",
        code: "xml.schema_violation",
        message: "Type integer doesn't allow value 'x'",
        path: "/addressBook/card/age",
        line: 1,
        column: 34,
        rule: "relaxng:data",
      },
    ]);
  });

  test("every finding has a rule: XSD's cvc-* names, DTD's validity constraints", () => {
    const xsdFindings = validate(
      "xsd",
      xsd,
      '<order>\n  <id>abc</id>\n  <item qty="0"/>\n  <bogus/>\n</order>',
    );
    expect(xsdFindings.findings.map((f) => f.rule)).toEqual([
      "cvc-datatype-valid",
      "cvc-datatype-valid",
      "cvc-complex-type.4",
      "cvc-complex-type.2.4",
    ]);
    // Abstract declarations and types have rules of their own; an element named `abstract` none.
    const abstract = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="r"><xs:complexType><xs:sequence><xs:element name="abstract" type="xs:int" fixed="1"/><xs:element name="t" type="B"/></xs:sequence></xs:complexType></xs:element><xs:element name="h" abstract="true"/><xs:complexType name="B" abstract="true"/></xs:schema>`;
    expect(
      validate("xsd", abstract, "<r><abstract>2</abstract><t/></r>").findings.map((f) => [f.rule, f.message]),
    ).toEqual([
      [
        "cvc-elt.5.2.2",
        "Element 'abstract': The actual value '2' does not match the fixed value constraint '1'.",
      ],
      ["cvc-type.2", "Element 't': The type definition is abstract."],
    ]);
    expect(validate("xsd", abstract, "<h/>").findings.map((f) => f.rule)).toEqual(["cvc-elt.2"]);
    const dtdFindings = validate("dtd", dtd, "<note>\n<to>a</to>\n<x/></note>");
    expect(dtdFindings.findings.map((f) => f.rule)).toEqual([
      "VC: Element Valid",
      "VC: Required Attribute",
      "VC: Element Valid",
    ]);
    expect(run("syntax", {}, "<a><b></a>", "XML").findings.map((f) => f.rule)).toEqual(["xml:well-formed"]);
  });

  test("rules named after what failed: a fixed attribute, a nilled element, empty content, an ENTITY attribute", () => {
    const xs = (body: string) => `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">${body}</xs:schema>`;
    const rule = (type: "xsd" | "dtd", schema: string, xml: string) =>
      validate(type, schema, xml).findings.map((f) => f.rule);
    const local = xs(
      `<xs:element name="r"><xs:complexType><xs:attribute name="v" fixed="x"/></xs:complexType></xs:element>`,
    );
    const global = xs(
      `<xs:attribute name="v" fixed="x"/><xs:element name="r"><xs:complexType><xs:attribute ref="v"/></xs:complexType></xs:element>`,
    );
    expect(rule("xsd", local, '<r v="y"/>')).toEqual(["cvc-complex-type.3.1"]);
    expect(rule("xsd", global, '<r v="y"/>')).toEqual(["cvc-complex-type.3.1"]);
    expect(rule("xsd", xs(`<xs:element name="r" type="xs:string" fixed="x"/>`), "<r>y</r>")).toEqual([
      "cvc-elt.5.2.2",
    ]);
    const nillable = xs(`<xs:element name="a" type="xs:int" nillable="true"/>`);
    expect(
      rule("xsd", nillable, '<a xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true">5</a>'),
    ).toEqual(["cvc-elt.3.2.1"]);
    const empty = xs(`<xs:element name="a"><xs:complexType/></xs:element>`);
    expect(rule("xsd", empty, "<a>text</a>")).toEqual(["cvc-complex-type.2.1"]);
    expect(rule("xsd", empty, "<a><b/></a>")).toEqual(["cvc-complex-type.2.1"]);
    expect(rule("dtd", "<!ELEMENT r EMPTY><!ATTLIST r t ENTITY #IMPLIED>", '<r t="nope"/>')).toEqual([
      "VC: Entity Name",
    ]);
  });

  // Found by the W3C suite (test/conformance/xsdtests.test.ts): these fell back to cvc-assess-elt.
  test("rules named after what failed: a key field of more than one node or of a complex type, an unbound QName prefix", () => {
    const xs = (body: string) => `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">${body}</xs:schema>`;
    const keyed = (field: string) =>
      xs(
        `<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="i" maxOccurs="unbounded"><xs:complexType><xs:sequence><xs:element name="k" maxOccurs="unbounded"><xs:complexType><xs:sequence><xs:element name="v" type="xs:int" minOccurs="0"/></xs:sequence></xs:complexType></xs:element></xs:sequence></xs:complexType></xs:element></xs:sequence></xs:complexType><xs:key name="key"><xs:selector xpath="i"/><xs:field xpath="${field}"/></xs:key></xs:element>`,
      );
    const findings = (schema: string, xml: string) =>
      validate("xsd", schema, xml).findings.map((f) => [f.rule, f.message, f.path]);
    expect(findings(keyed("k/v"), "<r><i><k><v>1</v></k><k><v>2</v></k></i></r>")).toEqual([
      [
        "cvc-identity-constraint.3",
        "Element 'v': The XPath 'k/v' of a field of key identity-constraint 'key' evaluates to a node-set with more than one member.",
        "/r/i/k[2]/v",
      ],
    ]);
    expect(findings(keyed("k"), "<r><i><k/></i></r>")).toEqual([
      [
        "cvc-identity-constraint.3",
        "Element 'k': The XPath 'k' of a field of key identity-constraint 'key' does evaluate to a node of non-simple type.",
        "/r/i/k",
      ],
      [
        "cvc-identity-constraint.4.2.1",
        "Element 'i': Not all fields of key identity-constraint 'key' evaluate to a node.",
        "/r/i",
      ],
    ]);
    expect(findings(xs(`<xs:element name="q" type="xs:QName"/>`), "<q>p:x</q>")).toEqual([
      [
        "cvc-datatype-valid",
        "Element 'q': The QName value 'p:x' has no corresponding namespace declaration in scope.",
        "/q",
      ],
      ["cvc-datatype-valid", "Element 'q': 'p:x' is not a valid value of the atomic type 'xs:QName'.", "/q"],
    ]);
  });

  test("DTD: the document type declaration names the root element (VC: Root Element Type)", () => {
    const both = "<!ELEMENT a EMPTY><!ELEMENT r EMPTY>";
    expect(slimmed(validate("dtd", both, '<?xml version="1.0"?>\n<!-- x -->\n<!DOCTYPE r>\n<a/>'))).toEqual([
      {
        code: "xml.schema_violation",
        message: 'The document type declaration names the root element "r", but the root element is "a".',
        path: "/a",
        line: 4,
        column: 1,
        rule: "VC: Root Element Type",
      },
    ]);
    expect(validate("dtd", both, "<!DOCTYPE a>\n<a/>").findings).toEqual([]);
    expect(validate("dtd", both, "<a/>").findings).toEqual([]);
  });

  test("RelaxNG in a default namespace: the element libxml2 names * is placed by the path scan", () => {
    const grammar = `<element name="r" ns="urn:x" xmlns="http://relaxng.org/ns/structure/1.0" datatypeLibrary="http://www.w3.org/2001/XMLSchema-datatypes"><oneOrMore><element name="i"><data type="int"/></element></oneOrMore></element>`;
    const r = validate("relaxng", grammar, '<r xmlns="urn:x">\n  <i>1</i>\n  <i>x</i><i>y</i>\n</r>');
    expect(r.findings.map((f) => [f.message, f.path, f.line, f.column])).toEqual([
      ["Type int doesn't allow value 'x'", "/*/*[2]", 3, 3],
      ["Type int doesn't allow value 'y'", "/*/*[3]", 3, 11],
    ]);
  });

  test("RelaxNG's missing element it cannot name reads as a sentence", () => {
    const r = validate("relaxng", rng, "<addressBook><card><name>x</name></card></addressBook>");
    expect(r.findings.map((f) => [f.message, f.path, f.rule])).toEqual([
      ["Expecting an element, got nothing", "/addressBook/card", "relaxng:element"],
    ]);
  });

  test("RelaxNG violations", () => {
    const xml = "<addressBook>\n<card><name>x</name><age>x</age></card>\n<card><nam/></card></addressBook>";
    const r = validate("relaxng", rng, xml);
    expect(r.findings.length).toBeGreaterThan(0);
    expect(r.findings.every((f) => f.code === "xml.schema_violation")).toBe(true);
    expect(r.findings.at(-1)).toMatchObject({ line: 3, column: 7, path: "/addressBook/card[2]/nam" });
    expect(
      validate("relaxng", rng, "<addressBook><card><name>a</name><age>3</age></card></addressBook>").findings,
    ).toEqual([]);
  });

  test("DTD violations", () => {
    const r = validate("dtd", dtd, "<note>\n<to>a</to>\n<x/></note>");
    expect(brief(r, true)).toEqual([
      { code: "xml.schema_violation", line: 1, column: 1, path: "/note" },
      { code: "xml.schema_violation", line: 1, column: 1, path: "/note" },
      { code: "xml.schema_violation", line: 3, column: 1, path: "/note/x" },
    ]);
    const ok = '<note id="n1"><to>a</to><from>b</from><body>c</body></note>';
    expect(validate("dtd", dtd, ok).findings).toEqual([]);
  });
});

describe("xml_schema: save-time checks", () => {
  const issues = (config: Record<string, unknown>) => checkStepConfig("xml_schema", config);
  test("a broken XSD is an issue on schema", () => {
    const bad =
      '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a" type="xs:nope"/></xs:schema>';
    expect(issues({ schema_type: "xsd", schema: bad })[0]).toMatchObject({
      field: "schema",
      code: "invalid_schema",
    });
    expect(issues({ schema_type: "xsd", schema: "<xs:schema" })[0].field).toBe("schema");
    expect(issues({ schema_type: "relaxng", schema: "<element/>" })[0].field).toBe("schema");
    expect(issues({ schema_type: "dtd", schema: "<!ELEMENT note (to,from>" })[0].field).toBe("schema");
  });
  test("an XSD include of nothing stored is unresolved; external parameter entities are refused", () => {
    const inc =
      '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:include schemaLocation="other.xsd"/></xs:schema>';
    expect(issues({ schema_type: "xsd", schema: inc })).toEqual([
      {
        field: "schema",
        code: "unresolved_reference",
        message:
          'line 1: include of "other.xsd": a relative schemaLocation needs a document with a URI; use the absolute URI of a stored document',
      },
    ]);
    const pe = '<!ENTITY % ext SYSTEM "http://evil.example/x.dtd"> %ext;';
    expect(issues({ schema_type: "dtd", schema: pe })[0].code).toBe("external_reference");
  });
  test("a schemaLocation outside the stored documents (file:, http:) is unresolved, never read", () => {
    const root =
      '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:include schemaLocation="file:///etc/passwd"/></xs:schema>';
    expect(issues({ schema_type: "xsd", schema: root })[0]).toMatchObject({ code: "unresolved_reference" });
  });
  test("shape", () => {
    expect(issues({ schema_type: "xslt", schema: "x" })[0].field).toBe("schema_type");
    expect(issues({ schema_type: "xsd" })[0]).toMatchObject({ field: "schema", code: "required" });
  });
});

describe("xml: hostile input", () => {
  test("XXE: an external entity is never loaded", () => {
    const xml = fixture("xxe.xml");
    const parsed = parseXml(new TextEncoder().encode(xml));
    if (!("doc" in parsed)) throw new Error("expected a document");
    expect(parsed.doc.root.content).not.toContain("root:");
    parsed.doc.dispose();
    const schema =
      '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a" type="xs:string"/></xs:schema>';
    const r = validate("xsd", schema, xml);
    expect(JSON.stringify(r)).not.toContain("root:");
    const a = run("assertions", { rules: [{ id: "r", expr: "true", message: "m" }] }, xml, "XML");
    expect(JSON.stringify(a)).not.toContain("root:");
  });

  test("entities declared in the document's DTD are expanded before validation (XML 1.0 §4.4.3)", () => {
    const schema = (type: string) =>
      `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a" type="${type}"/></xs:schema>`;
    const doc = '<!DOCTYPE a [<!ENTITY e "hello">]><a>&e;</a>';
    expect(validate("xsd", schema("xs:string"), doc).findings).toEqual([]);
    expect(validate("xsd", schema("xs:int"), doc).findings.map((f) => f.rule)).toEqual([
      "cvc-datatype-valid",
    ]);
    const rng =
      '<element name="a" xmlns="http://relaxng.org/ns/structure/1.0"><value>hello</value></element>';
    expect(validate("relaxng", rng, doc).findings).toEqual([]);
    expect(validate("relaxng", rng, doc.replace('"hello"', '"bye"')).findings).toHaveLength(1);
  });

  test("billion laughs finishes fast with a finding", () => {
    const xml = fixture("billion-laughs.xml");
    const t = performance.now();
    expect(codes(run("syntax", {}, xml, "XML"))).toEqual(["xml.entity_expansion_limit"]);
    expect(codes(validate("dtd", "<!ELEMENT lolz (#PCDATA)>", xml))).toEqual(["xml.entity_expansion_limit"]);
    expect(performance.now() - t).toBeLessThan(1000);
  });

  test("element nesting beyond libxml2's limit is xml.max_depth", () => {
    const xml = "<a>".repeat(300) + "</a>".repeat(300);
    expect(codes(run("syntax", {}, xml, "XML"))).toContain("xml.max_depth");
  });
});
