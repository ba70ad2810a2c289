// fontoxpath (XPath 3.1) as the Schematron query language: the namespace and function resolution
// every evaluation uses, the XSLT `current()` function, and the save-time check of one expression.
// The save-time check only parses (fontoxpath's parseScript): evaluating an author's expression
// on the API thread could run for ever. Function names, namespace prefixes and variables are
// checked on the parse tree. A pattern written as a string literal in matches(), tokenize() or
// replace() is compiled by the engine that runs it (fontoxpath's xspattern for matches(), RE2 for
// the others), so one that can never compile is refused at save instead of failing every run.
import fx from "fontoxpath";
import { slimdom } from "slimdom-sax-parser";
// fontoxpath's own regex compiler (its dependency), which Assay's matches() runs too.
import { compile as compileXsPattern } from "xspattern";
import { regexCost, regexCostProblem } from "../shared/regex-cost.ts";
import { CODEPOINT_NS, isCodepointFunction, registerCodepointFunctions } from "./codepoint-functions.ts";
import {
  REGEX_NS,
  isRegexFunction,
  regexLiteralProblem,
  registerRegexFunctions,
  replacementProblem,
} from "./regex-functions.ts";

export const FN_NS = "http://www.w3.org/2005/xpath-functions";
/**
 * fontoxpath's own functions: `evaluate#2` runs a string as XPath at run time, where no save-time
 * check reads it, so it reached everything refused here (fontoxpath's backtracking tokenize() by
 * its Q{…} name, function-lookup(), string ordering by UTF-16 unit), and `version#0`.
 */
export const FONTOXPATH_NS = "http://fontoxml.com/fontoxpath";
const ASSAY_NS = "urn:assay:schematron";

/** Prefixes every expression knows without an sch:ns declaration. */
export const BUILTIN_PREFIXES: Readonly<Record<string, string>> = Object.freeze({
  xs: "http://www.w3.org/2001/XMLSchema",
  fn: FN_NS,
  math: "http://www.w3.org/2005/xpath-functions/math",
  map: "http://www.w3.org/2005/xpath-functions/map",
  array: "http://www.w3.org/2005/xpath-functions/array",
  xml: "http://www.w3.org/XML/1998/namespace",
});

/**
 * Functions that read outside resources. fontoxpath implements none of them, so nothing could be
 * fetched anyway; naming them lets the save-time check say why instead of "unknown function".
 */
const OUTSIDE_READERS = new Set([
  "doc",
  "doc-available",
  "document",
  "unparsed-text",
  "unparsed-text-lines",
  "unparsed-text-available",
  "collection",
  "uri-collection",
  "json-doc",
  "environment-variable",
  "available-environment-variables",
  "load-xquery-module",
  "transform",
]);

let registered = false;

/**
 * XSLT's current(): the rule's context node, which evaluations pass as `currentContext`; and
 * refused($why), what engine-guard.ts evaluates instead of an expression Assay does not run.
 */
function registerCurrent(): void {
  if (registered) return;
  registered = true;
  fx.registerCustomXPathFunction(
    { namespaceURI: ASSAY_NS, localName: "current" },
    [],
    "item()?",
    (dynamicContext: { currentContext?: unknown }) => dynamicContext.currentContext ?? null,
  );
  fx.registerCustomXPathFunction(
    { namespaceURI: ASSAY_NS, localName: "refused" },
    ["xs:string"],
    "item()*",
    (_: unknown, why: string) => {
      throw new Error(why);
    },
  );
}

/** An expression that raises `why` as its error (registerCurrent's refused()). */
export const refusedExpression = (why: string): string =>
  `Q{${ASSAY_NS}}refused('${why.replaceAll("'", "''")}')`;

export type XPathOptions = NonNullable<Parameters<typeof fx.evaluateXPath>[5]>;

/**
 * fn:serialize#1 passes the save-time check (fontoxpath declares it) but fails every call unless
 * an XML serializer is given; documents are slimdom trees (document.ts), so slimdom's serializes.
 */
let serializer: unknown;

/**
 * fn:trace()'s output: fontoxpath writes it with console.log unless given a logger, which put an
 * Author's text, line breaks included, into the server's log (forged JSON lines; millions of lines
 * a run). XPath leaves trace output to the implementation: Assay's writes nothing.
 */
const silentLogger = { trace: () => {} };

