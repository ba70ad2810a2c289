// A workflow file's numbers that JSON cannot carry (YAML's .inf and .nan, 1e400): refused when the
// file is read, as the API refuses 1e400 (docs/limits.md). `assay workflows apply` sent them as
// JSON, where they became null: a config of `const: .inf` was saved as `const: null`.
import { expect, test } from "bun:test";
import { DocumentError, parseDocument } from "../../../src/workflows/document.ts";

const MESSAGE =
  "A step config may not hold .inf, .nan or a number beyond a 64-bit float's range (such as 1e400): JSON cannot carry one.";
const yaml = (value: string) =>
  `slug: x\nname: X\nallowed_file_types: [JSON]\nsteps:\n  - name: ok\n    validator: json_schema\n    config: {schema: {type: number}}\n  - name: s\n    validator: json_schema\n    config:\n      schema: {const: ${value}}\n`;

for (const [what, text] of [
  ["YAML .inf", yaml(".inf")],
  ["YAML -.inf", yaml("-.inf")],
  ["YAML .nan", yaml(".nan")],
  ["1e400 in YAML", yaml("1e400")],
  [
    "1e400 in JSON",
    '{"slug":"x","name":"X","allowed_file_types":["JSON"],"steps":[{"name":"ok","validator":"json_schema","config":{}},{"name":"s","validator":"json_schema","config":{"schema":{"const":1e400}}}]}',
  ],
] as const)
  test(`${what}: refused on steps[1].config`, () => {
    let caught: unknown;
    try {
      parseDocument(text);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(DocumentError);
    expect((caught as DocumentError).items).toEqual([
      { field: "steps[1].config", code: "invalid", message: MESSAGE },
    ]);
  });

test("a large finite number is read as written", () => {
  expect(parseDocument(yaml("1.5e308")).steps?.[1]?.config).toEqual({ schema: { const: 1.5e308 } });
});
