// String order by code point for `<`, `<=`, `>`, `>=`, `lt`, `le`, `gt`, `ge`, fn:min#1, fn:max#1
// and array:sort#1 (XPath F&O 3.1 §5.3.2: the default collation is the Unicode codepoint
// collation; fontoxpath has no fn:sort, refuses every collation argument, and its XPath mode has
// no FLWOR `order by`). The functions however reached: a call, an arrow (`$x => max()`), a
// partial application (`max(?)`) or a named reference (`max#1`, so `for-each(…, max#1)` and a
// dynamic call `$f(…)` of one too); function-lookup() is refused at save time (xpath.ts).
// fontoxpath compares strings with JavaScript's `<`, by UTF-16 code unit: '😀' (U+1F600, units
// D83D DE00) came before U+FFFD. It takes no collation and its operators cannot be replaced, so an
// expression that may order strings is rewritten on its parse tree (XQueryX, which fontoxpath
// evaluates as it does text): each such comparison becomes one that compares a pair of strings by
// code point and hands every other pair to the original operator, so numbers, dates, untyped
// values against numbers and the errors of mixed types behave exactly as before. Equality needs
// nothing: two strings are equal in UTF-16 exactly when they are by code point.
import fx from "fontoxpath";
import { slimdom } from "slimdom-sax-parser";
import { CODEPOINT_NS } from "./codepoint-functions.ts";
import type { XPathOptions } from "./xpath.ts";

const XQX = "http://www.w3.org/2005/XQueryX";

const GENERAL: Record<string, string> = {
  lessThanOp: "<",
  lessThanOrEqualOp: "<=",
  greaterThanOp: ">",
  greaterThanOrEqualOp: ">=",
};
const VALUE: Record<string, string> = { ltOp: "lt", leOp: "le", gtOp: "gt", geOp: "ge" };

/** Nothing that orders strings can be in an expression without one of these. */
const MAY_ORDER = /[<>]|\b(?:lt|le|gt|ge|min|max|sort)\b/;

/** Statically typed so that no string can be among its values: its comparisons are left alone. */
const NOT_STRING =
  /^xs:(?:integer|decimal|double|float|numeric|boolean|date|dateTime|time|duration|dayTimeDuration|yearMonthDuration|g(?:Year|YearMonth|Month|MonthDay|Day)|(?:non)?(?:Negative|Positive)Integer|nonNegativeInteger|nonPositiveInteger|long|int|short|byte|unsigned(?:Long|Int|Short|Byte))[?*+]?$/;

/** Arithmetic gives numbers (or durations, dates), never a string, typed or not. */
const ARITHMETIC = new Set([
  "addOp",
  "subtractOp",
  "multiplyOp",
  "divOp",
  "idivOp",
  "modOp",
  "unaryMinusOp",
  "unaryPlusOp",
]);
const notString = (operand: El) =>
  ARITHMETIC.has(operand.localName) || NOT_STRING.test(operand.getAttributeNS(XQX, "type") ?? "");

// fontoxpath reads no Q{…} type name in a sequence type (`instance of`, a parameter's type), but
// reads `xs:` there as XML Schema whatever the schema binds the prefix to; a constructor function
// is a function call, resolved through the schema's prefixes: it is named Q{…}, as all the others.
const XS = "xs:";
const XSF = "Q{http://www.w3.org/2001/XMLSchema}";
const ARRAY_NS = "http://www.w3.org/2005/xpath-functions/array";
const ARRAY = `Q{${ARRAY_NS}}`;
const isString = (v: string) =>
  `(${v} instance of ${XS}string or ${v} instance of ${XS}anyURI or ${v} instance of ${XS}untypedAtomic)`;
// fontoxpath binds no namespaced variable in a `let`: the names are in no namespace, with the
// prefix the schema's own lets may not use (descendants.ts's `$assay-d…` share it).
const A = "$assay-oa";
const B = "$assay-ob";
const X = "$assay-ox";
const Y = "$assay-oy";
/** The parameter of the inline function that stands for a function item (`max#1`, `max(?)`). */
const P = "$assay-op";
const CP = `Q{${CODEPOINT_NS}}compare`;

/**
 * The templates, `A` and `B` standing for the operands. A general comparison is true when some
 * pair of their atomized values is (§3.7.2): a pair of strings (untyped values compared with a
 * string or each other are strings there too) by code point, any other pair by the operator
 * itself. A value comparison: a pair of single strings by code point; anything else (empty, more
 * than one, other types) by the operator, with its own answer or error.
 */
