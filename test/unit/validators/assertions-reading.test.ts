// What an assertions rule reads of a CSV header and of XML text (data.ts, xml-lists.ts).
import { beforeAll, describe, expect, test } from "bun:test";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { run } from "./helpers.ts";

// The XML engine is loaded on demand (src/validators/shared/libxml.ts), as a worker does.
beforeAll(() => loadLibxml());

/** The findings of a rule that always fails and prints the data it read from `xml`. */
const dataOf = (xml: string) =>
  run("assertions", { rules: [{ id: "t", expr: "false", message: "{{ data }}" }] }, xml, "XML").findings;

describe("CSV: a repeated header label", () => {
  test("is an error on the repeated label; rules still run, reading the last such column", () => {
    const rules = [{ id: "qty", expr: "row.qty == '2'", message: "qty {{ row.qty }}" }];
    const r = run("assertions", { rules }, "sku,qty,qty\nA,1,2\nB,3,4\n", "CSV");
    expect(r.findings).toEqual([
      {
        severity: "error",
        code: "csv.duplicate_label",
        message: 'label "qty" repeats column 2 (rules read column 3\'s value under "qty")',
        path: "/rows/1/qty",
        line: 1,
        column: 9,
        rule: null,
      },
      {
        severity: "error",
        code: "assertion.failed",
        message: "qty 4",
        path: "/rows/3",
        line: 3,
        column: 1,
        rule: "qty",
      },
    ]);
  });
});

describe("XML: text as written", () => {
  const rule = (expr: string) => [{ id: "t", expr, message: "{{ data }}" }];
  const messages = (expr: string, xml: string) =>
    run("assertions", { rules: rule(expr) }, xml, "XML").findings.map((f) => f.message);

  test("an element's text keeps its spaces (was: trimmed)", () => {
    expect(
      messages(
        "data.r.txt == '  x  ' && data.r.at['#text'] == ' y '",
        "<r><txt>  x  </txt><at k='v'> y </at></r>",
      ),
    ).toEqual([]);
  });

  test("indentation between elements is not text; mixed content keeps its spaces", () => {
    const xml = "<r>\n  <a>1</a>\n  <m>a <b>b</b> c</m>\n</r>\n";
    expect(messages("false", xml)).toEqual(['{"r": {"a": "1", "m": {"b": "b", "#text": "a  c"}}}']);
  });
});

// Fuzzing the built server (2026-11-29): fast-xml-parser's own guards judged documents libxml2 had
// accepted. An element named `prototype`, `constructor` or `__proto__` was `xml.not_well_formed`
// with the parser's "[SECURITY] Invalid name" text; `toString`, `valueOf` … were renamed
// `__toString`; 101 levels of nesting, an entity of more than 10,000 characters or entities
// expanding past 100,000 were "not well-formed" too.
describe("XML: what libxml2 accepts, rules read", () => {
  const rule = (expr: string) => [{ id: "t", expr, message: "{{ data }}" }];
  const findings = (expr: string, xml: string, lists: unknown = "auto") =>
    run("assertions", { rules: rule(expr), xml: { lists } }, xml, "XML").findings;

  test("elements named like JavaScript's object members are ordinary keys", () => {
    const xml =
      "<r><prototype>1</prototype><constructor>2</constructor><__proto__>3</__proto__>" +
      "<toString>4</toString><valueOf k='v'>5</valueOf><hasOwnProperty/></r>";
    expect(findings("false", xml)[0]!.message).toBe(
      '{"r": {"prototype": "1", "constructor": "2", "__proto__": "3", "toString": "4", ' +
        '"valueOf": {"#text": "5", "@k": "v"}, "hasOwnProperty": ""}}',
    );
    const all =
      "data.r.prototype == '1' && data.r.constructor == '2' && data.r.__proto__ == '3' && " +
      "data.r.toString == '4' && data.r.valueOf['#text'] == '5'";
    expect(findings(all, xml)).toEqual([]);
  });

  test("xml.lists names them by their own names; a root named constructor", () => {
    expect(
      findings("size(data.constructor.prototype) == 1", "<constructor><prototype/></constructor>", [
        "constructor/prototype",
      ]),
    ).toEqual([]);
  });

  test("nesting up to libxml2's bound is read", () => {
    const xml = "<a>".repeat(200) + "x" + "</a>".repeat(200);
    expect(findings("has(data.a)", xml)).toEqual([]);
  });

  test("entities past the parser's own limits are read as libxml2 expands them", () => {
    const big = "x".repeat(20_000);
    const one = `<!DOCTYPE a [<!ENTITY e "${big}">]><a>&e;</a>`;
    expect(findings("size(data.a) == 20000", one)).toEqual([]);
    const many = `<!DOCTYPE a [<!ENTITY e "${"y".repeat(9_000)}">]><a>${"&e;".repeat(20)}</a>`;
    expect(findings("size(data.a) == 180000", many)).toEqual([]);
  });
});

