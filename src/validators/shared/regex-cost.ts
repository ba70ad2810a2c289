// What compiling a pattern can cost, read from its text before any engine sees it. Both engines
// that run authors' patterns expand a counted repetition into copies: xspattern (Schematron's
// matches()) builds its automaton eagerly, and RE2 (tokenize(), replace(), CEL's matches())
// compiles `x{n}` into n copies of x. Nesting multiplies: `((a{1000}){1000}){1000}` is a
// billion positions, and a matches() pattern computed when the step ran took the server to
// 6.4 GB in 20 s (pentest 2026-11-30). RE2 refuses a nesting whose counts multiply past 1000,
// not a sequence of them: `a{1000}` a thousand times over (7 KB) took it 0.9–1.3 s and ~500 MB.
import { MAX_REGEX_COST } from "../limits.ts";

/**
 * The syntax a pattern is read in where the dialects differ: where a class ends (XSD nests one in
 * `[a-z-[aeiou]]`; RE2 reads a `]` first in a class as a character, and `[:alpha:]` inside one),
 * and RE2's `\Q…\E`, whose text is characters. A misreading only ever counts more atoms.
 */
export type RegexDialect = "xsd" | "ecma" | "re2";

/**
 * Positions the pattern expands to: an atom (a character, an escape, a class) is one, a sequence
 * or an alternation the sum of its parts, a quantified atom its size times the most copies the
 * quantifier makes (`{n,m}` m, `{n,}` n + 1, `*` `+` `?` one). `\` escapes one character, or
 * `\p{…}`/`\u{…}`/`\x{…}` whole; a class is one atom. A brace that is not a quantifier is a
 * character. Stops counting once past `limit`.
 */
export function regexCost(pattern: string, dialect: RegexDialect, limit = Number.POSITIVE_INFINITY): number {
  // One frame per open group: the sum of its closed alternatives, the current one, its last atom.
  type Frame = { done: number; seq: number; last: number };
  const stack: Frame[] = [{ done: 0, seq: 0, last: 0 }];
  let top = stack[0]!;
  // The sum over the frames, kept as it changes: a group closing moves its size into its parent.
  let total = 0;
  const atom = (size: number) => {
    top.seq += size;
    top.last = size;
    total += size;
  };
  for (let i = 0; i < pattern.length && total <= limit; i++) {
    const c = pattern[i];
    if (c === "\\" && dialect === "re2" && pattern[i + 1] === "Q") {
      // \Q…\E: every character up to \E (or the end) is one atom.
      const end = pattern.indexOf("\\E", i + 2);
      const stop = end < 0 ? pattern.length : end;
      atom(stop - (i + 2));
      i = end < 0 ? pattern.length : end + 1;
    } else if (c === "\\") {
      const next = pattern[i + 1];
      if ((next === "p" || next === "P" || next === "u" || next === "x") && pattern[i + 2] === "{") {
        const end = pattern.indexOf("}", i + 3);
        i = end < 0 ? pattern.length : end;
      } else i++;
      atom(1);
    } else if (c === "[") {
      i = classEnd(pattern, i, dialect);
      atom(1);
    } else if (c === "(") {
      top = { done: 0, seq: 0, last: 0 };
      stack.push(top);
    } else if (c === ")" && stack.length > 1) {
      const group = stack.pop()!;
      top = stack[stack.length - 1]!;
      const size = group.done + group.seq;
      total -= size;
      atom(size);
    } else if (c === "|") {
      top.done += top.seq;
      top.seq = 0;
      top.last = 0;
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 40));
      if (!m) {
        atom(1);
        continue;
      }
      const copies = Math.max(1, m[2] === undefined ? Number(m[1]) : m[3] ? Number(m[3]) : Number(m[1]) + 1);
      const added = top.last * (copies - 1);
      top.seq += added;
      top.last *= copies;
      total += added;
      i += m[0].length - 1;
    } else if (c !== "*" && c !== "+" && c !== "?") atom(1);
    // `*`, `+`, `?`: one copy, a loop or an optional atom, never expanded.
  }
  return total;
}

/** The index of the `]` that closes the class opened at `start`. */
function classEnd(pattern: string, start: number, dialect: RegexDialect): number {
  let depth = 1;
  let i = start + 1;
  if (dialect === "re2") {
    if (pattern[i] === "^") i++;
    if (pattern[i] === "]") i++;
  }
  for (; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") i++;
    else if (dialect === "xsd" && c === "[" && pattern[i - 1] === "-") depth++;
    else if (dialect === "re2" && c === "[") {
      // `[:alpha:]`, `[:^alpha:]`: its `]` is not the class's.
      const named = /^\[:\^?[a-z]+:\]/.exec(pattern.slice(i, i + 20));
      if (named) i += named[0].length - 1;
    } else if (c === "]" && --depth === 0) return i;
  }
  return pattern.length;
}

/**
 * Why `pattern` is refused before it is compiled (it would cost more than MAX_REGEX_COST
 * positions, docs/limits.md), or null. The same words at save, for a literal, and at run time.
 */
export function regexCostProblem(pattern: string, dialect: RegexDialect): string | null {
  const cost = regexCost(pattern, dialect, MAX_REGEX_COST);
  return cost > MAX_REGEX_COST
    ? `the pattern ${JSON.stringify(pattern.length > 60 ? `${pattern.slice(0, 60)}…` : pattern)} would expand to more than ${MAX_REGEX_COST} positions (its counted repetitions, multiplied where nested): it is not compiled`
    : null;
}
