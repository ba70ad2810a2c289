// Which author patterns may run on JavaScript's own engine after all (user-regex.ts runs the rest
// on re2js). re2js is a linear-time engine written in JavaScript: on the bench's 1 KB order, its
// nine `^SKU-[0-9]{4}$` tests were ~10 % of a sync run's CPU. The native engine backtracks, which
// is why it cannot be trusted in general (it gives up on hard inputs and answers "no match").
//
// It is trusted here only for patterns where backtracking cannot happen to any extent that
// matters: anchored at the start (`^`, no flags), then a flat sequence of single-character atoms
// (a literal, an escape such as \d, `.`, a class), each with an optional greedy quantifier,
// optionally ending in `$` (or several such branches, `^a$|^b$`) — and *deterministic*: every atom whose count may vary matches no
// character that could come right after it. Then the greedy path is the only path: the engine
// tries one start (the sticky flag pins it to offset 0), walks the text once, and when that walk
// fails no backtracking can succeed, so giving back characters costs at most one failed test per
// character. The answer is exactly the pattern's meaning, in time linear in the text.
//
// Anything else (groups, alternation of unanchored branches, lookarounds, \b, \p{…}, lazy quantifiers, flags) returns
// null and stays on re2js.

import { DIGIT, LINE_END, type Range, SPACE, WORD } from "./ecma-regex.ts";

type Ranges = Range[];
interface Atom {
  set: Ranges;
  min: number;
  max: number;
}

/** Captured at load: json-schema/user-patterns.ts swaps the global one while typebox compiles. */
const NativeRegExp = RegExp;
const MAX_CP = 0x10ffff;
const CONTROL: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };
const SYNTAX = new Set("^$\\.*+?()[]{}|/");