function template(local: string): string | null {
  const general = GENERAL[local];
  if (general)
    return `let ${A} := data(${A}), ${B} := data(${B}) return some ${X} in ${A}, ${Y} in ${B} satisfies (if (${isString(X)} and ${isString(Y)}) then ${CP}(${XSF}string(${X}), ${XSF}string(${Y})) ${general} 0 else ${X} ${general} ${Y})`;
  const value = VALUE[local];
  if (value)
    return `let ${A} := data(${A}), ${B} := data(${B}) return if (${isString(A)} and ${isString(B)}) then ${CP}(${XSF}string(${A}), ${XSF}string(${B})) ${value} 0 else ${A} ${value} ${B}`;
  return null;
}
/** fn:min and fn:max over strings (and xs:anyURI; untyped values are numbers there), of `arg`. */
const extremum = (which: "min" | "max", arg = A) =>
  `let ${A} := data(${arg}) return if (exists(${A}) and (every ${X} in ${A} satisfies (${X} instance of ${XS}string or ${X} instance of ${XS}anyURI))) then Q{${CODEPOINT_NS}}${which}(for ${X} in ${A} return ${XSF}string(${X})) else Q{http://www.w3.org/2005/xpath-functions}${which}(${A})`;

/**
 * array:sort#1: members sorted by their atomized values (§17.3.32), which are compared by code
 * point when every member is one string (or untyped value, or URI): the permutation comes from
 * Q{…codepoint}order, the members stay what they were (nodes too). Anything else is fontoxpath's.
 */
const sort = (arg = A) =>
  `let ${A} := ${arg} return if (every ${X} in 1 to ${ARRAY}size(${A}) satisfies (let ${Y} := data(${A}(${X})) return count(${Y}) = 1 and ${isString(Y)})) then array { for ${X} in Q{${CODEPOINT_NS}}order(for ${Y} in 1 to ${ARRAY}size(${A}) return ${XSF}string(data(${A}(${Y})))) return ${A}(${X}) } else ${ARRAY}sort(${A})`;

/** The parts of slimdom's element this file uses. */
interface El {
  localName: string;
  textContent: string | null;
  children: ArrayLike<El>;
  firstElementChild: El | null;
  parentNode: { replaceChild(node: El, child: El): unknown } | null;
  ownerDocument: { importNode(node: El, deep: boolean): El } | null;
  getAttributeNS(ns: string | null, name: string): string | null;
  getElementsByTagNameNS(ns: string, local: string): ArrayLike<El>;
}
const parse = (text: string, options: XPathOptions): El =>
  fx.parseScript(text, { ...options, annotateAst: true } as never, new slimdom.Document()) as unknown as El;

const templates = new WeakMap<XPathOptions, Map<string, El>>();
/** The single expression element a template's query body holds, parsed once per options. */
function templateBody(text: string, options: XPathOptions): El {
  let known = templates.get(options);
  if (!known) {
    known = new Map();
    templates.set(options, known);
  }
  let body = known.get(text);
  if (!body) {
    body = parse(text, options).getElementsByTagNameNS(XQX, "queryBody")[0]!.firstElementChild!;
    known.set(text, body);
  }
  return body;
}

const operand = (op: El, name: string): El | null =>
  Array.from(op.children).find((c) => c.localName === name)?.firstElementChild ?? null;

/** Replaces the first `$assay-oa` / `$assay-ob` reference in `body` with the operands. */
function graft(body: El, operands: Record<string, El>): void {
  for (const ref of Array.from(body.getElementsByTagNameNS(XQX, "varRef"))) {
    // Only the first reference of each is the operand (the `let` binding's value); later ones
    // name the bound variable.
    const key = ref.firstElementChild?.textContent ?? "";
    const value = operands[key];
    if (!value) continue;
    delete operands[key];
    ref.parentNode!.replaceChild(value, ref);
  }
}

type Ordering = "min" | "max" | "sort";

/** Which of fn:min#1, fn:max#1 and array:sort#1 `uri` and `local` name, if one. */
function ordering(uri: string | null, local: string | null): Ordering | null {
  if (uri === "http://www.w3.org/2005/xpath-functions" && (local === "min" || local === "max")) return local;
  return uri === ARRAY_NS && local === "sort" ? "sort" : null;
}

/** The template for a call of one, its argument standing for `arg`. */
const callText = (which: Ordering, arg = A) => (which === "sort" ? sort(arg) : extremum(which, arg));

/**
 * The template for the function item itself (`max#1`, `max(?)`): an inline function of the same
 * signature (fontoxpath reads `xs:` in it as XML Schema, see XS) whose body is the call's.
 */
