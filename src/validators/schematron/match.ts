// Finding the nodes a rule context matches without a tree walk per rule. fontoxpath answers
// `//a/b` by walking the whole document, and a schema like EN 16931 has ~100 rules: most of a run
// went there (docs/benchmarks.md). So each document is indexed once by name, and a context
// alternative whose steps are plain name tests is answered from the index, its upper steps checked
// backwards: `a/b[p]` becomes the indexed b elements filtered by `[p][parent::a]`. That is the same
// set only when no predicate is positional (`[1]`, `[last()]`, `[$n]`): a predicate we cannot show
// to be non-numeric keeps the plain `//…` query.
import { closing, isSingleCall, splitTopLevel } from "./xpath-text.ts";

export interface NameKey {
  attribute: boolean;
  /** Namespace URI ("" for none), or "*" for any. */
  ns: string;
  /** Local name, or "*" for any. */
  local: string;
}

export type AltPlan = { query: string } | { key: NameKey; filter: string };

const NCNAME = String.raw`[\p{L}_][\p{L}\p{N}_.\-]*`;
const STEP = new RegExp(
  String.raw`^(@|attribute::|child::)?(\*|\*:${NCNAME}|${NCNAME}:\*|${NCNAME}:${NCNAME}|${NCNAME})\s*((?:\[[\s\S]*\])?)$`,
  "u",
);
const PURE_PATH = new RegExp(
  String.raw`^(?:\.\.?|@?(?:\*|${NCNAME}(?::(?:${NCNAME}|\*))?))(?:\s*//?\s*(?:\.\.?|@?(?:\*|${NCNAME}(?::(?:${NCNAME}|\*))?)))*$`,
  "u",
);
const BOOLEAN_OPERATOR = /^(?:!?=|<=?|>=?|<<|>>|\s(?:eq|ne|lt|le|gt|ge|is|and|or)\s)$/;
/** Functions whose value is a boolean or a string: never a position. */
const NON_NUMERIC_FUNCTION =
  /^(?:fn:)?(?:not|exists|empty|boolean|contains|starts-with|ends-with|matches|true|false|normalize-space|string|lower-case|upper-case|local-name|name|namespace-uri|concat|substring|substring-before|substring-after|translate|string-join)\s*\(/;

/**
 * `position()` or `last()` anywhere outside a string literal. A `-` or `.` before it is not taken
 * for part of a longer name: `3-last()` is a subtraction (it read as non-positional, and the
 * rule matched the wrong nodes); a name that does end so only keeps the plain query.
 */
const CONTEXT_POSITION = /(?<![\p{L}\p{N}_])(?:fn:)?(?:position|last)\s*\(/u;
const STRING_LITERAL = /"(?:[^"]|"")*"|'(?:[^']|'')*'/g;

/**
 * Whether a predicate's value can never be a number (which would make it positional), and it
 * does not read the context position either: `[position() > 1]` is a boolean, but the position
 * it reads is among the step's siblings, which a filter over all the indexed elements changes
 * (it counted the whole document's). Conservative: a position() inside a nested predicate also
 * keeps the plain query, which is only slower.
 */
export function nonPositional(pred: string): boolean {
  const p = pred.trim();
  if (CONTEXT_POSITION.test(p.replace(STRING_LITERAL, '""'))) return false;
  if (PURE_PATH.test(p)) return true;
  if (splitTopLevel(p, BOOLEAN_OPERATOR).length > 1) return true;
  return NON_NUMERIC_FUNCTION.test(p) && isSingleCall(p);
}

/** `[a][b = 1]` → ["a", "b = 1"], or null when the text is not a run of predicates. */
function predicates(text: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (/\s/.test(text[i])) {
      i++;
      continue;
    }
    if (text[i] !== "[") return null;
    const end = closing(text, i);
    if (end < 0) return null;
    out.push(text.slice(i + 1, end));
    i = end + 1;
  }
  return out;
}

interface Step {
  attribute: boolean;
  test: string;
  preds: string[];
}

function parseStep(text: string): Step | null {
  const m = STEP.exec(text.trim());
  if (!m) return null;
  const preds = predicates(m[3]);
  if (!preds?.every(nonPositional)) return null;
  return { attribute: m[1] === "@" || m[1] === "attribute::", test: m[2], preds };
}

function keyOf(step: Step, namespaces: Record<string, string>): NameKey | null {
  const [a, b] = step.test.includes(":") ? step.test.split(":") : ["", step.test];
  if (a === "*") return { attribute: step.attribute, ns: "*", local: b };
  if (step.test === "*") return { attribute: step.attribute, ns: "*", local: "*" };
  if (a === "") return { attribute: step.attribute, ns: "", local: b };
  if (!Object.hasOwn(namespaces, a)) return null;
  return { attribute: step.attribute, ns: namespaces[a], local: b };
}

/** How to find the nodes of one `|` alternative of a rule context. */
export function planAlternative(alt: string, namespaces: Record<string, string>): AltPlan {
  const fallback = { query: alt.startsWith("/") ? `(${alt})` : `//(${alt})` };
  const absolute = alt.startsWith("/") && !alt.startsWith("//");
  const body = alt.replace(/^\/\/?/, "");
  const pieces = splitTopLevel(body, /^\/$/);
  // "a//b" splits into "a", "", "b": an empty piece turns the next step's axis into ancestor.
  const steps: { step: Step; deep: boolean }[] = [];
  let deep = false;
  for (const piece of pieces) {
    if (piece.trim() === "") {
      if (deep || steps.length === 0) return fallback;
      deep = true;
      continue;
    }
    const step = parseStep(piece);
    if (!step) return fallback;
    steps.push({ step, deep });
    deep = false;
  }
  // An attribute has no children: only the last step may select one.
  if (steps.length === 0 || deep || steps.slice(0, -1).some((s) => s.step.attribute)) return fallback;
  const last = steps[steps.length - 1].step;
  const key = keyOf(last, namespaces);
  if (!key) return fallback;
  let up = absolute ? "parent::document-node()" : "";
  for (let i = 0; i < steps.length - 1; i++) {
    const { step } = steps[i];
    const axis = steps[i + 1].deep ? "ancestor::" : "parent::";
    up = `${axis}${step.test}${step.preds.map((p) => `[${p}]`).join("")}${up ? `[${up}]` : ""}`;
  }
  const filter = `${last.preds.map((p) => `[${p}]`).join("")}${up ? `[${up}]` : ""}`;
  return { key, filter };
}

/** The plans of a rule context's `|` alternatives. */
export function planContext(context: string, namespaces: Record<string, string>): AltPlan[] {
  return splitTopLevel(context, /^\|$/)
    .map((alt) => alt.trim())
    .filter((alt) => alt !== "")
    .map((alt) => planAlternative(alt, namespaces));
}

/** The variable holding an alternative's indexed candidates while its filter runs. */
export const CANDIDATES = "assay-candidates";

/** The expression that runs for an alternative (the save-time check parses these too). */
export function planExpression(plan: AltPlan): string {
  return "query" in plan ? plan.query : `$${CANDIDATES}${plan.filter}`;
}
