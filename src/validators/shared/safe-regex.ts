// Only CEL's matches() still runs on JavaScript's backtracking engine (the assertions validator,
// whose engine is being replaced); every other author pattern runs on RE2 (user-regex.ts), which
// needs no such guess. JavaScript's engine can take exponential time on patterns like (a+)+$,
// and a thread stuck in a regex cannot even be interrupted. We reject at save time the classic
// shape: a repeated group whose body itself
// repeats (star height 2), unless the body has a mandatory literal that none of its repeated
// atoms can match, a separator that makes the split unambiguous: (-[a-z]+)* is fine, (\w+\s?)+
// is not. A heuristic (overlapping alternations slip through); the step timeout is the backstop.
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
