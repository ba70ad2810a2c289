// The shortcuts taken for large documents change no finding: positions built on demand, the
// JSON depth proved from the parsed value, the schema compiled with only what it references, and
// csv_table's cheaper cell checks. Each is compared with the plain computation it replaces.
import { describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH } from "../../../src/validators/limits.ts";
import { parsedDepthExceededAt } from "../../../src/validators/shared/json-depth.ts";
import { depthExceededAt, isJsonProblem, parseJson } from "../../../src/validators/shared/json.ts";
import { LineIndex } from "../../../src/validators/shared/position.ts";
import { metaResources } from "../../../src/validators/json-schema/drafts.ts";
import { reachableContext } from "../../../src/validators/json-schema/resources.ts";
import { brief, codes, run } from "./helpers.ts";

/** Line starts the way LineIndex computed them eagerly, character by character. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) starts.push(i + 1);
  }
  return starts;
}

describe("positions on demand", () => {
  test("LineIndex places every offset as the character scan did", () => {
    const pieces = ["a", "\n", "\r", "\r\n", "é", "😀", "\n\r"];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let n = 0; n < 2000; n++) {
      let text = "";
      for (let i = Math.floor(next() * 12); i > 0; i--) text += pieces[Math.floor(next() * pieces.length)];
      const idx = new LineIndex(text);
      const starts = lineStarts(text);
      expect(idx.lineCount).toBe(starts.length);
      for (let o = 0; o <= text.length; o++) {
        const line = starts.findLastIndex((s) => s <= o);
        expect(idx.position(o)).toEqual({ line: line + 1, column: o - starts[line] + 1 });
      }
    }
  });
});

describe("JSON depth from the parsed value", () => {
  const nest = (n: number, inner = "1") => "[".repeat(n) + inner + "]".repeat(n);
  const depthOf = (text: string) => {
    const r = parseJson(text);
    return isJsonProblem(r) ? r : "ok";
  };
  const tooDeep = (column: number, line = 1) => ({
    code: "json.max_depth" as const,
    message: `nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
    position: { line, column },
  });

  test("the limit is exact, at the bracket the text scan names", () => {
    expect(depthOf(nest(MAX_JSON_DEPTH))).toBe("ok");
    expect(depthOf(nest(MAX_JSON_DEPTH + 1))).toEqual(tooDeep(MAX_JSON_DEPTH + 1));
    expect(depthOf(`{"a":\n ${nest(MAX_JSON_DEPTH + 5, "{}")}}`)).toEqual(tooDeep(MAX_JSON_DEPTH + 1, 2));
    // The decoder took the byte order mark off; a U+FEFF left is a second one, refused first.
    expect(depthOf(`\ufeff${nest(MAX_JSON_DEPTH + 1)}`)).toEqual({
      code: "json.syntax_error",
      message: "a second byte order mark (U+FEFF) after the first is not JSON",
      position: { line: 1, column: 1 },
    });
  });

  test("brackets in strings do not count; a deep value dropped by a duplicate key still does", () => {
    expect(depthOf(JSON.stringify(["[".repeat(2000), "{".repeat(2000)]))).toBe("ok");
    const hidden = `{"a": ${nest(MAX_JSON_DEPTH + 1)}, "a": 1}`;
    expect(depthExceededAt(hidden)).toBeGreaterThan(0);
    expect(depthOf(hidden)).toEqual(tooDeep(depthExceededAt(hidden) + 1));
  });

  test("the bracket count settles a small text; past it the value or the scan decides", () => {
    const at = (text: string, max: number) => parsedDepthExceededAt(text, JSON.parse(text), max);
    expect(at("[[1],[2]]", 3)).toBe(-1); // 3 brackets, depth 2
    expect(at("[[[1]]]", 3)).toBe(-1); // exactly at the limit
    expect(at("[[[[1]]]]", 3)).toBe(3); // one bracket more: the offset of the 4th level
    expect(at('[["[[[[", 1]]', 3)).toBe(-1); // 6 brackets, 4 of them in a string
    expect(at('[[["[", [1]]]]', 3)).toBe(8); // the 4th level, past a bracket in a string
  });

  test("too deep wins over a syntax error, before or after it", () => {
    const late = `[1,,${nest(MAX_JSON_DEPTH)}]`;
    expect(depthOf(late)).toEqual(tooDeep(depthExceededAt(late) + 1));
    expect(depthExceededAt(late)).toBe(4 + MAX_JSON_DEPTH - 1);
    expect(depthOf(nest(200_000).slice(0, -1))).toEqual(tooDeep(MAX_JSON_DEPTH + 1));
  });
});

describe("json_schema compiled with the resources it references", () => {
  const META = metaResources();

  test("no reference, no resource; references are followed from resource to resource", () => {
    expect(reachableContext({ type: "object" }, META)).toEqual({});
    expect(Object.keys(reachableContext({ $ref: "http://json-schema.org/draft-07/schema#" }, META))).toEqual([
      "http://json-schema.org/draft-07/schema",
      "http://json-schema.org/draft-07/schema#",
    ]);
    const stored = {
      "https://example.com/a.json": { $ref: "b.json" },
      "https://example.com/b.json": { items: { $ref: "https://example.com/c.json#/$defs/x" } },
      "https://example.com/c.json": { $defs: { x: { type: "string" } } },
      "https://example.com/unused.json": { unevaluatedProperties: false },
    };
    expect(Object.keys(reachableContext({ $ref: "https://example.com/a.json" }, stored)).sort()).toEqual([
      "https://example.com/a.json",
      "https://example.com/b.json",
      "https://example.com/c.json",
    ]);
  });

  test("a schema validating schemas through the meta-schema still finds their errors", () => {
    const config = { schema: { $ref: "https://json-schema.org/draft/2020-12/schema" } };
    expect(run("json_schema", config, '{"type": "object", "minLength": 2}', "JSON").findings).toEqual([]);
    // `type` is anyOf [a simple type name, an array of them]: 12 came closest to the first.
    expect(brief(run("json_schema", config, '{"type": 12}', "JSON"), true)).toEqual([
      { code: "json_schema.enum", line: 1, column: 10, path: "/type" },
    ]);
  });

  test("unevaluatedProperties in the schema itself is still enforced", () => {
    const schema = { allOf: [{ properties: { a: {} } }], unevaluatedProperties: false };
    expect(run("json_schema", { schema }, '{"a": 1}', "JSON").findings).toEqual([]);
    expect(codes(run("json_schema", { schema }, '{"a": 1, "b": 2}', "JSON"))).toEqual([
      "json_schema.unevaluatedProperties",
    ]);
  });
});

describe("csv_table cell checks", () => {
  const table = (fields: unknown[], csv: string, extra: Record<string, unknown> = {}) =>
    run("csv_table", { schema: { fields, ...extra } }, csv, "CSV");

  test("lengths count code points, not UTF-16 units", () => {
    const fields = [{ name: "s", constraints: { minLength: 2, maxLength: 3 } }];
    expect(table(fields, "s\n😀😀\n😀😀😀\nab\n").findings).toEqual([]);
    expect(brief(table(fields, "s\n😀\n😀😀😀😀\na\nabcd\n"), true)).toEqual([
      { code: "csv.constraint_error", line: 2, column: 1, path: "/rows/2/s" },
      { code: "csv.constraint_error", line: 3, column: 1, path: "/rows/3/s" },
      { code: "csv.constraint_error", line: 4, column: 1, path: "/rows/4/s" },
      { code: "csv.constraint_error", line: 5, column: 1, path: "/rows/5/s" },
    ]);
  });

  test("ISO dates: leap years, month lengths, and years below 100 as Date.UTC reads them", () => {
    const fields = [{ name: "d", type: "date" }];
    // One-digit months and days are read as Frictionless reads them (strptime "%Y-%m-%d").
    const ok = [
      "2000-02-29",
      "2024-02-29",
      "1815-12-10",
      "0004-02-29",
      "9999-12-31",
      "2024-1-01",
      "2024-2-9",
    ];
    expect(table(fields, `d\n${ok.join("\n")}\n`).findings).toEqual([]);
    const bad = [
      "1900-02-29",
      "2023-02-29",
      "2024-04-31",
      "2024-13-01",
      "2024-00-10",
      "0000-02-29",
      "2024-001-01",
    ];
    expect(codes(table(fields, `d\n${bad.join("\n")}\n`))).toEqual(bad.map(() => "csv.type_error"));
    const bounded = [{ name: "d", type: "date", constraints: { minimum: "2024-02-29" } }];
    expect(codes(table(bounded, "d\n2024-02-28\n2024-02-29\n2024-03-01\n"))).toEqual([
      "csv.constraint_error",
    ]);
  });

  test("several missing values; a required field may not use any of them", () => {
    const fields = [{ name: "n", type: "integer", constraints: { required: true } }, { name: "m" }];
    const r = table(fields, "n,m\nNA,a\n-,b\n,x\n1,\nNA,-\n", { missingValues: ["NA", "-"] });
    expect(brief(r, true)).toEqual([
      { code: "csv.constraint_error", line: 2, column: 1, path: "/rows/2/n" },
      { code: "csv.constraint_error", line: 3, column: 1, path: "/rows/3/n" },
      { code: "csv.type_error", line: 4, column: 1, path: "/rows/4/n" },
      // Every cell missing: one blank-row error instead of the cells' (Frictionless).
      { code: "csv.blank_row", line: 6, column: 1, path: "/rows/6" },
    ]);
  });

  test("a field's own missingValues override the schema's", () => {
    const fields = [
      { name: "n", type: "integer", missingValues: ["n/a"] },
      { name: "m", type: "integer" },
    ];
    const r = table(fields, "n,m\nn/a,1\nNA,n/a\n", { missingValues: ["NA"] });
    expect(brief(r, true)).toEqual([
      { code: "csv.type_error", line: 3, column: 1, path: "/rows/3/n" },
      { code: "csv.type_error", line: 3, column: 4, path: "/rows/3/m" },
    ]);
  });
});
