// ECMA-262 patterns (the `u` flag: JSON Schema's dialect, and ours everywhere) rewritten for RE2,
// meaning for meaning, so they run on a linear-time engine (re2js). The native engine is only the
// syntax judge (the caller compiles the pattern with `new RegExp(p, "u")` first); this parser can
// then assume well-formed input. Where the two engines differ, the rewrite spells ECMA's meaning
// out: `.` excludes all four line terminators, `\s` is ECMA's 25 white-space characters, `\d` and
// `\w` are ASCII (plus ſ and K under `i`, for `\b` too: FOLDED_WORD), literals become \x{…}. What RE2 cannot express is refused with a reason:
// backreferences, and lookaheads except those right after a leading ^ (user-regex.ts evaluates
// those as separate anchored matches). Lookbehinds run on re2js's linear-time lookbehind mode.

export class Unsupported extends Error {}

/** The ECMA flags that change meaning (u is always on). */
export interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
}

export type Range = [number, number];
/** A term of a sequence: RE2 text, or an assertion or group whose text depends on its place. */
export type Term =
  | { t: "raw"; re2: string }
  | { t: "caret"; m: boolean }
  | { t: "dollar"; m: boolean }
  | { t: "ahead"; negate: boolean; body: Alt }
  /** `open`: "(?:" (captures are not needed: no backreferences), "(?i:", "(?-i:", "(?<=", "(?<!". */
  | { t: "group"; open: string; body: Alt; quant: string };
export type Alt = Term[][];

