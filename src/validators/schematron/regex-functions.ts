// fn:tokenize and fn:replace for Schematron, on RE2 (issue #19, hole 5, found against the built
// binary). fontoxpath runs fn:matches on an automaton (linear time), but tokenize() and replace()
// on JavaScript's own RegExp, which backtracks: on `(a+)+b|!` over "a"*40 + "!" it gave up after
// about a second and answered "no match", so `count(tokenize(., '(a+)+b|!')) = 1` passed a document
// holding "!". These take their place (xpath.ts resolves the names here): the same dialect as
// every author's pattern (ECMA-262 syntax, as fontoxpath read them; docs/validators.md), linear
// time, and a pattern RE2 cannot run is an error of the assertion, never a pass.
// fn:matches#2 is fontoxpath's engine (xspattern, XSD syntax) behind a cost check: xspattern
// expands counted repetitions as it compiles, and a pattern computed when the step ran (which no
// save-time check reads) took the server to 6.4 GB in 20 s (pentest 2026-11-30). fontoxpath's
// own matches() also keeps every pattern it compiled for good; these caches are bounded.
import fx from "fontoxpath";
import { compile as compileXsPattern } from "xspattern";
import { MAX_REGEX_COST } from "../limits.ts";
import { regexCost, regexCostProblem } from "../shared/regex-cost.ts";
import { compileRangedRegex, type RangedRegex } from "../shared/user-regex.ts";

export const REGEX_NS = "urn:assay:schematron:regex";

/**
 * Compiled patterns kept per worker; a schema holds few, the bounds only stop growth: at most
 * 1000, and at most CACHED_COST positions (regexCost) in all, since one may weigh ~8 MB.
 */
class PatternCache<T> {
  readonly #kept = new Map<string, { value: T; cost: number }>();
  #cost = 0;
  get(key: string): T | undefined {
    return this.#kept.get(key)?.value;
  }
  set(key: string, value: T, cost: number): void {
    if (this.#kept.size >= MAX_CACHED || this.#cost + cost > CACHED_COST) {
      this.#kept.clear();
      this.#cost = 0;
    }
    this.#kept.set(key, { value, cost });
    this.#cost += cost;
  }
}
const MAX_CACHED = 1000;
const CACHED_COST = 10 * MAX_REGEX_COST;

const cache = new PatternCache<RangedRegex>();

function compile(pattern: string, flags: string): RangedRegex {
  if (/[^smi]/.test(flags)) throw new Error(`FORX0001: flags "${flags}": Assay supports s, m and i`);
  const key = `${flags}/${pattern}`;
  let re = cache.get(key);
  if (re) return re;
  const costly = regexCostProblem(pattern, "ecma");
  if (costly) throw new Error(`FORX0002: ${costly}`);
  const c = compileRangedRegex(pattern, flags);
  if (!c.ok) throw new Error(`FORX0002: the pattern ${JSON.stringify(pattern)} ${c.message}`);
  re = c.re;
  if (re.test(""))
    throw new Error(`FORX0003: the pattern ${JSON.stringify(pattern)} matches the empty string`);
  cache.set(key, re, regexCost(pattern, "ecma"));
  return re;
}

const xsPatterns = new PatternCache<(text: string) => boolean>();

/**
 * fn:matches#2's pattern compiled as fontoxpath's matches() compiles it (xspattern, XPath's
 * dialect of XSD regular expressions), once its cost is known to be within MAX_REGEX_COST.
 * Throws FORX0002 with the reason, as the save-time check (xpath.ts) words it.
 */
export function compileMatches(pattern: string): (text: string) => boolean {
  let test = xsPatterns.get(pattern);
  if (test) return test;
  const costly = regexCostProblem(pattern, "xsd");
  if (costly) throw new Error(`FORX0002: ${costly}`);
  try {
    test = compileXsPattern(pattern, { language: "xpath" });
  } catch (e) {
    throw new Error(`FORX0002: ${((e as Error).message ?? String(e)).split("\n")[0]}`);
  }
  xsPatterns.set(pattern, test, regexCost(pattern, "xsd"));
  return test;
}