/** The options of every evaluation under a schema's `sch:ns` declarations. */
export function xpathOptions(namespaces: Record<string, string>): XPathOptions {
  registerCurrent();
  registerRegexFunctions();
  registerCodepointFunctions();
  const resolve = (prefix: string): string | null =>
    Object.hasOwn(namespaces, prefix) ? namespaces[prefix] : (BUILTIN_PREFIXES[prefix] ?? null);
  serializer ??= new slimdom.XMLSerializer();
  return {
    language: fx.evaluateXPath.XPATH_3_1_LANGUAGE,
    xmlSerializer: serializer,
    logger: silentLogger,
    namespaceResolver: (prefix: string) => (prefix === "" ? null : resolve(prefix)),
    functionNameResolver: ({ prefix, localName }: { prefix: string; localName: string }, arity: number) => {
      if (prefix === "" && localName === "current" && arity === 0)
        return { namespaceURI: ASSAY_NS, localName };
      const namespaceURI = prefix === "" ? FN_NS : resolve(prefix);
      // fontoxpath's tokenize() and replace() backtrack (and give up): ours run on RE2; its
      // matches() compiles any pattern, however costly: ours checks the cost first.
      if (namespaceURI === FN_NS && isRegexFunction(localName, arity))
        return { namespaceURI: REGEX_NS, localName };
      // fontoxpath's count UTF-16 code units: ours count code points.
      if (namespaceURI === FN_NS && isCodepointFunction(localName, arity))
        return { namespaceURI: CODEPOINT_NS, localName };
      return { namespaceURI, localName };
    },
  } as XPathOptions;
}

const XQX = "http://www.w3.org/2005/XQueryX";

interface Element {
  localName: string;
  namespaceURI: string | null;
  textContent: string | null;
  children: ArrayLike<Element>;
  getAttributeNS(ns: string | null, name: string): string | null;
}

function* elements(el: Element): Generator<Element> {
  yield el;
  for (const child of Array.from(el.children)) yield* elements(child);
}

/**
 * Answers of functionExists by name and arity. The names are the author's (any prefix a schema
 * binds, any local name and arity), so the answers are bounded like matchesChecked below: without
 * it every schema saved with new names grew the thread that checks saves.
 */
const known = new Map<string, boolean>();
export const FUNCTION_LOOKUPS_KEPT = 1000;

/** How many answers functionExists keeps (for tests of its bound). */
export const functionLookupsKept = (): number => known.size;

/** Whether fontoxpath has this function (a constant-time lookup, not the author's code). */
function functionExists(uri: string, local: string, arity: number): boolean {
  const key = `${uri} ${local}#${arity}`;
  let hit = known.get(key);
  if (hit === undefined) {
    try {
      hit = fx.evaluateXPathToBoolean("exists(function-lookup(QName($u, $l), xs:integer($a)))", null, null, {
        u: uri,
        l: local,
        a: arity,
      });
    } catch {
      hit = false; // not a name fontoxpath can even look up
    }
    if (known.size >= FUNCTION_LOOKUPS_KEPT) known.clear();
    known.set(key, hit);
  }
  return hit;
}

/** What the save-time check needs to know of one expression. */
export interface ExpressionFacts {
  /** Problems whatever lets are in scope, as sentences; [] when it parses and its names resolve. */
  problems: string[];
  /** The variables it refers to without binding them itself: each must be a let in scope. */
  variables: string[];
}

/**
 * What compiling one schema's literal matches() patterns at save may cost in all, in positions
 * (regexCost): xspattern builds its automaton eagerly and the save-time check runs on the API
 * thread. A literal past MAX_REGEX_COST is refused, as every run would refuse it; literals past
 * this budget are left to the run, where one that cannot compile is the assertion's evaluation
 * error.
 */
export const MAX_MATCHES_CHECK_TOTAL = 200_000;

/** What checking a schema's matches() patterns may still cost (one per expressionIssues call). */
export interface RegexBudget {
  left: number;
}

const matchesChecked = new Map<string, string | null>();

