// The one way Assay runs a regular expression that a workflow author wrote (text_rules patterns,
// json_schema `pattern` and `patternProperties`, csv_table `pattern`): on re2js, an RE2 engine
// whose time is linear in the text for every pattern, so no input can make it backtrack for
// seconds. JavaScript's own engine cannot be trusted with these: on `^(a|a)*b|^a*c$` over
// "a"*40+"c" it gives up after about a second and answers "no match", and a validator that
// reads "no match" as "valid" then passes bad data (issue #19). The exception: a pattern that is
// anchored and deterministic (`^SKU-[0-9]{4}$`, typebox's `(^id$|^name$)` key test) has a single
// path through any text, so it runs on JavaScript's engine in linear time (native-fast.ts).
//
// Patterns are written in ECMA-262 syntax with the `u` flag (JSON Schema's dialect) and keep its
// meaning (ecma-regex.ts rewrites them for RE2). What cannot run in linear time is refused when
// the config is saved: backreferences, and lookaheads other than a run of them right after a
// leading `^` (`^(?=.*[0-9])(?!.*\s).{8,}$`), which are evaluated here as separate anchored
// matches. docs/validators.md lists the dialect. Should the engine fail while matching, the
// step ends `error` with a finding (RegexLimitError), never as a pass.
import { RE2JS } from "re2js";
import { MAX_REGEX_LENGTH } from "../limits.ts";
import { StepLimitError } from "../limit-error.ts";
import { nativeFast, nativeTest } from "./native-fast.ts";
import {
  type Alt,
  FOLDED_WORD,
  type Flags,
  type Parsed,
  type Term,
  Unsupported,
  emitAlt,
  emitTerm,
  parseEcma,
} from "./ecma-regex.ts";

/** Captured at load: json-schema/user-patterns.ts swaps the global one while typebox compiles. */
const NativeRegExp = RegExp;

export interface UserRegex {
  readonly source: string;
  /** RE2 program size, summed over the parts: the most steps one character of text can cost. */
  readonly cost: number;
  /** True when the pattern matches somewhere in `text` (like RegExp.prototype.test). */
  test(text: string): boolean;
  /** UTF-16 offsets where successive non-overlapping matches start (matchAll with `g`), at most `max`. */
  matchStarts(text: string, max: number): number[];
}

export type UserRegexCheck = { ok: true; regex: UserRegex } | { ok: false; code: string; message: string };

/** The engine failed on this input: the step ends `error` with this finding, never passes. */
export class RegexLimitError extends StepLimitError {
  constructor(pattern: string, cause: unknown) {
    super({
      severity: "error",
      code: "regex.engine_limit",
      message: `the regular expression ${JSON.stringify(pattern)} could not be evaluated on this input (${
        cause instanceof Error ? cause.message : String(cause)
      }); the data was not checked`,
      path: null,
      line: null,
      column: null,
      rule: pattern,
    });
  }
}

/** A branch `^(?=A)(?!B)…R`: every lookahead and R are matched at offset 0 on their own. */
interface AnchoredBranch {
  ahead: Array<{ negate: boolean; re: RE2JS }>;
  rest: RE2JS;
}

const deep = (alt: Alt, pred: (t: Term) => boolean): boolean =>
  alt.some((seq) => seq.some((t) => pred(t) || ((t.t === "group" || t.t === "ahead") && deep(t.body, pred))));
const hasAhead = (alt: Alt) => deep(alt, (t) => t.t === "ahead");

/** Top-level branches, looking through groups that only wrap alternatives: `(a|b)|c` → a, b, c. */
function branches(alt: Alt): Term[][] {
  return alt.flatMap((seq) => {
    const only = seq.length === 1 ? seq[0] : null;
    return only?.t === "group" && only.open === "(?:" && only.quant === "" ? branches(only.body) : [seq];
  });
}

/** RE2 text of whole branches; a multi-line `$` that ends its branch may consume the line end. */
const emitBranches = (seqs: Term[][]) =>
  seqs.map((seq) => seq.map((t, i) => emitTerm(t, i === seq.length - 1)).join("")).join("|");

