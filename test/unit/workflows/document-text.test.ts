// `assay workflows export` writes YAML that YAML 1.1 readers (PyYAML, older Ruby and Go
// libraries) read as Assay does: NEL (U+0085), the line and paragraph separators (U+2028, U+2029)
// are line breaks there, and a byte order mark (U+FEFF) may stand only in a quoted scalar (YAML
// 1.2 §5.2). A description or config holding one was written raw, in a plain scalar: PyYAML read
// "m: \u2028 # \u0085 x" as "m:\u2028# x". Now such a string is double-quoted, those characters
// escaped (\N, \L, \P, \uFEFF), and the document reads back the same.
import { expect, test } from "bun:test";
import YAML from "yaml";
import { stringifyDocument } from "../../../src/workflows/document.ts";

const doc = {
  slug: "w",
  description: "a\u2028b\u2029c\u0085d \ufeffe\\\u2028f\nsecond line",
  steps: [
    {
      name: "s",
      config: { rules: [{ id: "r", message: "m: \u2028 # \u0085 x", expr: "true" }], "k\u2028ey": "\ufeff" },
    },
  ],
};

test("no NEL, line or paragraph separator or byte order mark is written raw; each is escaped", () => {
  const text = stringifyDocument(doc, "yaml");
  expect(/[\u0085\u2028\u2029\ufeff]/.test(text)).toBe(false);
  expect(text).toContain('description: "a\\Lb\\Pc\\Nd \\uFEFFe\\\\\\Lf\\nsecond line"');
  expect(text).toContain('"k\\Ley": "\\uFEFF"');
});

test("the document reads back as it was", () => {
  expect(YAML.parse(stringifyDocument(doc, "yaml"))).toEqual(doc);
});

test("text without them is written as before", () => {
  const plain = { slug: "w", description: "é 😀 \u05d0\u200f", n: 1 };
  expect(stringifyDocument(plain, "yaml")).toBe(YAML.stringify(plain, { lineWidth: 0 }));
});
