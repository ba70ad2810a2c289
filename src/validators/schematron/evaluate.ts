// Runs a built schema over one document, ISO Schematron semantics: every active pattern, in
// order; within a pattern each node is handled by the first rule whose context matches it; each
// assert that is false and each report that is true is a finding. One evaluation per (rule, node)
// computes the rule's lets and all its tests together; messages are built only for what fired.
import fx from "fontoxpath";
import type { FindingCollector } from "../shared/findings.ts";
import { finding } from "../shared/findings.ts";
import { pathOf, type SourceDocument, type XNode } from "./document.ts";
import type { Check, Let, Part, Pattern, Rule, Schematron } from "./schema.ts";
import { DescendantVars } from "./descendants.ts";
import { type AltPlan, CANDIDATES, planContext, planExpression } from "./match.ts";
import { type XPathOptions, xpathOptions } from "./xpath.ts";
import { OrderedExpressions } from "./codepoint-order.ts";
import { EngineGuard } from "./engine-guard.ts";
import { appendAll } from "../../lib/arrays.ts";

export type ParameterValue = string | number | boolean;
type Variables = Record<string, unknown>;

/** Types a let's value can keep when handed back to fontoxpath as a variable. */
const PASSABLE = ["node()*", "xs:string*", "xs:boolean*", "xs:integer*"] as const;

// A custom function's error comes as "Custom XPath function Q{…}name raised:\n<its message>". A
// parse error starts with the expression evaluated, which may be our rewrite of the author's
// (descendants.ts: `$assay-d0`), and a caret line: only its "Error: " line is shown.
const errorText = (e: unknown) => {
  const lines = ((e as Error)?.message ?? String(e))
    .replace(/^Custom XPath function \S+ raised:\s*/, "")
    .split("\n");
  const error = lines.find((l) => l.startsWith("Error: "));
  return (error === undefined ? lines[0] : error.slice("Error: ".length)).trim();
};

interface PreparedRule {
  rule: Rule;
  plans: AltPlan[];
  /** `let … return` clause text of the rule's lets (without the global ones inlined per document). */
  letClause: string[];
  /** The values of those lets, each an expression of its own (for OrderedExpressions). */
  letValues: string[];
  /** The tests, `//name` searches answered from the index (descendants.ts). */
  tests: string[];
}

export class Evaluator {
  readonly #opts: XPathOptions;
  readonly #globals: Let[];
  readonly #patterns: { pattern: Pattern; rules: PreparedRule[] }[];
  readonly #descendants = new DescendantVars();
  /** Every expression goes through it: strings ordered by code point (codepoint-order.ts). */
  readonly #ordered: OrderedExpressions;
  /** Every author's expression goes through it first: what Assay does not run is not run. */
  readonly #guard: EngineGuard;

