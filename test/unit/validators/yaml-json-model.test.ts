// What JSON Schema and CEL see of a YAML document: JSON's values, nothing else. yaml resolved
// YAML 1.1's explicit tags (!!omap, !!set, !!timestamp, !!binary) to a Map, a Set, a Date or
// bytes, which JSON Schema took for an empty object: `!!omap [x: 100, evil: 1]` passed
// `additionalProperties: false` with `x` at most 5. Numbers that are not finite (`.inf`, `.nan`,
// 1e400 in YAML or JSON) skipped `maximum`/`minimum` (typebox, like Ajv, takes them for no number).
import { describe, expect, test } from "bun:test";
import { run } from "./helpers.ts";

const STRICT = {
  type: "object",
  properties: { x: { type: "number", maximum: 5 } },
  additionalProperties: false,
};
const BOUNDED = { properties: { a: { maximum: 5, minimum: 0 } } };
const unsupported = (message: string, path: string, line: number, column: number) => ({
  severity: "error" as const,
  code: "json_schema.unsupported_number",
  message: `${message}: the document was not checked`,
  path,
  line,
  column,
  rule: null,
});
const BEYOND = "a number beyond ±1.8e308 (or .inf, -.inf) cannot be compared";

describe("YAML 1.1 tags are not resolved to values JSON has no word for", () => {
  test("!!omap is the sequence it is written as: not an object that passes every object rule", () => {
    const r = run("json_schema", { schema: STRICT }, "!!omap [x: 100, evil: 1]", "YAML");
    expect(r.findings.map((f) => [f.code, f.message, f.path])).toEqual([
      ["json_schema.type", "must be object", ""],
    ]);
  });
  test("!!set is the mapping it is written as; !!timestamp and !!binary are their text", () => {
    const schema = {
      type: "object",
      properties: {
        s: { type: "object", required: ["a"] },
        t: { type: "string", const: "2020-01-01" },
        b: { type: "string", const: "aGVsbG8=" },
      },
    };
    const doc = "s: !!set {a, b}\nt: !!timestamp 2020-01-01\nb: !!binary aGVsbG8=\n";
    expect(run("json_schema", { schema }, doc, "YAML").findings).toEqual([]);
  });
  test("CEL sees the same: an !!omap is a list", () => {
    const rules = [{ id: "list", expr: "type(data) == list && size(data) == 2", message: "not a list" }];
    expect(run("assertions", { rules }, "!!omap [a: 1, b: 2]", "YAML").findings).toEqual([]);
  });
  test("the syntax step says the tag is not resolved (a warning)", () => {
    const r = run("syntax", {}, "!!omap [a: 1]", "YAML");
    expect(r.findings.map((f) => [f.severity, f.code, f.message])).toEqual([
      ["warning", "yaml.syntax_error", "Unresolved tag: tag:yaml.org,2002:omap"],
    ]);
  });
});

describe("an explicit !!float reads as YAML 1.2's core schema says", () => {
  test('!!float 1 is the number 1 (was the string "1" and an Unresolved tag warning)', () => {
    const schema = { properties: { a: { type: "number", maximum: 5 } } };
    expect(run("json_schema", { schema }, "a: !!float 1", "YAML").findings).toEqual([]);
    const over = run("json_schema", { schema }, "a: !!float 7e0", "YAML");
    expect(over.findings.map((f) => [f.code, f.message])).toEqual([["json_schema.maximum", "must be <= 5"]]);
  });
  test("a !!float that is no float is a syntax error; !!float 1 and 1.0 are the same key", () => {
    expect(run("syntax", {}, "a: !!float abc", "YAML").findings.map((f) => [f.code, f.message])).toEqual([
      ["yaml.syntax_error", 'not a float: "abc"'],
    ]);
    expect(run("syntax", {}, "{!!float 1: x, 1.0: y}", "YAML").findings.map((f) => f.message)).toEqual([
      "duplicate key: Map keys must be unique",
    ]);
  });
});

