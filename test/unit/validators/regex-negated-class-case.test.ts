// A negated character class under the i flag (text_rules' `flags: "i"`, or `(?i:…)` in any
// pattern) excludes every case variant of its members, as ECMA-262 says with the u flag: a
// character matches `[^x]` only when no member has the same simple case folding. The rewrite for
// RE2 wrote the class as its complement, which RE2's case folding then widened back, so `[^a-z]`
// under i matched "Q" and `[^x]` matched "x" itself: a `not_match` rule `[^a-z0-9]` flagged every
// file, a `match` rule `^[^x]+$` passed "xx" (2026-11-29).
import { expect, test } from "bun:test";
import { compileUserRegex } from "../../../src/validators/shared/user-regex.ts";

function re(pattern: string, flags = "") {
  const r = compileUserRegex(pattern, flags);
  if (!r.ok) throw new Error(`${pattern}: ${r.message}`);
  return r.regex;
}

test.each([
  ["[^x]", "i", "x", false],
  ["[^x]", "i", "X", false],
  ["^[^a-z]+$", "i", "hello", false],
  ["^[^a-z]+$", "i", "HELLO", false],
  ["^[^a-z]+$", "i", "123", true],
  ["[^k]", "i", "\u212a", false], // Kelvin sign folds to k
  ["[^s]", "i", "\u017f", false], // long s folds to s
  ["[^σ]", "i", "ς", false], // final sigma folds to σ
  ["[^ß]", "i", "\u1e9e", false], // capital sharp s folds to ß
  ["[^\\u{10428}]", "i", "\u{10400}", false], // Deseret, outside the BMP
  ["[^ı]", "i", "I", true], // dotless i has no folding: I is not its variant
  ["(?i:[^x])", "", "X", false],
  ["(?-i:[^x])", "i", "X", true],
  ["[^]", "i", "x", true],
])("%p (flags %p) on %j → %p, as JavaScript's engine says", (pattern, flags, text, want) => {
  expect(new RegExp(pattern, `u${flags}`).test(text)).toBe(want);
  expect(re(pattern, flags).test(text)).toBe(want);
});

test("negated classes under i: every code point as JavaScript's engine says", () => {
  const differ: string[] = [];
  for (const [pattern, flags] of [
    ["^[^x]$", "i"],
    ["^[^a-z0-9]$", "i"],
    ["^[^k\\u017f]$", "i"],
    ["^[^α-ωά-ώ]$", "i"],
    ["^[^\\u00e0-\\u00ff]$", "i"],
    ["^[^\\d_]$", "i"],
    ["^(?i:[^a-f])$", ""],
  ] as const) {
    const ours = re(pattern, flags);
    const ecma = new RegExp(pattern, `u${flags}`);
    for (let c = 0; c <= 0x10ffff; c += c < 0x3000 ? 1 : 61) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCodePoint(c);
      if (ours.test(ch) !== ecma.test(ch)) differ.push(`${pattern} /${flags} U+${c.toString(16)}`);
    }
  }
  expect(differ.slice(0, 20)).toEqual([]);
});