/**
 * Why a literal pattern (and flags) of tokenize() or replace() can never run, or null when it can:
 * the save-time check (xpath.ts) compiles it as every run would, so save and run agree.
 */
export function regexLiteralProblem(pattern: string, flags = ""): string | null {
  try {
    compile(pattern, flags);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

function tokenize(input: string | null, pattern: string, flags = ""): string[] {
  const re = compile(pattern, flags);
  if (!input) return [];
  const out: string[] = [];
  let at = 0;
  for (const m of re.matchAll(input)) {
    out.push(input.slice(at, m.index));
    at = (m.index ?? 0) + m[0].length;
  }
  out.push(input.slice(at));
  return out;
}

/**
 * Why an XPath replacement string can never be used (FORX0004), or null: `\` escapes only `\` or
 * `$`, and `$` is followed by a group's digits. Checked before any match, as the save-time check
 * (xpath.ts) does for a literal one, so save and run agree and an input without a match does not
 * hide it.
 */
export function replacementProblem(replacement: string): string | null {
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i];
    if (c === "\\") {
      const next = replacement[i + 1];
      if (next !== "\\" && next !== "$") return 'FORX0004: "\\" in a replacement escapes only "\\" or "$"';
      i++;
    } else if (c === "$" && !/[0-9]/.test(replacement[i + 1] ?? ""))
      return 'FORX0004: "$" in a replacement names a group by its number';
  }
  return null;
}

/** XPath's replacement string (replacementProblem's): `$N` a group (the longest N that is one). */
function expand(replacement: string, m: RegExpMatchArray): string {
  let out = "";
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i];
    if (c === "\\") out += replacement[++i];
    else if (c === "$") {
      let digits = replacement[++i]!;
      while (/[0-9]/.test(replacement[i + 1] ?? "") && Number(digits + replacement[i + 1]) < m.length)
        digits += replacement[++i];
      // A group the pattern does not have is the empty string.
      out += Number(digits) < m.length ? (m[Number(digits)] ?? "") : "";
    } else out += c;
  }
  return out;
}

function replace(input: string | null, pattern: string, replacement: string, flags = ""): string {
  const re = compile(pattern, flags);
  const bad = replacementProblem(replacement);
  if (bad) throw new Error(bad);
  if (!input) return "";
  let out = "";
  let at = 0;
  for (const m of re.matchAll(input)) {
    out += input.slice(at, m.index) + expand(replacement, m);
    at = (m.index ?? 0) + m[0].length;
  }
  return out + input.slice(at);
}

let registered = false;

/** Registers the five signatures in REGEX_NS (once per worker). */
export function registerRegexFunctions(): void {
  if (registered) return;
  registered = true;
  const name = (localName: string) => ({ namespaceURI: REGEX_NS, localName });
  const s = "xs:string";
  fx.registerCustomXPathFunction(name("matches"), ["xs:string?", s], "xs:boolean", (_, i, p) =>
    compileMatches(p)(i ?? ""),
  );
  fx.registerCustomXPathFunction(name("tokenize"), ["xs:string?", s], "xs:string*", (_, i, p) =>
    tokenize(i, p),
  );
  fx.registerCustomXPathFunction(name("tokenize"), ["xs:string?", s, s], "xs:string*", (_, i, p, f) =>
    tokenize(i, p, f),
  );
  fx.registerCustomXPathFunction(name("replace"), ["xs:string?", s, s], s, (_, i, p, r) => replace(i, p, r));
  fx.registerCustomXPathFunction(name("replace"), ["xs:string?", s, s, s], s, (_, i, p, r, f) =>
    replace(i, p, r, f),
  );
}

/** Whether fn:`localName`#`arity` is one of ours. */
export const isRegexFunction = (localName: string, arity: number) =>
  (localName === "matches" && arity === 2) ||
  (localName === "tokenize" && (arity === 2 || arity === 3)) ||
  (localName === "replace" && (arity === 3 || arity === 4));
