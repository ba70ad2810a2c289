// `//name` inside a test answered from the document's name index instead of a tree walk. EN 16931
// has ~800 tests on the root element, most of them `not(//cac:X/cbc:Y)`: walking the tree for
// each was 90% of a run (docs/benchmarks.md). `//cac:X` at the start of a path is every cac:X of
// the document in document order, which is what the index holds; it becomes a variable bound per
// document. Only where that is certain: after an operator, bracket or keyword operator (not after
// a step: `a//b` is relative to a, and so is `to//b` or XHTML `div//p`, where the word is a name
// test, not the operator: a word is an operator only after a complete operand), a plain name (not an axis or a kind test), and no positional predicate
// after it (`//a[1]` means "first a child of its parent", not "first a of the document").
import type { NameKey } from "./match.ts";
import { nonPositional } from "./match.ts";
import { closing } from "./xpath-text.ts";

const NAME = /^([\p{L}_][\p{L}\p{N}_.-]*)(?::([\p{L}_][\p{L}\p{N}_.-]*))?/u;
const KEYWORDS = new Set(
  "and or return satisfies in then else eq ne lt le gt ge div mod idiv union intersect except is to".split(
    " ",
  ),
);

/** Variables standing for `//name` searches: one per distinct name, shared by a schema's tests. */
export class DescendantVars {
  readonly keys = new Map<string, NameKey>();
  readonly #byKey = new Map<string, string>();

  variable(key: NameKey): string {
    const k = `{${key.ns}}${key.local}`;
    let name = this.#byKey.get(k);
    if (!name) {
      name = `assay-d${this.#byKey.size}`;
      this.#byKey.set(k, name);
      this.keys.set(name, key);
    }
    return name;
  }

  /** The expression with each eligible `//name` replaced by its variable. */
  rewrite(expr: string, namespaces: Record<string, string>): string {
    let out = "";
    let i = 0;
    while (i < expr.length) {
      const c = expr[i];
      if (c === '"' || c === "'") {
        const end = expr.indexOf(c, i + 1);
        const stop = end < 0 ? expr.length : end + 1;
        out += expr.slice(i, stop);
        i = stop;
        continue;
      }
      if (c === "/" && expr[i + 1] === "/" && startsPath(expr, i)) {
        const m = NAME.exec(expr.slice(i + 2));
        const after = i + 2 + (m ? m[0].length : 0);
        const key = m ? keyOf(m[1], m[2], namespaces) : null;
        // Not a function, an axis (`::`) or a wildcard (`cac:*`).
        if (m && key && !/^\s*[(:]/.test(expr.slice(after)) && plainPredicates(expr, after)) {
          // `a div//b`: the operator and the variable must not run together (`div$v`).
          if (/[\p{L}\p{N}_.-]$/u.test(out)) out += " ";
          out += `$${this.variable(key)}`;
          i = after;
          continue;
        }
      }
      out += c;
      i++;
    }
    return out;
  }
}

function keyOf(a: string, b: string | undefined, namespaces: Record<string, string>): NameKey | null {
  if (b === undefined) return { attribute: false, ns: "", local: a };
  return Object.hasOwn(namespaces, a) ? { attribute: false, ns: namespaces[a], local: b } : null;
}

/** Whether `//` at i begins a path (rather than continuing one). */
function startsPath(expr: string, i: number): boolean {
  const j = back(expr, i - 1);
  if (j < 0) return true;
  if ("([,=<>!|{".includes(expr[j])) return true;
  const start = wordStart(expr, j);
  return start <= j && KEYWORDS.has(expr.slice(start, j + 1)) && isOperator(expr, start);
}

/** The last non-space position at or before i (-1: none). */
function back(expr: string, i: number): number {
  let j = i;
  while (j >= 0 && /\s/.test(expr[j])) j--;
  return j;
}

/** Where the name, number or `.`/`..` ending at j starts (j + 1: none ends there). */
function wordStart(expr: string, j: number): number {
  let k = j;
  while (k >= 0 && /[\p{L}\p{N}_.-]/u.test(expr[k])) k--;
  // A name never starts with "-": in `a -to` the "-" is the minus operator.
  while (k < j && expr[k + 1] === "-") k++;
  return k + 1;
}

/**
 * Whether the keyword-like word starting at `start` is an operator: only after a complete operand.
 * Elsewhere it is a name test: `count(to//addr)`, XHTML `div//p`, `$in`, `@to`, `a/div`.
 * Walks back over `*` and keyword chains (`a and div`, `* * div`), each step flipping the answer.
 */
function isOperator(expr: string, start: number): boolean {
  let operator = true;
  let at = start;
  for (;;) {
    const k = back(expr, at - 1);
    if (k < 0) return !operator;
    const c = expr[k];
    if (at === start && namePrefix(c)) return !operator;
    if (")]}'\"".includes(c)) return operator;
    if (c === "*") {
      // A wildcard (an operand) unless it is itself the multiplication after an operand.
      operator = !operator;
      at = k;
      continue;
    }
    const w = wordStart(expr, k);
    if (w > k) return !operator; // an operator symbol: the word starts an operand
    if (!KEYWORDS.has(expr.slice(w, k + 1))) return operator; // a name or number ends here
    // Another keyword-like word: an operand ends here only if it is a name, not an operator.
    const before = back(expr, w - 1);
    if (before >= 0 && namePrefix(expr[before])) return operator;
    operator = !operator;
    at = w;
  }
}

/** After these a word is a name: a variable, an attribute, a step, a QName or axis, a lookup. */
const namePrefix = (c: string) => "$@/:?".includes(c);

/** The predicates following position i (if any) are all non-positional. */
function plainPredicates(expr: string, i: number): boolean {
  let at = i;
  for (;;) {
    while (/\s/.test(expr[at] ?? "")) at++;
    if (expr[at] !== "[") return true;
    const end = closing(expr, at);
    if (end < 0 || !nonPositional(expr.slice(at + 1, end))) return false;
    at = end + 1;
  }
}