function parseFlags(flags: string): Flags {
  return { i: flags.includes("i"), m: flags.includes("m"), s: flags.includes("s") };
}

function guard<T>(pattern: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    throw new RegexLimitError(pattern, e);
  }
}

/**
 * Compiles an author's pattern (ECMA-262 syntax, `u` always on) with optional flags among i, m, s.
 * Refusals carry a code for the save-time 400: regex_too_long, invalid_regex, unsupported_regex.
 */
export function compileUserRegex(pattern: string, flags = ""): UserRegexCheck {
  if (pattern.length > MAX_REGEX_LENGTH)
    return { ok: false, code: "regex_too_long", message: `is longer than ${MAX_REGEX_LENGTH} characters` };
  try {
    new NativeRegExp(pattern, `u${flags}`);
  } catch (e) {
    return {
      ok: false,
      code: "invalid_regex",
      message: `is not a valid regular expression: ${(e as Error).message}`,
    };
  }
  try {
    return { ok: true, regex: build(pattern, parseFlags(flags)) };
  } catch (e) {
    const why =
      e instanceof Unsupported ? e.message : (e as Error).message.replace(/^error parsing regexp: /, "");
    return {
      ok: false,
      code: "unsupported_regex",
      message: `is not supported (patterns run on a linear-time engine, docs/validators.md): ${why}`,
    };
  }
}

/** What Schematron's tokenize() and replace() ask of a pattern: RE2JS's test and matchAll. */
export interface RangedRegex {
  test(text: string): boolean;
  /** Successive matches as RegExp's matchAll gives them: index, the match and its groups. */
  matchAll(text: string): Iterable<RegExpMatchArray>;
}

/**
 * A pattern for functions that need where each match ends and what its groups hold (Schematron's
 * tokenize() and replace()): the same dialect and checks as compileUserRegex, lookaheads refused
 * (they are run as separate anchored matches there, which gives no match's end).
 */
export function compileRangedRegex(
  pattern: string,
  flags = "",
): { ok: true; re: RangedRegex } | { ok: false; code: string; message: string } {
  const checked = compileUserRegex(pattern, flags);
  if (!checked.ok) return checked;
  const parsed = parseEcma(pattern, parseFlags(flags), true);
  if (hasAhead(parsed.alt))
    return { ok: false, code: "unsupported_regex", message: "is not supported here: lookaheads" };
  const re2Flags =
    (flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0) | (parsed.lookbehind ? RE2JS.LOOKBEHINDS : 0);
  const re = RE2JS.compile(emitBranches(parsed.alt), re2Flags);
  const read = reading(parsed.boundary);
  if (read === asIs) return { ok: true, re };
  // Matched on the text as read, the groups taken from the text as written (the same offsets).
  return {
    ok: true,
    re: {
      test: (text) => re.test(read(text)),
      *matchAll(text) {
        const m = re.matcher(read(text));
        while (m.find()) {
          const groups: Array<string | undefined> = [];
          for (let g = 0; g <= re.groupCount(); g++)
            groups.push(m.start(g) < 0 ? undefined : text.slice(m.start(g), m.end(g)));
          yield Object.assign(groups as RegExpMatchArray, { index: m.start(0), input: text });
        }
      },
    },
  };
}

const FOLDABLE = new RegExp(`[${FOLDED_WORD.map(([from]) => from).join("")}]`, "g");
const FOLD = new Map(FOLDED_WORD);
const foldWord = (text: string) => text.replace(FOLDABLE, (c) => FOLD.get(c) as string);
const asIs = (text: string) => text;

/**
 * How a text is read: with ſ as s and K as k when a `\b` or `\B` stands under `i` and nothing
 * outside `i` tells them apart (ecma-regex.ts FOLDED_WORD says why that is exact), so that RE2's
 * ASCII word boundary sees them as the word characters ECMA says they are there. A pattern that
 * also has a `\b` outside `i`, or an atom outside `i` that matches s but not ſ (`(?-i:s)`,
 * `(?-i:\w)`), is read as written: the one case where those two count as non-word characters.
 */
