// A JSON syntax error inside a string is located at the character that breaks it, as the XML and
// YAML parsers locate theirs, not at the string's opening quote (jsonc-parser's offset): a tab in
// a 10,000-character line was reported at the line's start. Columns in UTF-16 code units, as every
// position (docs/validators.md): the emoji before each counts two.
import { expect, test } from "bun:test";
import { type JsonProblem, parseJson } from "../../../src/validators/shared/json.ts";

test.each([
  ['{"a": "😀x\u0001"}', 1, 11, "control characters in strings must be escaped"],
  ['{"a": "😀\\t\\"\tz"}', 1, 14, "control characters in strings must be escaped"],
  ['{"a": 1,\n "b": "😀\\q"}', 2, 10, "invalid escape sequence"],
  ['{"a": "\\\\q\\x"}', 1, 11, "invalid escape sequence"],
  ['["😀\\u12zz"]', 1, 5, "invalid \\u escape"],
  ['["\\u0041\\u00e"]', 1, 9, "invalid \\u escape"],
  // A raw line break is a control character too (jsonc-parser ends the string there and named the
  // opening quote "unterminated", though the string closes on the next line).
  ['{"a": "x", "b": "😀\nz"}', 1, 20, "control characters in strings must be escaped"],
  ['{"a": "x\r\ny"}', 1, 9, "control characters in strings must be escaped"],
  ['{"a":\r "x\ry"}', 2, 4, "control characters in strings must be escaped"],
  ['["abc\n', 1, 6, "control characters in strings must be escaped"],
  ['["abc', 1, 2, "unterminated string"],
  ['["a\\"', 1, 2, "unterminated string"],
])("%j: line %p, column %p", (text, line, column, message) => {
  const r = parseJson(text) as JsonProblem;
  expect({ code: r.code, message: r.message, position: r.position }).toEqual({
    code: "json.syntax_error",
    message,
    position: { line, column },
  });
});
