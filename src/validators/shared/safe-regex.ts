// Author-written regexes run against untrusted submissions, and JavaScript's backtracking engine
// can take exponential time on patterns like (a+)+$; a thread stuck in a regex cannot even be
// interrupted. We reject at save time the classic shape: a repeated group whose body itself
// repeats (star height 2), unless the body has a mandatory literal that none of its repeated
// atoms can match, a separator that makes the split unambiguous: (-[a-z]+)* is fine, (\w+\s?)+
// is not. A heuristic (overlapping alternations slip through); the step timeout is the backstop.
import { MAX_REGEX_LENGTH } from "../limits.ts";

export type RegexCheck = { ok: true; regex: RegExp } | { ok: false; code: string; message: string };

interface Frame {
  repeats: boolean; // the body contains a repeated atom
  atoms: string[]; // sources of the repeated atoms
  literals: string[]; // characters every match of the body must contain
  alternation: boolean;
  lookaround: boolean;
  start: number; // where the group's "(" is, to take its source when the group repeats
}

const frame = (start = 0, lookaround = false): Frame => ({
  repeats: false,
  atoms: [],
  literals: [],
  alternation: false,
  lookaround,
  start,
});

function atomMatches(atom: string, c: string): boolean {
  try {
    return new RegExp(`^(?:${atom})$`, "u").test(c);
  } catch {
    return true; // unknown: assume overlap (the conservative answer)
  }
}

function separated(f: Frame): boolean {
  return !f.alternation && f.literals.some((c) => f.atoms.every((a) => !atomMatches(a, c)));
}

/** Length of the escape starting at i (\d, \u{1F600}, \x41, \p{L} …). */
function escapeLength(p: string, i: number): number {
  const m = /^\\(?:u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[pP]\{[^}]*\}|c[A-Za-z]|.)/su.exec(
    p.slice(i),
  );
  return m ? m[0].length : 1;
}

/** True when the pattern repeats a group whose body repeats, without a separating literal. */
export function hasNestedQuantifier(pattern: string): boolean {
  const stack: Frame[] = [frame()];
  let i = 0;
  while (i < pattern.length) {
    const top = stack[stack.length - 1];
    const c = pattern[i];
    if (c === "|") {
      top.alternation = true;
      i++;
      continue;
    }
    if (c === "(") {
      const prefix = /^\((\?:|\?=|\?!|\?<=|\?<!|\?<[^>]*>)?/.exec(pattern.slice(i))?.[0] ?? "(";
      stack.push(frame(i, /^\(\?(=|!|<=|<!)/.test(prefix)));
      i += prefix.length;
      continue;
    }
    let atom: string;
    let inner: Frame | null = null;
    if (c === ")") {
      inner = stack.length > 1 ? (stack.pop() as Frame) : frame(i);
      atom = pattern.slice(inner.start, i + 1);
      i++;
    } else {
      const len = c === "\\" ? escapeLength(pattern, i) : c === "[" ? skipClass(pattern, i) - i : 1;
      atom = pattern.slice(i, i + len);
      i += len;
    }
    const q = readQuantifier(pattern, i);
    if (q) i = q.end;
    const parent = stack[stack.length - 1];
    if (inner) {
      if (q?.repeats && inner.repeats && !separated(inner)) return true;
      parent.repeats ||= inner.repeats || !!q?.repeats;
      parent.atoms.push(...inner.atoms);
      if (q?.repeats) parent.atoms.push(atom);
      if (!q && !inner.alternation && !inner.lookaround) parent.literals.push(...inner.literals);
      continue;
    }
    if (q?.repeats) {
      parent.repeats = true;
      parent.atoms.push(atom);
    } else if (
      !q?.optional &&
      atom.length > 0 &&
      (atom.length === 1 ? !"^$.".includes(atom) : /^\\[^\w\s]$/.test(atom))
    ) {
      parent.literals.push(atom.length === 1 ? atom : atom[1]);
    }
  }
  return false;
}

function skipClass(p: string, start: number): number {
  let i = start + 1;
  if (p[i] === "^") i++;
  if (p[i] === "]") i++;
  while (i < p.length && p[i] !== "]") i += p[i] === "\\" ? 2 : 1;
  return i + 1;
}

function readQuantifier(p: string, i: number): { repeats: boolean; optional: boolean; end: number } | null {
  const c = p[i];
  let end: number;
  let repeats: boolean;
  let optional: boolean;
  if (c === "*" || c === "+") {
    repeats = true;
    optional = c === "*";
    end = i + 1;
  } else if (c === "?") {
    repeats = false;
    optional = true;
    end = i + 1;
  } else if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
    if (!m) return null;
    repeats = m[2] !== undefined && (m[3] === "" || Number(m[3]) > 1);
    optional = m[1] === "0";
    end = i + m[0].length;
  } else return null;
  if (p[end] === "?" || p[end] === "+") end++; // lazy / possessive-looking suffix
  return { repeats, optional, end };
}

/** Compiles an author regex with the unicode flag plus `flags`, refusing unsafe shapes. */
export function compileSafeRegex(pattern: string, flags = ""): RegexCheck {
  if (pattern.length > MAX_REGEX_LENGTH) {
    return { ok: false, code: "regex_too_long", message: `is longer than ${MAX_REGEX_LENGTH} characters` };
  }
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, `u${flags}`);
  } catch (e) {
    return {
      ok: false,
      code: "invalid_regex",
      message: `is not a valid regular expression: ${(e as Error).message}`,
    };
  }
  if (hasNestedQuantifier(pattern)) {
    return {
      ok: false,
      code: "unsafe_regex",
      message:
        "repeats a group whose body also repeats, e.g. (a+)+, which can take exponential time; " +
        "separate the repeats with a character they cannot match, e.g. (-[a-z]+)*, or rewrite it",
    };
  }
  return { ok: true, regex };
}