function reading(boundary: Parsed["boundary"]): (text: string) => string {
  if (!boundary.i || boundary.cased) return asIs;
  for (const atom of boundary.atoms) {
    const re = RE2JS.compile(`^(?:${atom})$`);
    if (FOLDED_WORD.some(([from, to]) => re.test(from) !== re.test(to))) return asIs;
  }
  return foldWord;
}

function build(pattern: string, flags: Flags): UserRegex {
  const parsed = parseEcma(pattern, flags);
  const re2Flags = (flags.i ? RE2JS.CASE_INSENSITIVE : 0) | (parsed.lookbehind ? RE2JS.LOOKBEHINDS : 0);
  const compile = (source: string) => RE2JS.compile(source, re2Flags);
  const read = reading(parsed.boundary);
  if (!hasAhead(parsed.alt)) {
    const re = compile(emitBranches(parsed.alt));
    // A deterministic anchored pattern answers the same on JavaScript's engine, in linear time
    // and 5–15× faster than on re2js for short strings (native-fast.ts says why it is safe).
    const fast = flags.i || flags.m || flags.s ? null : nativeFast(pattern, "");
    return {
      source: pattern,
      cost: re.programSize(),
      test: fast
        ? (text) => {
            try {
              return nativeTest(fast, text);
            } catch (e) {
              throw new RegexLimitError(pattern, e);
            }
          }
        : (text) => guard(pattern, () => re.test(read(text))),
      matchStarts: (text, max) => guard(pattern, () => starts(re, read(text), max)),
    };
  }
  const plain: Term[][] = [];
  const anchored: AnchoredBranch[] = [];
  for (const seq of branches(parsed.alt)) {
    if (!hasAhead([seq])) {
      plain.push(seq);
      continue;
    }
    // ^ (?=…)(?!…)… rest: the caret pins every part to offset 0, so each can be its own match.
    let i = seq[0]?.t === "caret" && !seq[0].m ? 1 : -1;
    const ahead: AnchoredBranch["ahead"] = [];
    while (i > 0 && seq[i]?.t === "ahead") {
      const a = seq[i] as Extract<Term, { t: "ahead" }>;
      if (hasAhead(a.body)) break;
      ahead.push({ negate: a.negate, re: compile(`^(?:${emitAlt(a.body)})`) });
      i++;
    }
    const rest = i > 0 ? seq.slice(i) : seq;
    if (i < 0 || ahead.length === 0 || hasAhead([rest]))
      emitTerm({ t: "ahead", negate: false, body: [] }, false);
    anchored.push({ ahead, rest: compile(`^(?:${emitBranches([rest])})`) });
  }
  const re = plain.length > 0 ? compile(emitBranches(plain)) : null;
  const atStart = (text: string) =>
    anchored.some((b) => b.ahead.every((a) => a.re.test(text) !== a.negate) && b.rest.test(text));
  const parts = [...(re ? [re] : []), ...anchored.flatMap((b) => [b.rest, ...b.ahead.map((a) => a.re)])];
  return {
    source: pattern,
    cost: parts.reduce((sum, r) => sum + r.programSize(), 0),
    test: (text) =>
      guard(pattern, () => {
        const t = read(text);
        return atStart(t) || (re?.test(t) ?? false);
      }),
    matchStarts: (text, max) =>
      guard(pattern, () => {
        const t = read(text);
        const out = re ? starts(re, t, max) : [];
        return atStart(t) && out[0] !== 0 ? [0, ...out].slice(0, max) : out;
      }),
  };
}

/** Collected eagerly so that an engine failure surfaces inside guard(). */
function starts(re: RE2JS, text: string, max: number): number[] {
  const out: number[] = [];
  if (max <= 0) return out;
  for (const m of re.matchAll(text)) {
    out.push(m.index ?? 0);
    if (out.length >= max) break;
  }
  return out;
}
