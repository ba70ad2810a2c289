// The ECMA-262 → RE2 rewrite keeps ECMA's meaning (shared/ecma-regex.ts, shared/user-regex.ts).
import { describe, expect, test } from "bun:test";
import { BINARY_PROPERTIES } from "../../../src/validators/shared/ecma-regex.ts";
import { compileRangedRegex, compileUserRegex } from "../../../src/validators/shared/user-regex.ts";

function re(pattern: string, flags = "") {
  const r = compileUserRegex(pattern, flags);
  if (!r.ok) throw new Error(`${pattern}: ${r.message}`);
  return r.regex;
}

describe("ECMA meaning on RE2", () => {
  test.each([
    // pattern, flags, text, ECMA's answer
    ["^(a|a)*b|^a*c$", "", `${"a".repeat(40)}c`, true],
    ["^abc$", "", "abc\n", false], // $ is the end of input, not before a final \n
    ["^\\cC$", "", "\x03", true],
    ["^\\d$", "", "\u0660", false], // \d, \w are ASCII
    ["^\\w$", "", "é", false],
    ["^\\s$", "", "\u00a0", true], // \s is ECMA's white space, wider than RE2's
    ["^\\s$", "", "\ufeff", true],
    ["^\\S$", "", "\u2028", false],
    ["a.b", "", "a\u2028b", false], // . stops at every line terminator
    ["a.b", "", "a\rb", false],
    ["a.b", "s", "a\nb", true],
    ["^\\p{Letter}+$", "", "École", true],
    ["\\p{Script=Greek}", "", "α", true],
    ["^🐲*$", "", "🐲🐲", true], // code points, not UTF-16 units
    ["^.$", "", "🐉", true],
    ["[\\u{1F600}-\\u{1F64F}]", "", "😃", true],
    ["\\uD83D\\uDE00", "", "😀", true],
    ["[^]", "", "\n", true],
    ["[\\b]", "", "\b", true],
    ["[^\\d\\s]", "", "5", false],
    ["(?<=\\$)\\d+", "", "cost $12", true],
    ["(?<!\\$)\\b\\d+", "", "$12", false],
    ["^(?=.*[0-9])(?!.*\\s).{8,}$", "", "abcdefg1", true],
    ["^(?=.*[0-9])(?!.*\\s).{8,}$", "", "abcd efg1", false],
    ["^(?=.*[0-9])(?!.*\\s).{8,}$", "", "abcdefgh", false],
    ["(^x|^(?=y)y.)", "", "yz", true], // typebox joins patternProperties keys like this
    ["^b", "m", "a\r\nb", true], // ^ and $ in multi-line mode know \r, U+2028, U+2029
    ["^b", "m", "a\u2028b", true],
    ["a$", "m", "a\r\nb", true],
    ["A", "i", "a", true],
    ["(?i:a)B", "", "Ab", false],
  ])("%p (flags %p) on %j → %p", (pattern, flags, text, want) => {
    expect(re(pattern, flags).test(text)).toBe(want);
  });

  test("\\w and \\W under i: ECMA's WordCharacters add ſ (U+017F) and K (U+212A), for every code point", () => {
    // Before: \W under i held ſ, and RE2's case folding then made it match s, S, k and K.
    expect([re("\\W", "i").test("s"), re("\\W", "i").test("k"), re("\\W", "i").test("\u017f")]).toEqual([
      false,
      false,
      false,
    ]);
    for (const pattern of ["^\\w$", "^\\W$", "^[^\\w]$", "^[\\W]$", "^[^\\W.]$", "^(?i:\\W)$"])
      for (const flags of ["i", ""]) {
        const ours = re(pattern, flags);
        const ecma = new RegExp(pattern, `u${flags}`);
        const differ: number[] = [];
        for (let c = 0; c <= 0x10ffff; c += c < 0x3000 ? 1 : 61) {
          if (c >= 0xd800 && c <= 0xdfff) continue;
          const ch = String.fromCodePoint(c);
          if (ours.test(ch) !== ecma.test(ch)) differ.push(c);
        }
        expect({ pattern, flags, differ }).toEqual({ pattern, flags, differ: [] });
      }
  });

  describe("\\b and \\B under i: ſ (U+017F) and K (U+212A) are word characters, as ECMA's IsWordChar says", () => {
    // Patterns always have the u flag, where Canonicalize is simple case folding: ſ is s and K is
    // k, both word characters for \b under i (without u they would not be: we never run that).
    test.each([
      ["a\\b", "i", "a\u017f", false],
      ["a\\b", "i", "a\u212a", false],
      ["\\ba", "i", "\u017fa", false],
      ["-\\b", "i", "-\u212a", true],
      ["\\b-", "i", "\u017f-", true],
      ["a\\B", "i", "a\u212a", true],
      ["-\\B", "i", "-\u017f", false],
      ["^\\w+\\b$", "i", "a\u017fb", true],
      // JSON Schema's pattern has no flags: (?i:…) makes the boundary case-insensitive.
      ["(?i:a\\b)", "", "a\u017f", false],
      ["^(?i:\\bk\\b)$", "", "\u212a", true],
      ["^(?=.*\\bs)", "i", "-\u017f", true],
      ["(?i:\\b)[^x]", "", "-\u017f", true],
    ])(
      "%p (flags %p) on %j → %p, as JavaScript's engine says (was the other answer)",
      (pattern, flags, text, want) => {
        expect(new RegExp(pattern, `u${flags}`).test(text)).toBe(want);
        expect(re(pattern, flags).test(text)).toBe(want);
      },
    );

    test.each([
      ["a\\b", "", "a\u017f", true],
      ["\\b(?-i:s)", "i", "\u017f", false],
      ["\\b(?-i:s)", "i", "s", true],
    ])(
      "outside i they are neither word characters nor s and k: %p (flags %p) on %j → %p",
      (pattern, flags, text, want) => {
        expect(new RegExp(pattern, `u${flags}`).test(text)).toBe(want);
        expect(re(pattern, flags).test(text)).toBe(want);
      },
    );

    test("on either side of \\b and \\B, every code point as JavaScript's engine says", () => {
      const patterns = ["a\\b", "\\ba", "-\\b", "\\b-", "a\\B", "\\Ba", "-\\B", "\\B-"];
      const differ: string[] = [];
      for (const [flags, wrap] of [
        ["i", (p: string) => p],
        ["", (p: string) => p],
        ["", (p: string) => `(?i:${p})`],
      ] as const)
        for (const written of patterns) {
          const pattern = wrap(written);
          const ours = re(pattern, flags);
          const ecma = new RegExp(pattern, `u${flags}`);
          for (let c = 0; c <= 0x10ffff; c += c < 0x3000 ? 1 : 61) {
            if (c >= 0xd800 && c <= 0xdfff) continue;
            const ch = String.fromCodePoint(c);
            const text = written.startsWith("\\") ? `${ch}${written.at(-1)}` : `${written[0]}${ch}`;
            if (ours.test(text) !== ecma.test(text)) differ.push(`${pattern} /${flags} U+${c.toString(16)}`);
          }
        }
      expect(differ).toEqual([]);
    });

    test("Schematron's tokenize() and replace(): the matches and groups of matchAll, in the text as written", () => {
      const text = "\u017fa K\u212a-\u017f\u212ab s";
      for (const [pattern, flags] of [
        ["(\\w+)\\b", "i"],
        ["\\b(s|k)(x)?", "i"],
        ["(?i:\\b)(\\p{L})", ""],
      ]) {
        const ranged = compileRangedRegex(pattern, flags);
        if (!ranged.ok) throw new Error(ranged.message);
        const ours = [...ranged.re.matchAll(text)].map((m) => [m.index, ...m]);
        const want = [...text.matchAll(new RegExp(pattern, `gu${flags}`))].map((m) => [m.index, ...m]);
        expect({ pattern, ours }).toEqual({ pattern, ours: want });
      }
    });

    test("matchStarts: the same offsets as matchAll", () => {
      const text = "\u017fa K\u212a-\u017f\u212ab";
      for (const [pattern, flags] of [
        ["\\b", "i"],
        ["\\B", "i"],
        ["\\b\\w", "i"],
        ["(?i:\\b)", ""],
      ]) {
        const want = [...text.matchAll(new RegExp(pattern, `gu${flags}`))].map((m) => m.index);
        expect(re(pattern, flags).matchStarts(text, 20)).toEqual(want);
      }
    });
  });

  test("matchStarts: UTF-16 offsets of successive matches, at most max", () => {
    expect(re("b").matchStarts("😀ab😀b", 10)).toEqual([3, 6]);
    expect(re("x").matchStarts("xxxx", 2)).toEqual([0, 1]);
    expect(re("[ \\t]+$", "m").matchStarts("a \r\nb\t\n", 10)).toEqual([1, 5]);
  });
});