  constructor(
    readonly schema: Schematron,
    /** Phase id, "#ALL", or null for the schema's default phase. */
    phase: string | null,
    readonly parameters: Record<string, ParameterValue> = {},
  ) {
    this.#opts = xpathOptions(schema.namespaces);
    this.#ordered = new OrderedExpressions(this.#opts);
    this.#guard = new EngineGuard(schema.namespaces);
    const guard = (expr: string) => this.#guard.expression(expr);
    const chosen = phase === null || phase === "#DEFAULT" ? (schema.defaultPhase ?? "#ALL") : phase;
    const active = chosen === "#ALL" ? null : schema.phases[chosen];
    this.#globals = [...schema.lets, ...(active?.lets ?? [])];
    const patterns = active
      ? schema.patterns.filter((p) => p.id && active.active.includes(p.id))
      : schema.patterns;
    this.#patterns = patterns.map((pattern) => ({
      pattern,
      rules: pattern.rules.map((rule) => ({
        rule,
        plans: planContext(guard(rule.context), schema.namespaces),
        letClause: rule.lets.map(
          (l) => `$${l.name} := (${this.#descendants.rewrite(guard(l.value), schema.namespaces)})`,
        ),
        letValues: rule.lets.map((l) => this.#descendants.rewrite(guard(l.value), schema.namespaces)),
        tests: rule.checks.map((c) => this.#descendants.rewrite(guard(c.test), schema.namespaces)),
      })),
    }));
  }

  /** What the rewritten expressions evaluated so far leave in this thread for good (treeCost). */
  get retainedTrees(): number {
    return this.#ordered.retained;
  }

  run(doc: SourceDocument, out: FindingCollector): void {
    const scope = new Scope(this.#opts, this.#ordered, this.#guard, doc.root);
    for (const [name, key] of this.#descendants.keys) scope.vars[name] = nodeSequence(doc.named(key));
    for (const l of this.#globals) {
      if (!scope.bind(l, this.parameters)) return void out.add(scope.failure(l));
    }
    // A pattern whose own let fails is reported and skipped; the patterns after it still run
    // (they cannot see its lets). A schema-level let is in every pattern's scope: none can run.
    patterns: for (const { pattern, rules } of this.#patterns) {
      const local = scope.child();
      for (const l of pattern.lets) {
        if (local.bind(l, {})) continue;
        if (!out.add(local.failure(l))) return;
        continue patterns;
      }
      const claimed = new Set<XNode>();
      for (const prepared of rules) {
        if (!this.#rule(prepared, local, doc, claimed, out)) return;
      }
    }
  }

  /** false once the findings cap is reached. */
  #rule(
    p: PreparedRule,
    scope: Scope,
    doc: SourceDocument,
    claimed: Set<XNode>,
    out: FindingCollector,
  ): boolean {
    let nodes: XNode[];
    try {
      nodes = this.#match(p.plans, scope, doc);
    } catch (e) {
      return out.add(
        finding("schematron.evaluation_error", `the rule context could not be evaluated: ${errorText(e)}`, {
          rule: p.rule.context,
        }),
      );
    }
    const lets = [...scope.inlined, ...p.letClause];
    const letParts = [...scope.inlinedValues, ...p.letValues];
    const prefix = lets.length > 0 ? `let ${lets.join(", ")} return ` : "";
    const tests = `${prefix}[${p.tests.map((t) => `boolean((${t}))`).join(", ")}]`;
    for (const node of nodes) {
      if (claimed.has(node)) continue;
      claimed.add(node);
      if (p.rule.checks.length === 0) continue;
      const opts = { ...this.#opts, currentContext: node };
      let results: (boolean | Error)[];
      try {
        results = fx.evaluateXPathToArray(
          this.#ordered.get(tests, [...letParts, ...p.tests]),
          node,
          null,
          scope.vars,
          opts,
        ) as boolean[];
      } catch {
        // One test failed to evaluate: find out which, and keep the others' results.
        results = p.tests.map((test) => {
          try {
            return fx.evaluateXPathToBoolean(
              this.#ordered.get(`${prefix}(${test})`, [...letParts, test]),
              node,
              null,
              scope.vars,
              opts,
            );
          } catch (e) {
            return e instanceof Error ? e : new Error(String(e));
          }
        });
      }
      for (let i = 0; i < results.length; i++) {
        const c = p.rule.checks[i];
        const r = results[i];
        if (r instanceof Error) {
          const f = this.#finding(c, node, doc, prefix, letParts, scope, opts, r);
          if (!out.add(f)) return false;
        } else if ((c.kind === "assert") !== r) {
          if (!out.add(this.#finding(c, node, doc, prefix, letParts, scope, opts, null))) return false;
        }
      }
    }
    return true;
  }

  /** The nodes a rule context matches, in document order. */
  #match(plans: AltPlan[], scope: Scope, doc: SourceDocument): XNode[] {
    const prefix = scope.inlined.length > 0 ? `let ${scope.inlined.join(", ")} return ` : "";
    const found: XNode[] = [];
    for (const plan of plans) {
      let vars = scope.vars;
      if ("key" in plan) {
        const candidates = doc.named(plan.key);
        if (plan.filter === "" || candidates.length === 0) {
          appendAll(found, candidates);
          continue;
        }
        vars = { ...vars, [CANDIDATES]: nodeSequence(candidates) };
      }
      const expr = `${prefix}${planExpression(plan)}`;
      appendAll(
        found,
        fx.evaluateXPathToNodes(
          this.#ordered.get(expr, [...scope.inlinedValues, planExpression(plan)]),
          doc.root,
          null,
          vars,
          this.#opts,
        ) as unknown as XNode[],
      );
    }
    return plans.length > 1 ? doc.inOrder(found) : found;
  }

  #finding(
    c: Check,
    context: XNode,
    doc: SourceDocument,
    prefix: string,
    letParts: string[],
    scope: Scope,
    opts: XPathOptions,
    error: Error | null,
  ) {
    let node = context;
    if (c.subject !== null) {
      const subject = this.#guard.expression(c.subject);
      try {
        node =
          (fx.evaluateXPathToFirstNode(
            this.#ordered.get(`${prefix}(${subject})`, [...letParts, subject]),
            context,
            null,
            scope.vars,
            opts,
          ) as XNode) ?? context;
      } catch {
        // the context node it is
      }
    }
    const pos = doc.positionOf(node);
    const where = { path: pathOf(node), line: pos?.line ?? null, column: pos?.column ?? null, rule: c.test };
    if (error) {
      const what = `the ${c.kind}${c.id ? ` ${c.id}` : ""}`;
      return finding(
        "schematron.evaluation_error",
        `${what} could not be evaluated: ${errorText(error)}`,
        where,
      );
    }
    const render = (parts: Part[]) =>
      normalize(
        parts.map((part) => text(part, prefix, letParts, context, scope, opts, this.#ordered)).join(""),
      );
    const message = [render(c.message), ...c.diagnostics.map(render)].filter(Boolean).join(" ");
    const code = `schematron.${c.id ?? (c.kind === "assert" ? "failed_assert" : "successful_report")}`;
    return finding(code, message || `${c.kind} ${c.test}`, { ...where, severity: c.severity });
  }
}

function text(
  part: Part,
  prefix: string,
  letParts: string[],
  node: XNode,
  scope: Scope,
  opts: XPathOptions,
  ordered: OrderedExpressions,
): string {
  if (typeof part === "string") return part;
  const own = scope.guard.expression("select" in part ? part.select : (part.name ?? "."));
  const expr =
    "select" in part ? `${prefix}string-join((${own}) ! string(.), ' ')` : `${prefix}name((${own})[1])`;
  try {
    return fx.evaluateXPathToString(ordered.get(expr, [...letParts, own]), node, null, scope.vars, opts);
  } catch (e) {
    return `[${errorText(e)}]`;
  }
}

const normalize = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * Variables of the global and pattern lets for one document. A value of a type fontoxpath can
 * take back unchanged (nodes, strings, booleans, integers) is computed once and passed in; any
 * other (decimals, dates …) would lose its type as a JS value, so its expression is inlined into
 * every evaluation as a `let` clause over the document node instead.
 */
class Scope {
  vars: Variables = {};
  inlined: string[] = [];
  /** The values of `inlined`, each an expression of its own (for OrderedExpressions). */
  inlinedValues: string[] = [];
  #error: unknown = null;

  constructor(
    readonly opts: XPathOptions,
    readonly ordered: OrderedExpressions,
    readonly guard: EngineGuard,
    readonly root: XNode,
  ) {}

  child(): Scope {
    const s = new Scope(this.opts, this.ordered, this.guard, this.root);
    s.vars = { ...this.vars };
    s.inlined = [...this.inlined];
    s.inlinedValues = [...this.inlinedValues];
    return s;
  }

  bind(l: Let, parameters: Record<string, ParameterValue>): boolean {
    if (Object.hasOwn(parameters, l.name)) {
      this.vars[l.name] = parameterValue(parameters[l.name]);
      return true;
    }
    const prefix = this.inlined.length > 0 ? `let ${this.inlined.join(", ")} return ` : "";
    const value = this.guard.expression(l.value);
    const instance = (t: string) => `every $i in $v satisfies $i instance of ${t.slice(0, -1)}`;
    const kind = `${PASSABLE.map((t, i) => `if (${instance(t)}) then ${i}`).join(" else ")} else -1`;
    const expr = `${prefix}let $v := (${value}) return [array { $v }, ${kind}]`;
    try {
      const [items, kind] = fx.evaluateXPathToArray(
        this.ordered.get(expr, [...this.inlinedValues, value]),
        this.root,
        null,
        this.vars,
        this.opts,
      ) as [unknown[], number];
      if (kind >= 0)
        this.vars[l.name] = fx.createTypedValueFactory(PASSABLE[kind])(items as never, fx.domFacade);
      else {
        this.inlined.push(`$${l.name} := root(.) ! (${value})`);
        this.inlinedValues.push(value);
      }
      return true;
    } catch (e) {
      this.#error = e;
      return false;
    }
  }

  failure(l: Let) {
    return finding(
      "schematron.evaluation_error",
      `the let "${l.name}" could not be evaluated: ${errorText(this.#error)}`,
      {
        rule: l.value,
      },
    );
  }
}

function nodeSequence(nodes: XNode[]): unknown {
  return fx.createTypedValueFactory("node()*")(nodes as never, fx.domFacade);
}

function parameterValue(v: ParameterValue): unknown {
  if (typeof v !== "number") return v;
  const type = Number.isInteger(v) ? "xs:integer" : "xs:decimal";
  return fx.createTypedValueFactory(type)(v as never, fx.domFacade);
}
