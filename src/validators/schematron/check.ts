// Save-time check of every XPath expression in a built schema: each must parse, and every
// function, namespace prefix and variable it names must resolve (src/validators/schematron/xpath.ts).
// Variables are checked in the scope they have when the step runs (evaluate.ts), or a let that
// passes here fails every run with XPST0008: a let sees only the lets declared before it (the
// schema's, then the running phase's, then the pattern's, then the rule's, each in document
// order), and a phase's lets exist only while that phase runs.
import { MAX_CONFIG_ISSUES } from "../limits.ts";
import type { ConfigIssue } from "../types.ts";
import type { Let, Part, Pattern, Schematron } from "./schema.ts";
import { DescendantVars } from "./descendants.ts";
import { CANDIDATES, planContext, planExpression } from "./match.ts";
import { MAX_MATCHES_CHECK_TOTAL, analyseExpression, type ExpressionFacts } from "./xpath.ts";

function fieldOf(where: string): string {
  return where.includes('include "') ? "includes" : "schema";
}

/** Variables in scope, and what to say of one missing ("" when phases change nothing). */
interface Scope {
  names: ReadonlySet<string>;
  note: string;
}

/**
 * `phase`: the step's config phase (undefined: the schema's defaultPhase, else #ALL). Patterns that
 * phase runs are checked in its scope; any other pattern in the scope of each phase that activates
 * it (or the schema's alone when none does), as a config naming that phase would run it.
 */
export function expressionIssues(s: Schematron, phase?: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  const facts = new Map<string, ExpressionFacts>();
  // What compiling the schema's literal matches() patterns may cost in all (xpath.ts).
  const regexBudget = { left: MAX_MATCHES_CHECK_TOTAL };
  /** Whether the expression passed. */
  const check = (where: string, what: string, expr: string, scope: Scope): boolean => {
    if (issues.length >= MAX_CONFIG_ISSUES) return false;
    let f = facts.get(expr);
    if (!f) {
      f = analyseExpression(expr, s.namespaces, regexBudget);
      facts.set(expr, f);
    }
    const missing = f.variables
      .filter((v) => !scope.names.has(v))
      .map((v) => `refers to $${v}, which no sch:let in scope declares${scope.note}`);
    for (const p of [...f.problems, ...missing]) {
      const message = `${where ? `${where}: ` : ""}${what} "${expr.trim()}" ${p}`;
      if (seen.has(message)) continue;
      seen.add(message);
      issues.push({ field: fieldOf(where), code: "invalid_expression", message });
    }
    return f.problems.length === 0 && missing.length === 0;
  };
  // What runs of a rule's lets and tests is their `//name` searches rewritten (descendants.ts):
  // that must parse too, or every run would fail. The message never shows the rewrite.
  const descendants = new DescendantVars();
  const checkRewritten = (where: string, what: string, expr: string, scope: Scope) => {
    if (!check(where, what, expr, scope)) return;
    const rewritten = descendants.rewrite(expr, s.namespaces);
    if (rewritten === expr) return;
    const f = analyseExpression(rewritten, s.namespaces, regexBudget);
    const unbound = f.variables.some((v) => !scope.names.has(v) && !descendants.keys.has(v));
    if (f.problems.length === 0 && !unbound) return;
    const message = `${where ? `${where}: ` : ""}${what} "${expr.trim()}" uses // where Assay's name index cannot stand in for it: write /descendant::name for //name`;
    if (issues.length < MAX_CONFIG_ISSUES && !seen.has(message)) {
      seen.add(message);
      issues.push({ field: fieldOf(where), code: "invalid_expression", message });
    }
  };
  /** Each let against the scope before it; the scope after the last. */
  const checkLets = (lets: Let[], outer: Scope, rewritten = false): Scope => {
    const names = new Set(outer.names);
    for (const l of lets) {
      (rewritten ? checkRewritten : check)(l.where, `the let "${l.name}"`, l.value, {
        names,
        note: outer.note,
      });
      names.add(l.name);
    }
    return { names, note: outer.note };
  };
  const checkParts = (where: string, parts: Part[], scope: Scope) => {
    for (const p of parts) {
      if (typeof p === "string") continue;
      if ("select" in p) check(where, "sch:value-of select", p.select, scope);
      else if (p.name !== null) check(where, "sch:name path", p.name, scope);
    }
  };
  const checkPattern = (pattern: Pattern, outer: Scope) => {
    const patternScope = checkLets(pattern.lets, outer);
    for (const rule of pattern.rules) {
      // What runs is the context rewritten (match.ts): it must parse as well.
      if (check(rule.where, "the rule context", rule.context, patternScope)) {
        const names = new Set([...patternScope.names, CANDIDATES]);
        for (const plan of planContext(rule.context, s.namespaces))
          check(rule.where, "the rule context", planExpression(plan), { names, note: outer.note });
      }
      const scope = checkLets(rule.lets, patternScope, true);
      for (const c of rule.checks) {
        checkRewritten(c.where, `the ${c.kind} test`, c.test, scope);
        if (c.subject !== null) check(c.where, "the subject", c.subject, scope);
        checkParts(c.where, c.message, scope);
        for (const d of c.diagnostics) checkParts(c.where, d, scope);
      }
    }
  };

  const phases = Object.values(s.phases);
  // Without phase lets every phase has the same variables: nothing to add to a message.
  const phased = phases.some((p) => p.lets.length > 0);
  const names = checkLets(s.lets, { names: new Set(), note: "" }).names;
  const globals: Scope = { names, note: phased ? " when all patterns run (#ALL)" : "" };
  const phaseScopes = new Map<string, Scope>();
  for (const p of phases)
    phaseScopes.set(p.id, checkLets(p.lets, { names, note: phased ? ` when phase "${p.id}" runs` : "" }));
  const chosen = phase === undefined || phase === "#DEFAULT" ? (s.defaultPhase ?? "#ALL") : phase;
  const running = Object.hasOwn(s.phases, chosen) ? s.phases[chosen] : null;
  const activates = (p: { active: string[] }, pattern: Pattern) =>
    pattern.id !== null && p.active.includes(pattern.id);
  for (const pattern of s.patterns) {
    let scopes: Scope[];
    if (chosen === "#ALL") scopes = [globals];
    else if (running && activates(running, pattern)) scopes = [phaseScopes.get(running.id) as Scope];
    else {
      const by = phases.filter((p) => activates(p, pattern)).map((p) => phaseScopes.get(p.id) as Scope);
      scopes = by.length > 0 ? by : [globals];
    }
    // Phases without lets see the schema's lets alone: check each distinct scope once.
    const distinct = new Map<string, Scope>();
    for (const sc of scopes) {
      const key = [...sc.names].sort().join(" ");
      if (!distinct.has(key)) distinct.set(key, sc);
    }
    for (const sc of distinct.values()) checkPattern(pattern, sc);
  }
  return issues.slice(0, MAX_CONFIG_ISSUES);
}
