// The cost read from a pattern's text before it is compiled (src/validators/shared/regex-cost.ts):
// nested counts multiply, a sequence and an alternation add, and a class, an escape or RE2's
// \Q…\E is read as its engine reads it, so no text hides counted repetitions from the count.
import { describe, expect, test } from "bun:test";
import { type RegexDialect, regexCost } from "../../../src/validators/shared/regex-cost.ts";

describe("regexCost", () => {
  test.each([
    ["((a{1000}){1000}){1000}", "xsd", 1_000_000_000],
    ["((a{100}){100}){100}", "xsd", 1_000_000],
    ["a{1000}".repeat(1000), "re2", 1_000_000],
    ["[a-z]{1,64}@[a-z.]{1,255}\\.[a-z]{2,63}", "xsd", 384],
    ["^[0-9]{4}$", "ecma", 6],
    ["(a|bc){3}", "ecma", 9],
    ["x{2,}", "ecma", 3],
    ["a*b+c?", "ecma", 3],
    // Classes are one atom, whatever they hold: XSD's subtraction nests one.
    ["[a-z-[aeiou]]{3}", "xsd", 3],
    ["\\p{Lu}{10}\\P{IsBasicLatin}", "xsd", 11],
    // RE2 reads a `]` first in a class, and `[:alpha:]` in one, as part of it.
    ["[]a]{5}", "re2", 5],
    ["[[:alpha:]]{5}", "re2", 5],
    // … and \Q…\E as characters: the `[` there opens no class that would hide what follows.
    [`\\Q[\\E${"a{1000}".repeat(30)}`, "re2", 30_001],
    // A brace that is no quantifier is a character.
    ["a{,5}", "re2", 5],
  ] as Array<[string, RegexDialect, number]>)("%s (%s): %d", (pattern, dialect, cost) => {
    expect(regexCost(pattern, dialect)).toBe(cost);
  });

  test("stops counting as soon as it is past the limit", () => {
    expect(regexCost("a{1000}".repeat(1000), "re2", 20_000)).toBe(20_001);
  });
});