/** Why fn:matches#2 can never compile `pattern` (null: it can; undefined: not checked). */
function matchesProblem(pattern: string, budget: RegexBudget): string | null | undefined {
  const known = matchesChecked.get(pattern);
  if (known !== undefined) return known;
  const costly = regexCostProblem(pattern, "xsd");
  if (costly) return `FORX0002: ${costly}`;
  const cost = regexCost(pattern, "xsd");
  if (cost > budget.left) return undefined;
  budget.left -= cost;
  let problem: string | null = null;
  try {
    // The compile matches() makes (regex-functions.ts), called directly: its cache keeps the
    // automata, which on the API thread would hold memory for every schema saved.
    compileXsPattern(pattern, { language: "xpath" });
  } catch (e) {
    // As the run words it: "FORX0002: " and the compiler's message.
    problem = `FORX0002: ${((e as Error).message ?? String(e)).split("\n")[0]}`;
  }
  if (matchesChecked.size >= 1000) matchesChecked.clear();
  matchesChecked.set(pattern, problem);
  return problem;
}

/** The value of a string literal argument, or null when the argument is anything else. */
function literal(arg: Element | undefined): string | null {
  if (arg?.localName !== "stringConstantExpr") return null;
  return Array.from(arg.children).find((c) => c.localName === "value")?.textContent ?? "";
}

/** matches(), tokenize() or replace() with a literal pattern that can never compile: why. */
function regexProblem(
  call: Element,
  uri: string,
  local: string,
  shown: string,
  budget: RegexBudget,
): string | null {
  if (call.localName !== "functionCallExpr" || uri !== FN_NS) return null;
  const args = Array.from(Array.from(call.children).find((c) => c.localName === "arguments")?.children ?? []);
  if (local === "replace" && isRegexFunction(local, args.length)) {
    const replacement = literal(args[2]);
    const bad = replacement === null ? null : replacementProblem(replacement);
    if (bad) return `calls ${shown}() with a replacement that can never be used (${bad})`;
  }
  const pattern = literal(args[1]);
  if (pattern === null) return null; // computed when the step runs: a run-time error there
  let why: string | null | undefined = null;
  if (local === "matches" && args.length === 2) why = matchesProblem(pattern, budget);
  else if (isRegexFunction(local, args.length)) {
    const flagsAt = local === "tokenize" ? 2 : 3;
    const flags = args.length > flagsAt ? literal(args[flagsAt]) : "";
    if (flags !== null) why = regexLiteralProblem(pattern, flags);
  }
  return why ? `calls ${shown}() with a pattern that can never run (${why})` : null;
}

/** An XPath 3.1 expression's syntax tree (fontoxpath's XML form); throws when it does not parse. */
const parseXPath = (text: string): Element =>
  fx.parseScript(text, { language: fx.evaluateXPath.XPATH_3_1_LANGUAGE }, scratch()) as unknown as Element;

/**
 * Parses one expression once; check.ts then checks its variables against each scope it runs in
 * (a pattern may run in several phases) without parsing it again.
 */
export function analyseExpression(
  text: string,
  namespaces: Record<string, string>,
  budget: RegexBudget = { left: MAX_MATCHES_CHECK_TOTAL },
): ExpressionFacts {
  let ast: Element;
  try {
    ast = parseXPath(text);
  } catch (e) {
    const first = ((e as Error).message ?? String(e)).split("\n")[0].replace(/^\d+:\s*/, "");
    return {
      problems: [`is not a valid XPath expression (${first.trim() || "syntax error"})`],
      variables: [],
    };
  }
  const problems: string[] = [];
  const variables = new Set<string>();
  const prefixOk = (p: string | null) =>
    !p || Object.hasOwn(namespaces, p) || Object.hasOwn(BUILTIN_PREFIXES, p);
  const bound = new Set<string>();
  const all = [...elements(ast)].filter((e) => e.namespaceURI === XQX);
  for (const e of all) if (e.localName === "varName") bound.add(e.textContent ?? "");
  for (const e of all) {
    const prefix = e.getAttributeNS(XQX, "prefix");
    // An arrow's function is an EQName (`$x => fn:max()`).
    if (
      (e.localName === "nameTest" || e.localName === "functionName" || e.localName === "EQName") &&
      !prefixOk(prefix)
    ) {
      problems.push(`uses the prefix "${prefix}", which no sch:ns declares`);
      continue;
    }
    if (e.localName === "varRef") {
      const name = Array.from(e.children).find((c) => c.localName === "name")?.textContent ?? "";
      if (!bound.has(name)) variables.add(name);
    }
    if (
      e.localName === "functionCallExpr" ||
      e.localName === "namedFunctionRef" ||
      e.localName === "arrowExpr"
    ) {
      const problem = functionProblem(e, namespaces, budget);
      if (problem) problems.push(problem);
    }
  }
  return { problems: [...new Set(problems)], variables: [...variables] };
}