function normalize(r: Ranges): Ranges {
  const s = [...r].sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of s) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complement(r: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [lo, hi] of normalize(r)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

function intersects(a: Ranges, b: Ranges): boolean {
  for (const [alo, ahi] of a) for (const [blo, bhi] of b) if (alo <= bhi && blo <= ahi) return true;
  return false;
}

/** Reads patterns of the accepted form; any other construct throws, meaning "not fast". */
class Reader {
  private i = 0;
  private readonly cps: number[];
  constructor(source: string) {
    this.cps = Array.from(source, (c) => c.codePointAt(0)!);
  }
  skip(n: number) {
    this.i += n;
  }
  startsWith(s: string): boolean {
    return Array.from(s).every((c, k) => this.cps[this.i + k] === c.codePointAt(0));
  }
  get done() {
    return this.i >= this.cps.length;
  }
  peek(): string | undefined {
    const c = this.cps[this.i];
    return c === undefined ? undefined : String.fromCodePoint(c);
  }
  take(): number {
    const c = this.cps[this.i++];
    if (c === undefined) throw new Error("end");
    return c;
  }
  /** An escape after `\`: a class escape, a control escape, or an escaped syntax character. */
  escape(): Ranges {
    const c = String.fromCodePoint(this.take());
    if (c === "d") return DIGIT;
    if (c === "D") return complement(DIGIT);
    if (c === "w") return WORD;
    if (c === "W") return complement(WORD);
    if (c === "s") return SPACE;
    if (c === "S") return complement(SPACE);
    if (c in CONTROL) return [[CONTROL[c]!, CONTROL[c]!]];
    if (SYNTAX.has(c) || c === "-") return [[c.codePointAt(0)!, c.codePointAt(0)!]];
    throw new Error("escape");
  }
  /** One member of a class: a character, or an escape standing for one or a set. */
  private member(): { cp: number | null; set: Ranges } {
    const c = this.take();
    if (c === 0x5c /* \ */) {
      const set = this.escape();
      return { cp: set.length === 1 && set[0]![0] === set[0]![1] ? set[0]![0] : null, set };
    }
    if (c === 0x5b /* [ */) throw new Error("nested class");
    return { cp: c, set: [[c, c]] };
  }
  klass(): Ranges {
    const negate = this.peek() === "^";
    if (negate) this.i++;
    const out: Ranges = [];
    while (this.peek() !== "]") {
      const a = this.member();
      if (this.peek() === "-" && this.cps[this.i + 1] !== 0x5d) {
        this.i++;
        const b = this.member();
        if (a.cp === null || b.cp === null || a.cp > b.cp) throw new Error("range");
        out.push([a.cp, b.cp]);
      } else out.push(...a.set);
    }
    this.i++;
    return negate ? complement(out) : normalize(out);
  }
  atom(): Ranges {
    const c = this.take();
    if (c === 0x5c) return this.escape();
    if (c === 0x5b) return this.klass();
    if (c === 0x2e /* . */) return complement(LINE_END);
    if (SYNTAX.has(String.fromCodePoint(c))) throw new Error("syntax");
    return [[c, c]];
  }
  private int(): number {
    let n = "";
    while (/[0-9]/.test(this.peek() ?? "")) n += String.fromCodePoint(this.take());
    if (!n) throw new Error("count");
    return Number(n);
  }
  /** A greedy quantifier, or {1,1} when none follows. */
  quantifier(): [number, number] {
    const c = this.peek();
    let q: [number, number];
    if (c === "*") q = [0, Number.POSITIVE_INFINITY];
    else if (c === "+") q = [1, Number.POSITIVE_INFINITY];
    else if (c === "?") q = [0, 1];
    else if (c === "{") {
      this.i++;
      const min = this.int();
      let max = min;
      if (this.peek() === ",") {
        this.i++;
        max = this.peek() === "}" ? Number.POSITIVE_INFINITY : this.int();
      }
      if (this.peek() !== "}") throw new Error("count");
      q = [min, max];
    } else return [1, 1];
    this.i++;
    if (this.peek() === "?") throw new Error("lazy");
    return q;
  }
}

/** One branch: `^`, atoms, an optional `$`; it ends at `|`, `)` or the end. */
function branch(r: Reader): Atom[] {
  if (r.peek() !== "^") throw new Error("unanchored");
  r.skip(1);
  const out: Atom[] = [];
  for (let c = r.peek(); c !== undefined && c !== "|" && c !== ")"; c = r.peek()) {
    if (c === "$") {
      r.skip(1);
      const next = r.peek();
      if (next !== undefined && next !== "|" && next !== ")") throw new Error("$ inside");
      break;
    }
    const set = r.atom();
    const [min, max] = r.quantifier();
    out.push({ set, min, max });
  }
  return out;
}

/**
 * The branches of `B|B|…`, optionally inside one group that is the whole pattern: typebox tests
 * `additionalProperties: false` keys with `(^id$|^name$|…)`, built from the schema's names.
 * Branches are tried one after another from offset 0, each in linear time.
 */
function branches(source: string): Atom[][] | null {
  try {
    const r = new Reader(source);
    const group = r.peek() === "(";
    if (group) r.skip(r.startsWith("(?:") ? 3 : 1);
    const out = [branch(r)];
    while (r.peek() === "|") {
      r.skip(1);
      out.push(branch(r));
    }
    if (group) {
      if (r.peek() !== ")") return null;
      r.skip(1);
    }
    return r.done ? out : null;
  } catch {
    return null;
  }
}

/** True when no atom of variable count matches a character that may follow it. */
function deterministic(list: Atom[]): boolean {
  for (let i = 0; i < list.length; i++) {
    const a = list[i]!;
    if (a.min === a.max) continue;
    for (let j = i + 1; j < list.length; j++) {
      if (intersects(a.set, list[j]!.set)) return false;
      if (list[j]!.min > 0) break;
    }
  }
  return true;
}

/**
 * A native RegExp for `source` (ECMA syntax, `u`) when it is of the form above and no flags are
 * asked for; null otherwise. Call `test` through nativeTest (the sticky flag's lastIndex).
 */
export function nativeFast(source: string, flags: string): RegExp | null {
  if (flags !== "") return null;
  const list = branches(source);
  if (!list?.every(deterministic)) return null;
  try {
    return new NativeRegExp(source, "uy");
  } catch {
    return null;
  }
}

/** One attempt at offset 0: sticky, so the engine tries no other start. */
export function nativeTest(re: RegExp, text: string): boolean {
  re.lastIndex = 0;
  return re.test(text);
}