// --- Linear-time regexes (the inline lane: src/validators/json-schema/bounded.ts) -------------
// Stricter than compileSafeRegex: without unbounded quantifiers or backreferences, the
// backtracking tree for one start position has at most `paths` leaves, each at most `width` atoms
// deep. A pattern anchored with ^ (no m flag) is tried at position 0 only, and each path consumes
// the string, so its cost per character is ~paths; an unanchored one restarts at every position:
// ~paths × width per character. Measured in Bun 1.4.5 on 16 KiB of adversarial input: a cost of
// 256 takes ~4 ms anchored and ~10 ms unanchored; (a|a){10}b, cost 1024 × 11, takes ~240 ms.

/** Backtracking steps per input character a regex may cost to count as linear. */
export const MAX_REGEX_STEPS_PER_CHAR = 256;

interface RegexCost {
  paths: number;
  width: number;
}

/** Σ b^k for k in [min, max]: the paths through a body of b paths repeated min..max times. */
function repeatPaths(b: number, min: number, max: number): number {
  if (b <= 1) return max - min + 1;
  let total = 0;
  let term = b ** min;
  for (let k = min; k <= max && total <= Number.MAX_SAFE_INTEGER; k++, term *= b) total += term;
  return total > Number.MAX_SAFE_INTEGER ? Number.POSITIVE_INFINITY : total;
}

/** Recursive descent over a pattern that compiles with the u flag; null when unbounded. */
class CostParser {
  i = 0;
  constructor(readonly p: string) {}

  alternation(): RegexCost | null {
    const out = { paths: 0, width: 0 };
    for (;;) {
      const seq = this.sequence();
      if (!seq) return null;
      out.paths += seq.paths;
      out.width = Math.max(out.width, seq.width);
      if (this.p[this.i] !== "|") return out;
      this.i++;
    }
  }

  sequence(): RegexCost | null {
    const out = { paths: 1, width: 0 };
    while (this.i < this.p.length && this.p[this.i] !== "|" && this.p[this.i] !== ")") {
      const atom = this.atom();
      const term = atom && this.quantified(atom);
      if (!term) return null;
      out.paths *= term.paths;
      out.width += term.width;
    }
    return out;
  }

  atom(): RegexCost | null {
    const { p } = this;
    const c = p[this.i];
    if (c === "(") {
      // (?: (?= (?! (?<= (?<! (?<name> and modifiers such as (?i:
      const open = /^\((?:\?(?:[:=!]|<[=!]|<[^>]+>|[a-z]*-?[a-z]*:))?/.exec(p.slice(this.i))?.[0] ?? "(";
      this.i += open.length;
      const body = this.alternation();
      if (!body || p[this.i] !== ")") return null;
      this.i++;
      return body;
    }
    if (c === "\\") {
      if (/[1-9k]/.test(p[this.i + 1] ?? "")) return null; // backreference: \1, \k<name>
      this.i += escapeLength(p, this.i);
    } else if (c === "[") {
      this.i = skipClass(p, this.i);
    } else if ("*+?{}".includes(c)) {
      return null; // a quantifier with nothing to repeat: not valid with the u flag
    } else {
      this.i += (p.codePointAt(this.i) ?? 0) > 0xffff ? 2 : 1;
    }
    return { paths: 1, width: 1 };
  }

  quantified(atom: RegexCost): RegexCost | null {
    const m = /^(?:(\?)|\{(\d+)(?:(,)(\d*))?\}|[*+])\??/.exec(this.p.slice(this.i));
    if (!m) return atom;
    if (!m[1] && m[2] === undefined) return null; // * or +
    const min = m[1] ? 0 : Number(m[2]);
    const max = m[1] ? 1 : m[3] === undefined ? min : m[4] === "" ? Number.POSITIVE_INFINITY : Number(m[4]);
    if (!Number.isFinite(max)) return null; // {m,}
    this.i += m[0].length;
    return { paths: repeatPaths(atom.paths, min, max), width: atom.width * max };
  }
}

/**
 * Backtracking steps per input character the pattern may cost (see above); Infinity when it has
 * an unbounded quantifier or a backreference, is too long, or does not compile with the u flag.
 */
export function regexStepsPerChar(pattern: string): number {
  if (pattern.length > MAX_REGEX_LENGTH) return Number.POSITIVE_INFINITY;
  try {
    new RegExp(pattern, "u");
  } catch {
    return Number.POSITIVE_INFINITY;
  }
  const parser = new CostParser(pattern);
  // Anchored: every top-level branch starts with ^ (typebox compiles patterns without the m flag).
  const anchored = topLevelAnchored(pattern);
  const cost = parser.alternation();
  if (!cost || parser.i !== pattern.length) return Number.POSITIVE_INFINITY;
  return anchored ? cost.paths : cost.paths * Math.max(1, cost.width);
}

/** True when every top-level alternative of the pattern starts with ^. */
function topLevelAnchored(p: string): boolean {
  let depth = 0;
  let branchStart = true;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (branchStart && c !== "^") return false;
    branchStart = false;
    if (c === "\\") i += escapeLength(p, i) - 1;
    else if (c === "[") i = skipClass(p, i) - 1;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) branchStart = true;
  }
  return !branchStart;
}

/** True when a backtracking engine matches the pattern in time linear in the input (u flag). */
export function isBoundedRegex(pattern: string): boolean {
  return regexStepsPerChar(pattern) <= MAX_REGEX_STEPS_PER_CHAR;
}
