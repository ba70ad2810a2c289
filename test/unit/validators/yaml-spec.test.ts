// YAML read as YAML 1.2.2 says, where the yaml library (or our reader around it) did otherwise:
// findings of the syntax step and of the steps that read a YAML document's value.
import { describe, expect, test } from "bun:test";
import { run } from "./helpers.ts";

/** [severity, code, message, path, line, column] of each finding. */
const all = (slug: string, config: Record<string, unknown>, doc: string) =>
  run(slug, config, doc, "YAML").findings.map((f) => [
    f.severity,
    f.code,
    f.message,
    f.path,
    f.line,
    f.column,
  ]);
const syntax = (doc: string) => all("syntax", {}, doc);

describe("a core tag with content it cannot have is an error (YAML 1.2 §10.3.2)", () => {
  test.each([
    ["a: !!int abc", 'not an integer: "abc"'],
    ["a: !!int 1.5", 'not an integer: "1.5"'],
    ["a: !!bool maybe", 'not a boolean: "maybe"'],
    ["a: !!bool yes", 'not a boolean: "yes"'],
    ["a: !!null 1", 'not a null: "1"'],
    ["a: !!float x", 'not a float: "x"'],
  ])("%p: an error where the tag is (was an Unresolved tag warning)", (doc, message) => {
    expect(syntax(doc)).toEqual([["error", "yaml.syntax_error", message, null, 1, 4]]);
  });
  test("json_schema no longer checks the string the node was left as", () => {
    const schema = { properties: { a: { type: "string" } } };
    expect(all("json_schema", { schema }, "a: !!int abc")).toEqual([
      ["error", "yaml.syntax_error", 'not an integer: "abc"', null, 1, 4],
    ]);
  });
  test("every form the core schema has still reads as its value", () => {
    const schema = {
      properties: {
        a: { const: 15 },
        b: { const: 31 },
        c: { const: -12 },
        d: { const: true },
        e: { const: false },
        f: { const: null },
        g: { const: null },
        h: { const: 12 },
      },
    };
    const doc =
      "a: !!int 0o17\nb: !!int 0x1F\nc: !!int -12\nd: !!bool TRUE\ne: !!bool False\nf: !!null\ng: !!null ~\nh: !!int '12'\n";
    expect(all("json_schema", { schema }, doc)).toEqual([]);
    expect(syntax(doc)).toEqual([]);
  });
});