describe("Unicode binary properties (docs/validators.md lists them)", () => {
  test("the accepted ones, exactly as documented", () => {
    expect([...BINARY_PROPERTIES].sort()).toEqual([
      "ASCII_Hex_Digit",
      "Alphabetic",
      "Assigned",
      "Dash",
      "Emoji",
      "Emoji_Component",
      "Emoji_Modifier",
      "Emoji_Modifier_Base",
      "Emoji_Presentation",
      "Extended_Pictographic",
      "Hex_Digit",
      "Lowercase",
      "Math",
      "Quotation_Mark",
      "Terminal_Punctuation",
      "Uppercase",
      "White_Space",
    ]);
  });

  test("each matches exactly the code points JavaScript's \\p{…} matches, over all of Unicode", () => {
    let all = "";
    for (let cp = 0; cp <= 0x10ffff; cp++) if (cp < 0xd800 || cp > 0xdfff) all += String.fromCodePoint(cp);
    for (const name of BINARY_PROPERTIES) {
      const ours = re(`\\p{${name}}`).matchStarts(all, all.length);
      const ecma = [...all.matchAll(new RegExp(`\\p{${name}}`, "gu"))].map((m) => m.index);
      expect({ name, count: ours.length, same: ours.join() === ecma.join() }).toEqual({
        name,
        count: ecma.length,
        same: true,
      });
    }
  }, 60_000);

  test.each([
    ["^\\p{Alphabetic}+$", "", "Ωmega", true],
    ["^\\p{Alphabetic}+$", "", "R2D2", false],
    ["^\\P{Alphabetic}+$", "", "123", true],
    ["^[^\\p{White_Space}]+$", "", "a\u00a0b", false],
    ["^[\\p{Uppercase}\\p{Nd}]+$", "", "AB12", true],
    ["^\\p{Emoji_Presentation}$", "", "🐉", true],
  ])("%p (flags %p) on %j → %p", (pattern, flags, text, want) => {
    expect(re(pattern, flags).test(text)).toBe(want);
  });

  test.each(["Ideographic", "ID_Start", "Alpha", "Upper", "Noncharacter_Code_Point"])(
    "\\p{%s}: unsupported_regex, naming what is supported",
    (name) => {
      expect(compileUserRegex(`\\p{${name}}`)).toEqual({
        ok: false,
        code: "unsupported_regex",
        message:
          "is not supported (patterns run on a linear-time engine, docs/validators.md): " +
          `\\p{${name}} is not supported: use a general category (\\p{L}, \\p{Lu}, \\p{Nd} …), a script ` +
          "(\\p{Script=Greek}) or one of the binary properties docs/validators.md lists (\\p{Alphabetic}, " +
          "\\p{White_Space} …)",
      });
    },
  );
});

describe("refusals", () => {
  test.each([
    ["(", "invalid_regex"],
    ["(a)\\1", "unsupported_regex"],
    ["(?<q>a)\\k<q>", "unsupported_regex"],
    ["a(?=b)", "unsupported_regex"],
    ["(?=a)a", "unsupported_regex"], // a lookahead needs the leading ^ to pin it
    ["^(?:(?=a))*a", "unsupported_regex"],
    ["a{1001}", "unsupported_regex"],
    ["\\p{Emoji_Presentation_Nope}", "invalid_regex"],
    ["x".repeat(1001), "regex_too_long"],
  ])("%p → %p", (pattern, code) => {
    const r = compileUserRegex(pattern);
    expect(r.ok ? "ok" : r.code).toBe(code);
  });
});