const MAX_CP = 0x10ffff;
export const DIGIT: Range[] = [[0x30, 0x39]];
export const WORD: Range[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/**
 * ECMA's WordCharacters under the `i` flag (22.2.2.9.4): also the characters that case-fold into
 * an ASCII word character, U+017F ſ (s) and U+212A Kelvin (k). Without them `\W` under `i` would
 * hold ſ, and RE2's folding of that class would then match s, S, k and K too.
 */
export const WORD_I: Range[] = [...WORD, [0x17f, 0x17f], [0x212a, 0x212a]];
/**
 * The same two for `\b` and `\B` under `i`, which RE2 judges by ASCII alone and cannot be told
 * otherwise (no lookahead to see the next character). Under `i` ECMA reads every character as
 * its Canonicalize (simple case folding with `u`), where ſ is s and K is k; IsWordChar counts
 * both as word characters. So a pattern in which nothing outside `i` tells them apart matches
 * the text with ſ and K replaced by s and k exactly as ECMA matches the text itself, at the same
 * UTF-16 offsets (all four are one unit). user-regex.ts reads the text so when a `\b` or `\B`
 * stands under `i`.
 */
export const FOLDED_WORD: ReadonlyArray<readonly [string, string]> = [
  ["\u017f", "s"],
  ["\u212a", "k"],
];
// WhiteSpace and LineTerminator of ECMA-262 (§12.2, §12.3): \t \n \v \f \r, space, NBSP, the Zs.
export const SPACE: Range[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
export const LINE_END: Range[] = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];
// General_Category long names (ECMA accepts them; RE2 knows the short ones).
const CATEGORY: Record<string, string> = {
  Letter: "L",
  Cased_Letter: "LC",
  Uppercase_Letter: "Lu",
  Lowercase_Letter: "Ll",
  Titlecase_Letter: "Lt",
  Modifier_Letter: "Lm",
  Other_Letter: "Lo",
  Mark: "M",
  Combining_Mark: "M",
  Nonspacing_Mark: "Mn",
  Spacing_Mark: "Mc",
  Enclosing_Mark: "Me",
  Number: "N",
  Decimal_Number: "Nd",
  digit: "Nd",
  Letter_Number: "Nl",
  Other_Number: "No",
  Punctuation: "P",
  punct: "P",
  Connector_Punctuation: "Pc",
  Dash_Punctuation: "Pd",
  Open_Punctuation: "Ps",
  Close_Punctuation: "Pe",
  Initial_Punctuation: "Pi",
  Final_Punctuation: "Pf",
  Other_Punctuation: "Po",
  Symbol: "S",
  Math_Symbol: "Sm",
  Currency_Symbol: "Sc",
  Modifier_Symbol: "Sk",
  Other_Symbol: "So",
  Separator: "Z",
  Space_Separator: "Zs",
  Line_Separator: "Zl",
  Paragraph_Separator: "Zp",
  Other: "C",
  Control: "Cc",
  cntrl: "Cc",
  Format: "Cf",
  Surrogate: "Cs",
  Private_Use: "Co",
  Unassigned: "Cn",
};

function invert(ranges: Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of [...ranges].sort((a, b) => a[0] - b[0])) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

const hex = (cp: number) => cp.toString(16).toUpperCase();
/** A code point as RE2 text: letters and digits as they are, anything else as \x{…}. */
const lit = (cp: number) =>
  /[A-Za-z0-9]/.test(String.fromCodePoint(cp)) ? String.fromCodePoint(cp) : `\\x{${hex(cp)}}`;
const rangeText = ([lo, hi]: Range) => (lo === hi ? lit(lo) : `${lit(lo)}-${lit(hi)}`);
/** A class from ranges; never empty (RE2 has no `[]`: a class of nothing is the inverse of all). */
const classOf = (ranges: Range[]) =>
  ranges.length === 0 ? `[^\\x{0}-\\x{10FFFF}]` : `[${ranges.map(rangeText).join("")}]`;

/**
 * ECMA-262's binary properties that re2js (Unicode 17) knows, by their long names: each matches
 * exactly the code points JavaScript's `\p{…}` does, checked over all of Unicode in
 * test/unit/validators/user-regex.test.ts. Others (ID_Start, Ideographic …) and the short
 * aliases (Alpha, Upper …) are refused; docs/validators.md lists these.
 */
export const BINARY_PROPERTIES: ReadonlySet<string> = new Set([
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

/** `\p{…}` / `\P{…}` body → an RE2 property name; throws Unsupported for what RE2 lacks. */
function property(body: string): string | Range[] {
  const eq = body.indexOf("=");
  const [key, value] = eq < 0 ? [null, body] : [body.slice(0, eq), body.slice(eq + 1)];
  if (key === null || key === "General_Category" || key === "gc") {
    if (key === null && value === "Any") return [[0, MAX_CP]];
    if (key === null && value === "ASCII") return [[0, 0x7f]];
    const short = CATEGORY[value] ?? value;
    if (/^(?:L[Cultmo]?|M[nce]?|N[dlo]?|P[cdseifo]?|S[mcko]?|Z[slp]?|C[cfsno]?)$/.test(short)) return short;
    if (key !== null) throw new Unsupported(`the general category "${value}" is not known`);
    // Alone, a name that is not a general category is a binary property (ECMA-262 22.2.2.9).
    if (BINARY_PROPERTIES.has(value)) return value;
  }
  // Scripts: RE2 knows them by their long names (Latin, Greek, Cyrillic …), as ECMA does.
  if ((key === "Script" || key === "sc") && /^[A-Z][A-Za-z_]*$/.test(value)) return value;
  throw new Unsupported(
    `\\p{${body}} is not supported: use a general category (\\p{L}, \\p{Lu}, \\p{Nd} …), a script ` +
      "(\\p{Script=Greek}) or one of the binary properties docs/validators.md lists (\\p{Alphabetic}, " +
      "\\p{White_Space} …)",
  );
}

/** Recursive descent over a pattern that native RegExp already accepted with the `u` flag. */
class Parser {
  i = 0;
  lookbehind = false;
  /** A `\b` or `\B` under `i` (ECMA's word characters then include ſ and K: see FOLDED_WORD). */
  boundaryI = false;
  /** A `\b` or `\B` not under `i` (ſ and K are not word characters there). */
  boundaryCased = false;
  /** RE2 text of each atom outside `i`: those tell ſ from s and K from k, unless they match both or neither. */
  readonly cased: string[] = [];
  constructor(
    readonly p: string,
    readonly flags: Flags,
    /** Keep capturing groups capturing (replace() reads them); otherwise all are `(?:`. */
    readonly captures = false,
  ) {}

  cp(): number {
    const c = this.p.codePointAt(this.i) as number;
    this.i += c > 0xffff ? 2 : 1;
    return c;
  }

  disjunction(flags: Flags): Alt {
    const alt: Alt = [this.sequence(flags)];
    while (this.p[this.i] === "|") {
      this.i++;
      alt.push(this.sequence(flags));
    }
    return alt;
  }

  sequence(flags: Flags): Term[] {
    const seq: Term[] = [];
    while (this.i < this.p.length && this.p[this.i] !== "|" && this.p[this.i] !== ")") {
      const term = this.term(flags);
      const q = this.quantifier();
      if (q && term.t === "raw") term.re2 = `(?:${term.re2})${q}`;
      else if (q && term.t === "group") term.quant = q;
      else if (q) throw new Unsupported("a quantified assertion is not supported");
      seq.push(term);
    }
    return seq;
  }

  quantifier(): string {
    const m = /^(?:[*+?]|\{(\d+)(?:,(\d*))?\})\??/.exec(this.p.slice(this.i));
    if (!m) return "";
    this.i += m[0].length;
    for (const n of [m[1], m[2]]) {
      if (n && Number(n) > 1000) throw new Unsupported(`a repeat count above 1000 (${n}) is not supported`);
    }
    return m[0];
  }

  term(flags: Flags): Term {
    const c = this.p[this.i];
    if (c === "^") {
      this.i++;
      return { t: "caret", m: flags.m };
    }
    if (c === "$") {
      this.i++;
      return { t: "dollar", m: flags.m };
    }
    if (c === "(") return this.group(flags);
    const re2 = this.atom(flags);
    if (!flags.i) this.cased.push(re2);
    return { t: "raw", re2 };
  }

  atom(flags: Flags): string {
    const c = this.p[this.i];
    if (c === "[") return this.characterClass(flags.i);
    if (c === ".") {
      this.i++;
      return flags.s ? "(?s:.)" : classOf(invert(LINE_END));
    }
    if (c === "\\") {
      const b = this.p[this.i + 1];
      if (b === "b" || b === "B") {
        if (flags.i) this.boundaryI = true;
        else this.boundaryCased = true;
      }
      return this.atomEscape(flags.i);
    }
    return lit(this.cp());
  }

  group(flags: Flags): Term {
    const head = /^\((\?(?:[:=!]|<[=!]|<[^>]+>|([ims]*)(?:-([ims]*))?:))?/.exec(
      this.p.slice(this.i),
    ) as RegExpExecArray;
    this.i += head[0].length;
    const kind = head[1] ?? "";
    let inner = flags;
    let open = "(?:";
    if (head[2] !== undefined) {
      // Modifiers (?ims-ims:…): i maps to RE2's own; m and s change how ^ $ . are written.
      const on = head[2];
      const off = head[3] ?? "";
      inner = {
        i: on.includes("i") || (flags.i && !off.includes("i")),
        m: on.includes("m") || (flags.m && !off.includes("m")),
        s: on.includes("s") || (flags.s && !off.includes("s")),
      };
      open = inner.i === flags.i ? "(?:" : inner.i ? "(?i:" : "(?-i:";
    }
    const body = this.disjunction(inner);
    this.i++; // ")"
    if (kind === "?=" || kind === "?!") return { t: "ahead", negate: kind === "?!", body };
    if (kind === "?<=" || kind === "?<!") {
      this.lookbehind = true;
      return { t: "group", open: `(${kind}`, body, quant: "" };
    }
    // A capturing group, named or not, keeps ECMA's numbering when it stays a plain "(".
    if (this.captures && (kind === "" || kind.startsWith("?<"))) open = "(";
    return { t: "group", open, body, quant: "" };
  }

  atomEscape(i: boolean): string {
    const next = this.p[this.i + 1];
    if (next === "b" || next === "B") {
      this.i += 2;
      return `\\${next}`;
    }
    if (/[1-9]/.test(next) || next === "k")
      throw new Unsupported(
        "backreferences (\\1, \\k<name>) are not supported: they cannot run in linear time",
      );
    const set = this.classEscape(i);
    if (set) return typeof set === "string" ? set : classOf(set);
    return lit(this.characterEscape());
  }

  /** \d \D \w \W \s \S \p{…} \P{…} at this.i: ranges or an RE2 item; null when not one of them. */
  classEscape(i: boolean): Range[] | string | null {
    const next = this.p[this.i + 1];
    const sets: Record<string, Range[]> = { d: DIGIT, w: i ? WORD_I : WORD, s: SPACE };
    const lower = next?.toLowerCase();
    if (lower && lower in sets && "dwsDWS".includes(next)) {
      this.i += 2;
      return next === lower ? sets[lower] : invert(sets[lower]);
    }
    if (next === "p" || next === "P") {
      const end = this.p.indexOf("}", this.i);
      const body = this.p.slice(this.i + 3, end);
      this.i = end + 1;
      const prop = property(body);
      if (typeof prop !== "string") return next === "p" ? prop : invert(prop);
      return `\\${next}{${prop}}`;
    }
    return null;
  }

  /** One escaped code point: \n \cJ \0 \x41 \u0041 \u{1F600} \uD83D\uDE00 or an identity escape. */
  characterEscape(): number {
    this.i++; // "\"
    const c = this.p[this.i];
    const controls: Record<string, number> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b, "0": 0 };
    if (c in controls) {
      this.i++;
      return controls[c];
    }
    if (c === "c") {
      this.i += 2;
      return this.p.charCodeAt(this.i - 1) % 32;
    }
    if (c === "x") {
      this.i += 3;
      return Number.parseInt(this.p.slice(this.i - 2, this.i), 16);
    }
    if (c === "u") {
      if (this.p[this.i + 1] === "{") {
        const end = this.p.indexOf("}", this.i);
        const cp = Number.parseInt(this.p.slice(this.i + 2, end), 16);
        this.i = end + 1;
        return cp;
      }
      const unit = Number.parseInt(this.p.slice(this.i + 1, this.i + 5), 16);
      this.i += 5;
      const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(this.p.slice(this.i));
      if (unit >= 0xd800 && unit <= 0xdbff && low) {
        this.i += 6;
        return 0x10000 + ((unit - 0xd800) << 10) + (Number.parseInt(low[1], 16) - 0xdc00);
      }
      return unit;
    }
    return this.cp(); // identity escape: a syntax character, "/" or (in classes) "-"
  }

  characterClass(i: boolean): string {
    this.i++; // "["
    const negate = this.p[this.i] === "^";
    if (negate) this.i++;
    const ranges: Range[] = [];
    const items: string[] = [];
    while (this.p[this.i] !== "]") {
      const a = this.classAtom(i);
      if (typeof a === "number" && this.p[this.i] === "-" && this.p[this.i + 1] !== "]") {
        this.i++;
        const b = this.classAtom(i) as number;
        ranges.push([a, b]);
      } else if (typeof a === "number") ranges.push([a, a]);
      else if (typeof a === "string") items.push(a);
      else ranges.push(...a);
    }
    this.i++; // "]"
    // Negated, the class stays RE2's `[^…]`: RE2 case-folds the members and then negates, which
    // is ECMA's meaning under i (no member folds as the character does). Written as the
    // complement's ranges, RE2's folding widened it back: `[^a-z]` under i matched "Q", `[^x]` "x".
    if (negate && ranges.length > 0) return `[^${ranges.map(rangeText).join("")}${items.join("")}]`;
    if (items.length === 0) return classOf(negate ? invert(ranges) : ranges);
    return `[${negate ? "^" : ""}${ranges.map(rangeText).join("")}${items.join("")}]`;
  }

  classAtom(i: boolean): number | Range[] | string {
    if (this.p[this.i] !== "\\") return this.cp();
    if (this.p[this.i + 1] === "b") {
      this.i += 2;
      return 0x08; // [\b] is backspace
    }
    return this.classEscape(i) ?? this.characterEscape();
  }
}

/** RE2 text of a disjunction whose assertions are not lookaheads (those are handled above it). */
export function emitAlt(alt: Alt): string {
  return alt.map((seq) => seq.map((t) => emitTerm(t, false)).join("")).join("|");
}

/**
 * One term as RE2. `last`: the final term of a whole top-level branch, where a multi-line `$` may
 * consume the line terminator it stands before (the match is the same; RE2 has no lookahead).
 */
export function emitTerm(t: Term, last: boolean): string {
  switch (t.t) {
    case "raw":
      return t.re2;
    case "group":
      return `${t.open}${emitAlt(t.body)})${t.quant}`;
    case "caret":
      // ECMA's line terminators are \n \r U+2028 U+2029; RE2's multi-line ^ knows only \n.
      return t.m ? "(?:(?m:^)|(?<=[\\x{D}\\x{2028}\\x{2029}]))" : "^";
    case "dollar":
      if (!t.m) return "$";
      return last ? "(?:(?m:$)|[\\x{D}\\x{2028}\\x{2029}])" : "(?m:$)";
    case "ahead":
      throw new Unsupported(
        "a lookahead ((?= or (?!) is supported only at the start of a pattern that begins with ^, e.g. ^(?=.*[0-9]).{8,}$",
      );
  }
}

export interface Parsed {
  alt: Alt;
  /** A lookbehind was written (re2js runs those only with its LOOKBEHINDS flag). */
  lookbehind: boolean;
  /**
   * Where `\b` and `\B` need the text read with ſ as s and K as k (see FOLDED_WORD): what each
   * side of a boundary is, for the `\b`s written under `i`; `cased`, the RE2 text of every atom
   * outside `i` (it must match s and ſ alike, k and K alike, for the text to be read so).
   */
  boundary: { i: boolean; cased: boolean; atoms: string[] };
}

/** Parses an ECMA pattern the native engine accepted with the `u` flag (plus `flags`). */
export function parseEcma(pattern: string, flags: Flags, captures = false): Parsed {
  const parser = new Parser(pattern, flags, captures);
  const alt = parser.disjunction(flags);
  // A caret in multi-line mode is written with a lookbehind.
  const lookbehind = parser.lookbehind || (flags.m && pattern.includes("^"));
  return {
    alt,
    lookbehind,
    boundary: { i: parser.boundaryI, cased: parser.boundaryCased, atoms: parser.cased },
  };
}