/** The function a call, an arrow or a named reference names, as written and as resolved. */
interface Callee {
  nameEl: Element;
  local: string;
  prefix: string;
  uri: string;
  arity: number;
  /** How a message names it: `prefix:local` or `local`. */
  shown: string;
}

function callee(call: Element, namespaces: Record<string, string>): Callee | null {
  const kids = Array.from(call.children);
  // An arrow (`$x => f(…)`) names its function in an EQName and passes `$x` as the first argument;
  // to a dynamic function (`$x => $f()`) it has none: that function is checked where it is named.
  const nameEl = kids.find((c) => c.localName === "functionName" || c.localName === "EQName");
  if (!nameEl) return null;
  const local = nameEl.textContent ?? "";
  const prefix = nameEl.getAttributeNS(XQX, "prefix") ?? "";
  const uri =
    nameEl.getAttributeNS(XQX, "URI") ??
    (prefix === "" ? FN_NS : (namespaces[prefix] ?? BUILTIN_PREFIXES[prefix] ?? ""));
  const arity =
    call.localName === "namedFunctionRef"
      ? Number(kids.find((c) => c.localName === "integerConstantExpr")?.textContent ?? 0)
      : Array.from(kids.find((c) => c.localName === "arguments")?.children ?? []).length +
        (call.localName === "arrowExpr" ? 1 : 0);
  return { nameEl, local, prefix, uri, arity, shown: prefix ? `${prefix}:${local}` : local };
}

/**
 * Why a call reaches what Assay keeps out of an author's reach: fontoxpath's own functions, its
 * versions of those Assay replaces, and function-lookup(), which could reach either by a name
 * computed when the step runs. Checked at save, and again when a step is compiled to run
 * (engine-guard.ts), for steps saved before one of these was refused.
 */
function engineProblem({ nameEl, local, uri, arity, shown }: Callee): string | null {
  if (uri.trim() === FONTOXPATH_NS)
    return `calls ${nameEl.getAttributeNS(XQX, "URI") !== null ? `Q{${uri}}${local}` : shown}#${arity}, a function of the XPath engine itself, which Assay does not allow (evaluate() would run a string as XPath that no check reads)`;
  // Both would reach fontoxpath's own matches(), tokenize() and replace() (regex-functions.ts),
  // string-to-codepoints() and compare(), which count UTF-16 code units.
  if (
    uri === FN_NS &&
    (isRegexFunction(local, arity) || isCodepointFunction(local, arity)) &&
    nameEl.getAttributeNS(XQX, "prefix") === null
  )
    return `calls Q{${FN_NS}}${local}, which Assay runs only as ${local}() or fn:${local}()`;
  if (uri === FN_NS && local === "function-lookup")
    return "calls function-lookup(), which Assay does not allow: name the function in the expression";
  return null;
}

function functionProblem(
  call: Element,
  namespaces: Record<string, string>,
  budget: RegexBudget,
): string | null {
  const c = callee(call, namespaces);
  if (!c) return null;
  const { uri, local, arity, shown } = c;
  const engine = engineProblem(c);
  if (engine) return engine;
  if (uri === FN_NS && OUTSIDE_READERS.has(local))
    return `calls ${shown}(), which would read outside the document: nothing is ever fetched`;
  if (uri === FN_NS && local === "current" && arity === 0) return null;
  if (!functionExists(uri, local, arity))
    return `calls ${shown}#${arity}, which is not an available function`;
  return regexProblem(call, uri, local, shown, budget);
}

const CALLS = new Set(["functionCallExpr", "namedFunctionRef", "arrowExpr"]);

/**
 * What engineProblem says of each call in `text` ([] when none, or when it does not parse: that
 * is the evaluation's own error). For engine-guard.ts, when a step is compiled to run.
 */
export function engineProblems(text: string, namespaces: Record<string, string>): string[] {
  let ast: Element;
  try {
    ast = parseXPath(text);
  } catch {
    return [];
  }
  const problems = new Set<string>();
  for (const e of elements(ast)) {
    if (e.namespaceURI !== XQX || !CALLS.has(e.localName)) continue;
    const c = callee(e, namespaces);
    const problem = c && engineProblem(c);
    if (problem) problems.add(problem);
  }
  return [...problems];
}

let scratchDoc: unknown;

/** parseScript builds its XQueryX tree in a DOM document; any will do. */
function scratch(): never {
  scratchDoc ??= new slimdom.Document();
  return scratchDoc as never;
}
