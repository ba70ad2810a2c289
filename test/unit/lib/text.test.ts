import { expect, test } from "bun:test";
import { ECHO_MAX, clip, nameCharactersOk, quote } from "../../../src/lib/text.ts";

test("quote repeats short input whole, longer input cut to ECHO_MAX characters and …", () => {
  expect(quote("ghost")).toBe('"ghost"');
  expect(quote("a".repeat(ECHO_MAX))).toBe(`"${"a".repeat(ECHO_MAX)}"`);
  expect(quote("a".repeat(1_000_000))).toBe(`"${"a".repeat(ECHO_MAX)}…"`);
  expect(clip("b".repeat(ECHO_MAX + 1))).toBe(`${"b".repeat(ECHO_MAX)}…`);
});

test("the cut never leaves half a surrogate pair", () => {
  const s = `${"a".repeat(ECHO_MAX - 1)}\u{1f600}tail`;
  expect(clip(s)).toBe(`${"a".repeat(ECHO_MAX - 1)}…`);
  expect(clip(s).isWellFormed()).toBe(true);
});

test("a name is one line: U+2028 and U+2029 are refused like a line feed", () => {
  for (const s of ["a\u2028b", "a\u2029b", "a\nb"]) expect(nameCharactersOk(s)).toBe(false);
  expect(nameCharactersOk("a \u200fb")).toBe(true);
});