const itemText = (which: Ordering) =>
  which === "sort"
    ? `function(${P} as array(*)) as array(*) { ${callText(which, P)} }`
    : `function(${P} as ${XS}anyAtomicType*) as ${XS}anyAtomicType? { ${callText(which, P)} }`;

const child = (el: El, name: string): El | undefined =>
  Array.from(el.children).find((c) => c.localName === name);

/**
 * What `el` is, when it reaches fn:min#1, fn:max#1 or array:sort#1: a call of one (with the
 * argument to graft), or the function item (a named reference, a partial application).
 */
function orderingUse(el: El, options: XPathOptions): { text: string; arg?: El } | null {
  const local = el.localName;
  if (local === "functionCallExpr") {
    const name = child(el, "functionName");
    const args = child(el, "arguments");
    if (!name || !args || args.children.length !== 1) return null;
    const which = ordering(name.getAttributeNS(XQX, "URI"), name.textContent);
    if (!which) return null;
    const arg = args.children[0]!;
    return arg.localName === "argumentPlaceholder"
      ? { text: itemText(which) }
      : { text: callText(which), arg };
  }
  if (local === "namedFunctionRef") {
    const name = child(el, "functionName");
    const arity = child(el, "integerConstantExpr")?.textContent?.trim();
    const which = name && arity === "1" ? ordering(name.getAttributeNS(XQX, "URI"), name.textContent) : null;
    return which ? { text: itemText(which) } : null;
  }
  if (local === "arrowExpr") {
    // `$x => max()`: the name is left unresolved in the tree (fontoxpath resolves it when it
    // compiles), so it is resolved here as fontoxpath would, with the arity the call will have.
    const name = child(el, "EQName");
    const args = child(el, "arguments");
    const arg = child(el, "argExpr")?.firstElementChild;
    if (!name || !args || args.children.length !== 0 || !arg) return null;
    const localName = name.textContent ?? "";
    let uri = name.getAttributeNS(XQX, "URI");
    if (uri === null) {
      const prefix = name.getAttributeNS(XQX, "prefix") ?? "";
      const resolver = (options as { functionNameResolver?: FunctionNameResolver }).functionNameResolver;
      uri = resolver ? (resolver({ prefix, localName }, 1)?.namespaceURI ?? null) : null;
    }
    const which = ordering(uri, localName);
    return which ? { text: callText(which), arg } : null;
  }
  return null;
}
type FunctionNameResolver = (
  name: { prefix: string; localName: string },
  arity: number,
) => { namespaceURI: string | null; localName: string } | null;

/** What fontoxpath evaluates: text, or a parse tree. */
export type Evaluable = Parameters<typeof fx.evaluateXPath>[0];

/**
 * The expression to evaluate: `expr` itself when it orders no strings, otherwise its parse tree
 * rewritten as above. Throws what parsing throws (the caller reports it as before).
 */
export function codepointOrdered(expr: string, options: XPathOptions): Evaluable {
  if (!MAY_ORDER.test(expr)) return expr;
  const module = parse(expr, options);
  const targets: { el: El; text: string; operands: Record<string, El> }[] = [];
  for (const el of Array.from(module.getElementsByTagNameNS(XQX, "*"))) {
    const local = el.localName;
    if (GENERAL[local] || VALUE[local]) {
      const [a, b] = [operand(el, "firstOperand"), operand(el, "secondOperand")];
      if (a && b && ![a, b].some(notString))
        targets.push({ el, text: template(local)!, operands: { "assay-oa": a, "assay-ob": b } });
      continue;
    }
    const use = orderingUse(el, options);
    if (use) targets.push({ el, text: use.text, operands: use.arg ? { "assay-oa": use.arg } : {} });
  }
  if (targets.length === 0) return expr;
  // Innermost first (reverse document order): an outer one's operands then hold the rewritten
  // inner ones, moved along with them.
  const doc = module.ownerDocument!;
  for (const { el, text, operands } of targets.reverse()) {
    const body = doc.importNode(templateBody(text, options), true);
    graft(body, operands);
    el.parentNode!.replaceChild(body, el);
  }
  return module as unknown as Evaluable;
}