// 2026-11-29: fast-xml-parser read the document's DTD itself and refused what XML allows there,
// so a document every other step accepted was `xml.not_well_formed` ("External entities are not
// supported", "Invalid entity name %"); an entity holding elements became text.
describe("XML: a document with a DTD is read as libxml2 expands it", () => {
  const data = (xml: string) => dataOf(xml).map((f) => `${f.code} ${f.message}`);

  test("an external entity's declaration: the entity stands for nothing, as in every step", () => {
    expect(data('<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]><a>x&e;y</a>')).toEqual([
      'assertion.failed {"a": "xy"}',
    ]);
  });

  test("a parameter entity declaring a general one", () => {
    expect(data("<!DOCTYPE a [<!ENTITY % p \"<!ENTITY e 'x'>\">%p;]><a>&e;</a>")).toEqual([
      'assertion.failed {"a": "x"}',
    ]);
  });

  test("an entity holding elements is elements; attribute values keep what the entity gives", () => {
    expect(
      data("<!DOCTYPE a [<!ENTITY e \"<b>x</b><c k='&amp;'/>\"><!ENTITY v \"w\">]><a k='&v;'>&e;&e;</a>"),
    ).toEqual(['assertion.failed {"a": {"b": ["x", "x"], "c": [{"@k": "&"}, {"@k": "&"}], "@k": "w"}}']);
  });
});

// 2026-11-29: fast-xml-parser decodes character references only with its htmlEntities option, so
// `<qty>&#49;0</qty>` was the string "&#49;0" to every rule.
describe("XML: character references are the characters they name", () => {
  const data = (xml: string) => dataOf(xml).map((f) => f.message);

  test("in text and attributes; escaped ones and CDATA stay as written", () => {
    expect(data("<a k='&#65;&amp;#66;'>&#49;0 &#x1F600; &amp;#65; &amp;nbsp; <![CDATA[&#65;]]></a>")).toEqual(
      ['{"a": {"#text": "10 😀 &#65; &nbsp; &#65;", "@k": "A&#66;"}}'],
    );
    expect(data("<a>&#13;&#10;</a>")).toEqual(['{"a": "\\r\\n"}']);
  });
});

// 2026-11-29: an attribute value keeps no tab or line break written in it (XML 1.0 §3.3.3: each is
// a space), as Schematron's XPath reads it; fast-xml-parser kept them.
describe("XML: attribute values are normalized as XML says", () => {
  const data = (xml: string) => dataOf(xml).map((f) => f.message);

  test("a tab, a line break or CR LF in a value is a space; a character reference stays what it names", () => {
    expect(data('<a x="a\tb\nc\r\nd" y="1&#10;2">t</a>')).toEqual([
      '{"a": {"#text": "t", "@x": "a b c d", "@y": "1\\n2"}}',
    ]);
  });
});
