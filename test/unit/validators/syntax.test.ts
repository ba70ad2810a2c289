import { beforeAll, describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH } from "../../../src/validators/limits.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { brief, codes, run } from "./helpers.ts";

// The XML engine is loaded on demand (src/validators/shared/libxml.ts), as a worker does.
beforeAll(() => loadLibxml());

const syntax = (text: string | Uint8Array, type: Parameters<typeof run>[3]) => run("syntax", {}, text, type);

describe("syntax: JSON", () => {
  test("valid JSON passes", () => {
    expect(syntax('{"a": [1, 2, {"b": null}]}', "JSON").findings).toEqual([]);
  });
  test("missing comma is json.syntax_error at the token", () => {
    expect(brief(syntax('{\n  "a": 1\n  "b": 2\n}', "JSON"))).toEqual([
      { code: "json.syntax_error", line: 3, column: 3 },
    ]);
  });
  test("trailing comma is rejected with a clear message", () => {
    const r = syntax('{"a": 1,\n}', "JSON");
    expect(brief(r)).toEqual([{ code: "json.syntax_error", line: 2, column: 1 }]);
    expect(r.findings[0].message).toContain("trailing comma");
  });
  test("comments are rejected", () => {
    const r = syntax('{\n  // no\n  "a": 1}', "JSON");
    expect(brief(r)).toEqual([{ code: "json.syntax_error", line: 2, column: 3 }]);
    expect(r.findings[0].message).toContain("comments");
  });
  test("empty document and unterminated string", () => {
    expect(codes(syntax("", "JSON"))).toEqual(["json.syntax_error"]);
    expect(brief(syntax('["abc', "JSON"))).toEqual([{ code: "json.syntax_error", line: 1, column: 2 }]);
  });
  test("a UTF-8 BOM is tolerated", () => {
    expect(syntax('\ufeff{"a": 1}', "JSON").findings).toEqual([]);
  });
  test("a second byte order mark is not JSON (the decoder takes only the first off)", () => {
    const bom = [0xef, 0xbb, 0xbf];
    const doc = [...new TextEncoder().encode('{"a": 1}')];
    expect(syntax(new Uint8Array([...bom, ...doc]), "JSON").findings).toEqual([]);
    const r = syntax(new Uint8Array([...bom, ...bom, ...doc]), "JSON");
    expect(r.findings.map((f) => [f.code, f.severity, f.line, f.column, f.message])).toEqual([
      ["json.syntax_error", "error", 1, 1, "a second byte order mark (U+FEFF) after the first is not JSON"],
    ]);
  });
  test("every duplicate key is reported up to max_findings, and one more marks the step truncated", () => {
    const keys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i % 2}": ${i}`).join(",\n")}}`;
    // 151 properties under two names: 149 duplicates, more than the old cap of 100.
    const all = syntax(keys(151), "JSON");
    expect(all.findings.length).toBe(149);
    expect(all.truncated).toBe(false);
    expect(all.findings.at(-1)?.line).toBe(151);
    const capped = run("syntax", { max_findings: 120 }, keys(151), "JSON");
    expect(capped.findings.length).toBe(120);
    expect(capped.truncated).toBe(true);
    const exact = run("syntax", { max_findings: 149 }, keys(151), "JSON");
    expect([exact.findings.length, exact.truncated]).toEqual([149, false]);
  });
  test("duplicate keys are a warning, with the path of the member they name", () => {
    const r = syntax('{"a": 1,\n "a": 2}', "JSON");
    expect(r.findings.map((f) => [f.code, f.severity, f.line, f.column, f.path])).toEqual([
      ["json.duplicate_key", "warning", 2, 2, "/a"],
    ]);
    // Nested, inside an array, and keys that need RFC 6901 escaping.
    const nested = syntax('{"x": [{"k/~": 1, "k/~": 2}], "y": {"z": {"q": 1, "q": 2}}}', "JSON");
    expect(nested.findings.map((f) => f.path)).toEqual(["/x/0/k~1~0", "/y/z/q"]);
  });
  test("hostile nesting is json.max_depth, not a stack overflow", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    expect(brief(syntax(deep, "JSON"))).toEqual([
      { code: "json.max_depth", line: 1, column: MAX_JSON_DEPTH + 1 },
    ]);
  });
});