describe("keys YAML keeps apart but JSON cannot", () => {
  /** The one error a document gets for its keys (no path: the data was not read as JSON). */
  const keyError = (code: string, message: string, line: number, column: number) => ({
    severity: "error" as const,
    code,
    message: `${message}: the data was not checked`,
    path: null,
    line,
    column,
    rule: null,
  });
  const collision = (first: string, second: string, line: number, column: number) =>
    keyError(
      "yaml.key_collision",
      `the keys ${first} and ${second} are different YAML keys but one JSON property name`,
      line,
      column,
    );
  const notScalar = (key: string, kind: string, line: number, column: number) =>
    keyError(
      "yaml.key_not_scalar",
      `the key ${key} is a ${kind}, which has no JSON property name`,
      line,
      column,
    );
  test('1 and "1": one finding at the second, not the last value kept silently', () => {
    const schema = { properties: { "1": { const: "b" } } };
    expect(run("json_schema", { schema }, '{1: a, "1": b}', "YAML").findings).toEqual([
      collision("1", '"1"', 1, 8),
    ]);
    const rules = [{ id: "r", expr: "true", message: "m" }];
    expect(run("assertions", { rules }, "x:\n  true: 1\n  'true': 2\n", "YAML").findings).toEqual([
      collision("true", "'true'", 3, 3),
    ]);
  });
  test("valid YAML all the same: the syntax step passes it", () => {
    expect(run("syntax", {}, '{1: a, "1": b}', "YAML").findings).toEqual([]);
    expect(run("syntax", {}, "? [a, b]\n: 1\n", "YAML").findings).toEqual([]);
  });
  test("a key that is a sequence or mapping: one finding at it, not a name yaml made up", () => {
    // yaml's toJS named `? [a, b]` "[ a, b ]": `propertyNames: {pattern: "^\\[ a"}` passed it.
    const schema = { propertyNames: { pattern: "^\\[ a" } };
    expect(run("json_schema", { schema }, "ok: 1\n? [a, b]\n: 1\n", "YAML").findings).toEqual([
      notScalar("[a, b]", "sequence", 2, 3),
    ]);
    const rules = [{ id: "r", expr: "true", message: "m" }];
    expect(run("assertions", { rules }, "x:\n  ? {k: v}\n  : 2\n", "YAML").findings).toEqual([
      notScalar("{k: v}", "mapping", 2, 5),
    ]);
  });
});

describe("numbers that are not finite are a finding, never a pass", () => {
  test.each([
    ["YAML", "a: .inf", "/a", 1, 4],
    ["YAML", "x: 1\na: -.inf", "/a", 2, 4],
    ["YAML", "a: 1e400", "/a", 1, 4],
    ["JSON", '{"a": 1e400}', "/a", 1, 7],
    ["JSON", '{"b": [1, {"x~/": -1e400}]}', "/b/1/x~0~1", 1, 19],
  ] as const)("%s %p", (fileType, doc, path, line, column) => {
    expect(run("json_schema", { schema: BOUNDED }, doc, fileType).findings).toEqual([
      unsupported(BEYOND, path, line, column),
    ]);
  });
  test(".nan", () => {
    expect(run("json_schema", { schema: BOUNDED }, "a: .nan", "YAML").findings).toEqual([
      unsupported("NaN (.nan) is not a JSON number", "/a", 1, 4),
    ]);
  });
  test("every document of a stream on its own; finite numbers as before", () => {
    const r = run("json_schema", { schema: BOUNDED }, "a: 7\n---\na: .inf\n---\na: 3\n", "YAML");
    expect(r.findings.map((f) => [f.code, f.line])).toEqual([
      ["json_schema.maximum", 1],
      ["json_schema.unsupported_number", 3],
    ]);
  });
});

describe("a lone CR breaks YAML lines, as YAML 1.2 §5.4 says", () => {
  // yaml knows CR LF and LF only: a file with classic Mac line ends was one line and a syntax error.
  const schema = {
    type: "object",
    properties: { b: { type: "integer" }, text: { const: "one\ntwo\n" }, folded: { const: "x y" } },
  };
  test("the same findings at the same lines as with LF or CR LF", () => {
    const at = (eol: string) =>
      run(
        "json_schema",
        { schema },
        ["a: 1", "b: x", "text: |", "  one", "  two", 'folded: "x', '  y"', ""].join(eol),
        "YAML",
      ).findings.map((f) => [f.code, f.path, f.line, f.column]);
    const lf = at("\n");
    expect(lf).toEqual([["json_schema.type", "/b", 2, 4]]);
    expect(at("\r")).toEqual(lf);
    expect(at("\r\n")).toEqual(lf);
    expect(run("syntax", {}, "a: 1\rb: [1,\r 2]\r", "YAML").findings).toEqual([]);
  });
  test("a syntax error after lone CRs is on its own line", () => {
    expect(run("syntax", {}, "a: 1\rb: [\r", "YAML").findings.map((f) => [f.code, f.line])).toEqual([
      ["yaml.syntax_error", 3],
    ]);
  });
});
