// Which author patterns run on JavaScript's engine (shared/native-fast.ts), and that they answer
// exactly what the linear-time engine answers.
import { describe, expect, test } from "bun:test";
import { nativeFast, nativeTest } from "../../../src/validators/shared/native-fast.ts";
import { compileRangedRegex } from "../../../src/validators/shared/user-regex.ts";

const ACCEPTED = [
  "^SKU-[0-9]{4}$",
  "^ord-[0-9]{6}$",
  "^[a-z0-9-]+$",
  "^\\d{4}-\\d{2}-\\d{2}$",
  "^[A-Z]{2}$",
  "^x*y*$",
  "^[^@\\s]+@[^@\\s]+$",
  "^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$",
  "^\\+?[0-9]{7,15}$",
  "^a{2}a*$",
  "^[a-c]?[d-f]{0,3}x",
  "^\\$[0-9]+\\.[0-9]{2}$",
  "^[-a]*b$",
  "^[^]x?$",
  "^🐲*🐉$",
  "^.x",
  "^\\w+\\s\\d+$",
  "^a\\\\$",
  "^a\\$b$",
  // typebox's key test for additionalProperties: false
  "(^id$|^customer$|^created$|^status$|^items$|^total$|^notes$)",
  "(?:^x+$|^y$)",
  "^[0-9]+$|^[a-z]+-[0-9]$",
];

const REFUSED = [
  ["^(a|a)*b", "a group"],
  ["^a*a*b", "a* overlaps what follows"],
  ["^[0-9]*0$", "the class overlaps the next atom"],
  ["^.*x$", ". overlaps x"],
  ["^x?[a-z]?x$", "x? may be followed by x (the next atom is optional)"],
  ["[0-9]+$", "not anchored: every offset is a start"],
  ["^a+?b", "lazy"],
  ["^\\bfoo", "word boundary"],
  ["^a|b", "alternation"],
  ["^(ab)+$", "quantified group"],
  ["^\\p{L}+$", "property escape"],
  ["^(?=a)a", "lookahead"],
  ["^(a)\\1$", "backreference"],
  ["(^a$|^b$)+", "a quantified group of branches"],
  ["(^a$|b)", "one branch unanchored"],
  ["^a$b", "$ inside a branch"],
  ["(^a*a$|^b$)", "one branch not deterministic"],
] as const;

describe("nativeFast: the deterministic anchored form", () => {
  test.each(ACCEPTED)("%s runs natively", (p) => {
    expect(nativeFast(p, "")).toBeInstanceOf(RegExp);
  });
  test.each(REFUSED)("%s stays on re2js (%s)", (p) => {
    expect(nativeFast(p, "")).toBeNull();
  });
  test("flags keep a pattern on re2js", () => {
    expect(nativeFast("^abc$", "i")).toBeNull();
    expect(nativeFast("^abc$", "m")).toBeNull();
  });
});

/** A small deterministic generator: the same strings on every run. */
function* strings(alphabet: string[], count: number) {
  let seed = 42;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  for (let i = 0; i < count; i++) {
    const len = next() % 14;
    let s = "";
    for (let j = 0; j < len; j++) s += alphabet[next() % alphabet.length];
    yield s;
  }
}

describe("nativeFast answers what RE2 answers", () => {
  test.each(ACCEPTED)("%s on 3,000 strings", (p) => {
    const native = nativeFast(p, "")!;
    const ref = compileRangedRegex(p);
    if (!ref.ok) throw new Error(ref.message);
    // The pattern's own characters, their neighbours, and a few of every kind.
    const alphabet = [
      ...new Set([...Array.from(p), "a", "Z", "0", "9", "-", "@", " ", "\n", "é", "🐲", "x", "y"]),
    ];
    let matched = 0;
    for (const s of strings(alphabet, 3000)) {
      const want = ref.re.test(s);
      expect([s, nativeTest(native, s)]).toEqual([s, want]);
      if (want) matched++;
    }
    // Also the strings the pattern is about: a match must be among the cases for most patterns.
    for (const s of [
      "SKU-1234",
      "ord-000123",
      "ab-9",
      "2026-01-01",
      "GB",
      "xxyy",
      "a@b",
      "GB82WEST12345698765432",
      "+4412345678",
      "aaa",
      "bdx",
      "$12.50",
      "-ab",
      "zx",
      "🐲🐲🐉",
      "qx",
      "ab_1 42",
      "a\\",
      "a$b",
      "customer",
      "customers",
      "xx",
      "y",
      "12",
      "ab-1",
    ]) {
      expect([s, nativeTest(native, s)]).toEqual([s, ref.re.test(s)]);
      if (ref.re.test(s)) matched++;
    }
    expect(matched).toBeGreaterThan(0);
  });

  test("a long text that fails at its last character answers false (and the next call starts over)", () => {
    const re = nativeFast("^[a-z]*$", "")!;
    const text = `${"a".repeat(2_000_000)}!`;
    expect(nativeTest(re, text)).toBe(false);
    expect(nativeTest(re, "abc")).toBe(true);
    expect(nativeTest(re, "abc")).toBe(true); // lastIndex does not carry over
  });
});