describe("syntax: YAML", () => {
  test("valid multi-document YAML passes", () => {
    expect(syntax("a: 1\n---\nb: [1, 2]\n", "YAML").findings).toEqual([]);
  });
  test("bad indentation is yaml.syntax_error with position", () => {
    expect(brief(syntax("a:\n  - b\n c: 1\n", "YAML"))).toEqual([
      { code: "yaml.syntax_error", line: 3, column: 1 },
    ]);
  });
  test("duplicate keys are errors", () => {
    const r = syntax("name: a\nage: 3\nname: b\n", "YAML");
    expect(brief(r)).toEqual([{ code: "yaml.syntax_error", line: 3, column: 1 }]);
    expect(r.findings[0].message).toContain("duplicate key");
  });
  test("keys are duplicates when tag and canonical value agree (YAML 1.2 §3.2.1.3), not their JS values", () => {
    const dup = (text: string) => brief(syntax(text, "YAML"));
    // !!int 1 and !!float 1.0 are different nodes; so are !!int 1 and !!str "1".
    expect(dup("1: a\n1.0: b\n")).toEqual([]);
    expect(dup("1: a\n'1': b\n")).toEqual([]);
    // Read as 1.2 whatever the directive says (only the version is warned about).
    expect(dup("%YAML 1.1\n---\n1: a\n1.0: b\n")).toEqual([
      { code: "yaml.syntax_error", line: 1, column: 7 },
    ]);
    // Integers past 2^53 are told apart by their digits, not their rounded doubles.
    expect(dup("9007199254740993: a\n9007199254740992: b\n")).toEqual([]);
    // The same tag and canonical value, however written, is a duplicate.
    for (const text of [
      'a: 1\n"a": 2\n',
      "1: a\n0x1: b\n",
      "~: a\nnull: b\n",
      "1.0: a\n1e0: b\n",
      "!!str 1: a\n'1': b\n",
    ])
      expect(dup(text)).toEqual([{ code: "yaml.syntax_error", line: 2, column: 1 }]);
  });
  test("unterminated quote", () => {
    expect(codes(syntax('key: "open\n', "YAML"))).toContain("yaml.syntax_error");
  });
  test("alias bomb is yaml.alias_limit", () => {
    const levels = ["a: &a [x,x,x,x,x,x,x,x,x,x]"];
    for (const [n, p] of [
      ["b", "a"],
      ["c", "b"],
      ["d", "c"],
      ["e", "d"],
    ])
      levels.push(`${n}: &${n} [${`*${p},`.repeat(9)}*${p}]`);
    expect(codes(syntax(`${levels.join("\n")}\n`, "YAML"))).toEqual(["yaml.alias_limit"]);
  });
  test("unresolved alias", () => {
    expect(codes(syntax("a: *nope\n", "YAML"))).toEqual(["yaml.syntax_error"]);
  });
  // Thousands of levels used to overflow yaml's recursive composer, which reported the engine's
  // "Maximum call stack size exceeded." as yaml.syntax_error at a column that depended on the stack
  // left. The depth is now bounded while parsing, before anything recurses (shared/yaml.ts).
  const maxDepth = (line: number, column: number) => [
    {
      severity: "error" as const,
      code: "yaml.max_depth",
      message: `nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
      path: null,
      line,
      column,
      rule: null,
    },
  ];
  const blockMaps = (n: number) =>
    `${Array.from({ length: n }, (_, i) => `${" ".repeat(i)}a:`).join("\n")} 1\n`;
  test.each([
    ["flow sequences", (n: number) => "[".repeat(n) + "]".repeat(n), 20_000, 1, MAX_JSON_DEPTH + 1],
    ["flow maps", (n: number) => `${"{a: ".repeat(n)}1${"}".repeat(n)}`, 20_000, 1, 4 * MAX_JSON_DEPTH + 1],
    ["compact block sequences", (n: number) => `${"- ".repeat(n)}1\n`, 20_000, 1, 2 * MAX_JSON_DEPTH + 1],
    // 2,500 levels of indentation are 3 million spaces, under ASSAY_MAX_YAML_BYTES (4 MiB).
    ["indented block maps", blockMaps, 2500, MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH + 1],
  ])(
    "%s: 512 levels pass; 513 and thousands are yaml.max_depth at the 513th",
    (_, make, deep, line, column) => {
      expect(syntax(make(MAX_JSON_DEPTH), "YAML").findings).toEqual([]);
      for (const n of [MAX_JSON_DEPTH + 1, deep]) {
        expect(syntax(make(n), "YAML").findings).toEqual(maxDepth(line, column));
        // Every validator that reads YAML says the same.
        expect(run("json_schema", { schema: {} }, make(n), "YAML").findings).toEqual(maxDepth(line, column));
      }
    },
  );
  test("8,000 levels of indentation, 32 million spaces (enough to overflow yaml's composer), are not parsed at all", () => {
    const r = syntax(blockMaps(8000), "YAML");
    expect([r.findings.length, r.findings[0]?.code, r.findings[0]?.line]).toEqual([1, "yaml.too_large", 1]);
  });
  test("a deep document after a good one in a stream: the stream is refused", () => {
    const text = `a: 1\n---\n${"[".repeat(20_000)}${"]".repeat(20_000)}\n`;
    expect(syntax(text, "YAML").findings).toEqual(maxDepth(3, MAX_JSON_DEPTH + 1));
  });
});

describe("syntax: XML", () => {
  test("well-formed XML passes", () => {
    expect(syntax('<?xml version="1.0"?>\n<a x="1"><b/></a>', "XML").findings).toEqual([]);
  });
  test("unclosed tag", () => {
    expect(brief(syntax("<a>\n  <b>x</a>", "XML"))).toEqual([
      { code: "xml.not_well_formed", line: 2, column: 11 },
    ]);
  });
  test("undefined entity", () => {
    const r = syntax("<a>&foo;</a>", "XML");
    expect(brief(r)).toEqual([{ code: "xml.not_well_formed", line: 1, column: 9 }]);
    expect(r.findings[0].message).toContain("foo");
  });
  test("duplicate attribute", () => {
    expect(brief(syntax('<a x="1" x="2"/>', "XML"))).toEqual([
      { code: "xml.not_well_formed", line: 1, column: 15 },
    ]);
  });
  test("invalid UTF-8 bytes", () => {
    const bytes = new Uint8Array([0x3c, 0x61, 0x3e, 0xc3, 0x28, 0x3c, 0x2f, 0x61, 0x3e]);
    const r = syntax(bytes, "XML");
    expect(brief(r)).toEqual([{ code: "xml.not_well_formed", line: 1, column: 4 }]);
    expect(r.findings[0].message).toContain("encoding");
  });
  test("an encoding declaration is honoured", () => {
    const head = new TextEncoder().encode('<?xml version="1.0" encoding="ISO-8859-1"?><a>');
    const bytes = new Uint8Array([...head, 0xe9, ...new TextEncoder().encode("</a>")]);
    expect(syntax(bytes, "XML").findings).toEqual([]);
  });
  test("several errors are all reported", () => {
    expect(codes(syntax("<a><b></c><d x='1' x='2'/></a>", "XML")).length).toBeGreaterThanOrEqual(2);
  });
  test("empty document", () => {
    expect(codes(syntax("", "XML"))).toEqual(["xml.not_well_formed"]);
  });
});

describe("syntax: CSV", () => {
  test("valid CSV passes, ragged rows included (not a syntax matter)", () => {
    expect(syntax('a,b\n1,"x, y"\n3\n4,5,6\n', "CSV").findings).toEqual([]);
  });
  test("unclosed quote points at the opening quote", () => {
    expect(brief(syntax('a,b\n1,"2\n3,4\n', "CSV"))).toEqual([
      { code: "csv.syntax_error", line: 2, column: 3 },
    ]);
  });
  test("stray quote inside an unquoted field", () => {
    expect(brief(syntax('a,b\n1,2"x\n', "CSV"))).toEqual([{ code: "csv.syntax_error", line: 2, column: 4 }]);
  });
  test("text after a closing quote", () => {
    expect(brief(syntax('a,b\n1,"2"x\n', "CSV"))).toEqual([{ code: "csv.syntax_error", line: 2, column: 6 }]);
  });
  test("TSV is detected from the first line", () => {
    expect(syntax('a\tb\n1\t"x\ty"\n', "CSV").findings).toEqual([]);
  });
});

describe("syntax: TEXT", () => {
  test("valid UTF-8 passes", () => {
    expect(syntax("héllo\nwörld\n", "TEXT").findings).toEqual([]);
  });
  test("invalid UTF-8 is text.encoding_error at the bad byte", () => {
    const bytes = new Uint8Array([0x61, 0x0a, 0x62, 0xc3, 0xa9, 0xff, 0x63]);
    expect(brief(syntax(bytes, "TEXT"))).toEqual([{ code: "text.encoding_error", line: 2, column: 3 }]);
  });
});

// Fuzzing the built server (2026-11-29): two attributes the document's own DTD declares of type ID
// with one value break XML 1.0's VC: ID, a validity constraint, yet every XML step said
// `xml.not_well_formed` (libxml2 records the redefinition as an error even when not validating).
describe("XML: a repeated ID is a validity problem, not a well-formedness one", () => {
  const doc = '<!DOCTYPE a [<!ATTLIST b id ID #IMPLIED>]><a><b id="x"/><b id="x"/></a>';
  const detail = (r: ReturnType<typeof syntax>) =>
    r.findings.map((f) => ({
      severity: f.severity,
      code: f.code,
      message: f.message,
      rule: f.rule,
      line: f.line,
      column: f.column,
    }));

  test("syntax: a warning at the second ID", () => {
    expect(detail(syntax(doc, "XML"))).toEqual([
      {
        severity: "warning",
        code: "xml.warning",
        message: "ID x already defined",
        rule: "xml:parser-warning",
        line: 1,
        column: 66,
      },
    ]);
  });

  test("a DTD step judges it (VC: ID), an XSD step by its own types, assertions read the data", () => {
    const dtd = "<!ELEMENT a (b*)><!ELEMENT b EMPTY><!ATTLIST b id ID #IMPLIED>";
    expect(
      run("xml_schema", { schema_type: "dtd", schema: dtd }, doc, "XML").findings.map((f) => [
        f.code,
        f.rule,
      ]),
    ).toEqual([["xml.schema_violation", "VC: ID"]]);
    const xsd =
      '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a"><xs:complexType>' +
      '<xs:sequence><xs:element name="b" maxOccurs="unbounded"><xs:complexType><xs:attribute name="id" ' +
      'type="xs:ID"/></xs:complexType></xs:element></xs:sequence></xs:complexType></xs:element></xs:schema>';
    expect(
      run("xml_schema", { schema_type: "xsd", schema: xsd }, doc, "XML").findings.map((f) => [
        f.code,
        f.rule,
      ]),
    ).toEqual([["xml.schema_violation", "cvc-datatype-valid"]]);
    const rules = [{ id: "n", expr: "size(data.a.b) == 2", message: "m" }];
    expect(run("assertions", { rules }, doc, "XML").findings).toEqual([]);
  });

  test("beside a real well-formedness error it stays a warning", () => {
    const broken = doc.replace("</a>", "<b></a>");
    expect(syntax(broken, "XML").findings.map((f) => [f.severity, f.code])).toEqual([
      ["warning", "xml.warning"],
      ["error", "xml.not_well_formed"],
    ]);
  });
});