// Parsing into a tree costs about three times what fontoxpath's own parse does (EN 16931's rules:
// 6 s of the first run's 8 s on a loaded 2-core machine), so each part of a composed expression
// is first read as text: an ordering operator with a number literal as a whole operand compares
// no strings (a string against a number is an error, an untyped value against one a number).
const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;
const ENDS_OPERAND = /^\s*(?:$|[)\]},]|(?:and|or|then|else|return|satisfies)\b)/;
const STARTS_OPERAND = /(?:^|[([{,]|:=|\b(?:and|or|then|else|return|satisfies))\s*$/;

/** Whether every ordering operator of `expr` has a number literal as a whole operand (text only). */
export function comparesOnlyNumbers(expr: string): boolean {
  if (/\b(?:min|max|sort)\b/.test(expr)) return false;
  let i = 0;
  while (i < expr.length) {
    const c = expr[i];
    if (c === "'" || c === '"') {
      const end = expr.indexOf(c, i + 1);
      if (end < 0) return false;
      i = end + 1;
      continue;
    }
    if (c === "(" && expr[i + 1] === ":") {
      const end = expr.indexOf(":)", i + 2);
      if (end < 0) return false;
      i = end + 2;
      continue;
    }
    let op = 0;
    if (c === "<" || c === ">") {
      // `<<`, `>>` (node order) and `=>` (arrow) order no strings.
      if (expr[i + 1] === c) {
        i += 2;
        continue;
      }
      if (c === ">" && expr[i - 1] === "=") {
        i++;
        continue;
      }
      op = expr[i + 1] === "=" ? 2 : 1;
    } else if (
      /^(?:lt|le|gt|ge)\b/.test(expr.slice(i, i + 3)) &&
      !/[\p{L}\p{N}_.$@:-]$/u.test(expr.slice(0, i))
    )
      op = 2; // a name test `lt` is read as the operator too: then the answer is merely "parse it"
    if (op === 0) {
      i++;
      continue;
    }
    const before = expr.slice(0, i).trimEnd();
    const after = expr.slice(i + op).trimStart();
    const right = NUMBER.exec(after);
    const left = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.exec(before);
    const rightWhole = right !== null && ENDS_OPERAND.test(after.slice(right[0].length));
    const leftWhole =
      left !== null &&
      !/[\p{L}_$@.-]$/u.test(before.slice(0, left.index)) &&
      STARTS_OPERAND.test(before.slice(0, left.index));
    if (!rightWhole && !leftWhole) return false;
    i += op;
  }
  return true;
}

/** Longest list of rewritten expressions one evaluator keeps. */
const KEPT = 10_000;

/**
 * What a rewritten expression leaves in its worker for good, in expressions' worth (~10 KB each,
 * CompiledValidator.retains): fontoxpath keeps every parse tree it evaluated, by identity, as it
 * keeps every text it compiled, and a tree with the templates grafted in weighs far more than
 * text. Measured (2026-11-29, heap after 900 rules, each with one distinct rewritten test): a
 * rule of 1 assert 120 KB, of 5 asserts 253 KB, of 15 asserts 584 KB (the text alone: 2.5 KB
 * an expression).
 */
export const treeCost = (expr: string): number => 10 + Math.ceil(expr.length / 10);

/** codepointOrdered's answers for one set of options (a schema's), computed once per text. */
export class OrderedExpressions {
  readonly #done = new Map<string, Evaluable>();
  readonly #plain = new Map<string, boolean>();
  #retained = 0;
  constructor(readonly options: XPathOptions) {}

  /** What the trees handed out so far leave in the worker for good (treeCost), summed. */
  get retained(): number {
    return this.#retained;
  }

  /**
   * `expr` as codepointOrdered rewrites it. `parts`: the expressions `expr` is composed of, with
   * syntax that orders nothing around them (`let … return [boolean((…)), …]`): when none of them
   * orders strings, `expr` is used as it is, without parsing it whole.
   */
  get(expr: string, parts?: readonly string[]): Evaluable {
    let hit = this.#done.get(expr);
    if (hit === undefined) {
      hit = parts?.every((p) => this.#isPlain(p)) ? expr : codepointOrdered(expr, this.options);
      // A tree is evaluated by identity: each one made (again after a clear) stays in fontoxpath.
      if (typeof hit !== "string") this.#retained += treeCost(expr);
      if (this.#done.size >= KEPT) this.#done.clear();
      this.#done.set(expr, hit);
    }
    return hit;
  }

  #isPlain(part: string): boolean {
    let plain = this.#plain.get(part);
    if (plain === undefined) {
      try {
        plain =
          !MAY_ORDER.test(part) ||
          comparesOnlyNumbers(part) ||
          typeof codepointOrdered(part, this.options) === "string";
      } catch {
        plain = false; // the whole expression is parsed, and fails as it did
      }
      if (this.#plain.size >= KEPT) this.#plain.clear();
      this.#plain.set(part, plain);
    }
    return plain;
  }
}
