import { describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH } from "../../../src/validators/limits.ts";
import {
  FindingCollector,
  finding,
  pointerJoin,
  pointerSegments,
} from "../../../src/validators/shared/findings.ts";
import {
  depthExceededAt,
  isJsonProblem,
  jsonPointerOffset,
  parseJson,
} from "../../../src/validators/shared/json.ts";
import { LineIndex } from "../../../src/validators/shared/position.ts";
import { bytePosition, firstInvalidUtf8 } from "../../../src/validators/shared/utf8.ts";
import { parseYaml, yamlPointerOffset, yamlValue } from "../../../src/validators/shared/yaml.ts";
import { run } from "./helpers.ts";

describe("positions", () => {
  test("LineIndex handles \\n, \\r\\n and lone \\r", () => {
    const idx = new LineIndex("a\nbc\r\nd\re");
    expect([0, 2, 3, 6, 8].map((o) => idx.position(o))).toEqual([
      { line: 1, column: 1 },
      { line: 2, column: 1 },
      { line: 2, column: 2 },
      { line: 3, column: 1 },
      { line: 4, column: 1 },
    ]);
  });
  test("UTF-8 validation: overlongs, surrogates, truncation", () => {
    expect(firstInvalidUtf8(new TextEncoder().encode("héllo 🙂"))).toBe(-1);
    expect(firstInvalidUtf8(new Uint8Array([0x61, 0xc0, 0xaf]))).toBe(1); // overlong "/"
    expect(firstInvalidUtf8(new Uint8Array([0xed, 0xa0, 0x80]))).toBe(0); // UTF-16 surrogate
    expect(firstInvalidUtf8(new Uint8Array([0x61, 0xf0, 0x9f]))).toBe(1); // cut short
    expect(bytePosition(new TextEncoder().encode("é\néé!"), 7)).toEqual({ line: 2, column: 3 });
  });
  test("JSON Pointer segments are escaped and unescaped", () => {
    expect(pointerJoin("/a", "b/c~d")).toBe("/a/b~1c~0d");
    expect(pointerSegments("/a/b~1c~0d")).toEqual(["a", "b/c~d"]);
  });
});

describe("JSON and YAML pointers", () => {
  test("JSON: value, key, and nearest ancestor for missing members", () => {
    const text = '{\n  "a": {"b": [10, 20]},\n  "c": 1\n}';
    const r = parseJson(text);
    if (isJsonProblem(r)) throw new Error("parse");
    const at = (p: string, key = false) => r.lines.position(jsonPointerOffset(r.tree(), p, key) ?? -1);
    expect(at("/a/b/1")).toEqual({ line: 2, column: 19 });
    expect(at("/c", true)).toEqual({ line: 3, column: 3 });
    expect(at("/a/zzz")).toEqual({ line: 2, column: 8 });
  });
  test("YAML: value and key positions", () => {
    const r = parseYaml("a:\n  b:\n    - 10\n    - 20\nc: 1\n");
    const doc = r.docs[0];
    expect(r.lines.position(yamlPointerOffset(doc, "/a/b/1") ?? -1)).toEqual({ line: 4, column: 7 });
    expect(r.lines.position(yamlPointerOffset(doc, "/c", true) ?? -1)).toEqual({ line: 5, column: 1 });
  });
  test("depth limits: JSON scan skips strings; YAML value building refuses deep documents", () => {
    expect(depthExceededAt('["[[[[[[[[[[[["]', 3)).toBe(-1);
    expect(depthExceededAt("[[[[", 3)).toBe(3);
    const deep = `${"[".repeat(MAX_JSON_DEPTH + 10)}${"]".repeat(MAX_JSON_DEPTH + 10)}`;
    // Parsing stops at the collection that goes too deep, before yaml's composer recurses.
    expect(parseYaml(deep).problems).toEqual([
      {
        code: "yaml.max_depth",
        message: `nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
        position: { line: 1, column: MAX_JSON_DEPTH + 1 },
        severity: "error",
      },
    ]);
    // `[a: …]` is a sequence holding a map: twice the levels the parser's stack shows. Building the
    // value counts them.
    const pairs = parseYaml(`${"[a: ".repeat(300)}1${"]".repeat(300)}`);
    expect(pairs.problems).toEqual([]);
    expect(yamlValue(pairs.docs[0], pairs.lines)).toMatchObject({
      code: "yaml.max_depth",
      position: { line: 1, column: (MAX_JSON_DEPTH / 2) * 4 + 1 },
    });
    expect(run("json_schema", { schema: {} }, deep, "YAML").findings.map((f) => f.code)).toEqual([
      "yaml.max_depth",
    ]);
  });
  test("depth limits: an alias reaches as deep as its anchor's node, counted where it stands", () => {
    const nest = (n: number, inner: string) => `${"[".repeat(n)}${inner}${"]".repeat(n)}`;
    // a1 is 300 levels around a0's 300: 600 in the value, each line far under the parser's bound.
    const yaml = (levels: number) => `a0: &a0 ${nest(300, "1")}\na1: ${nest(levels, "*a0")}\n`;
    const at = (text: string) => {
      const r = parseYaml(text);
      expect(r.problems).toEqual([]);
      return yamlValue(r.docs[0], r.lines);
    };
    // 1 (the root map) + 211 + 300 = 512 levels; one more is too deep, at the alias.
    expect(at(yaml(211))).not.toHaveProperty("code");
    expect(at(yaml(212))).toEqual({
      code: "yaml.max_depth",
      message: `nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
      position: { line: 2, column: 5 + 212 },
      severity: "error",
    });
    // A chain of aliases, each adding 300 levels, and an alias inside its own anchor (a cycle).
    const chain = [`a0: &a0 ${nest(300, "1")}`, `a1: &a1 ${nest(300, "*a0")}`, `a2: ${nest(300, "*a1")}`];
    expect(at(chain.join("\n"))).toMatchObject({ code: "yaml.max_depth", position: { line: 2 } });
    expect(at("a: &a [1, *a]\n")).toMatchObject({
      code: "yaml.max_depth",
      position: { line: 1, column: 11 },
    });
    // A document whose anchor is used at a shallow depth many times is not.
    expect(at(`a: &a ${nest(500, "1")}\nb: [*a, *a, *a]\n`)).not.toHaveProperty("code");
    expect(run("json_schema", { schema: {} }, yaml(212), "YAML").findings.map((f) => f.code)).toEqual([
      "yaml.max_depth",
    ]);
  });
});

describe("FindingCollector", () => {
  test("truncated only when a finding is actually dropped", () => {
    const c = new FindingCollector(2);
    expect(c.add(finding("x", "1"))).toBe(true);
    expect(c.add(finding("x", "2"))).toBe(true);
    expect(c.truncated).toBe(false);
    expect(c.add(finding("x", "3"))).toBe(false);
    expect(c.result()).toMatchObject({ truncated: true });
    expect(c.result().findings).toHaveLength(2);
  });
  test("defaults: error severity, null location", () => {
    expect(finding("a.b", "m")).toEqual({
      severity: "error",
      code: "a.b",
      message: "m",
      path: null,
      line: null,
      column: null,
      rule: null,
    });
  });
});
