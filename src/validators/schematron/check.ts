// Save-time check of every XPath expression in a built schema: each must parse, and every
// function, namespace prefix and variable it names must resolve (src/validators/schematron/xpath.ts).
// Variables in scope: the schema's and every phase's lets, then the pattern's, then the rule's.
import { MAX_CONFIG_ISSUES } from "../limits.ts";
import type { ConfigIssue } from "../types.ts";
import type { Let, Part, Schematron } from "./schema.ts";
import { CANDIDATES, planContext, planExpression } from "./match.ts";
import { checkExpression } from "./xpath.ts";

function fieldOf(where: string): string {
  return where.includes('include "') ? "includes" : "schema";
}

export function expressionIssues(s: Schematron): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const check = (where: string, what: string, expr: string, scope: ReadonlySet<string>) => {
    if (issues.length >= MAX_CONFIG_ISSUES) return;
    for (const p of checkExpression(expr, s.namespaces, scope)) {
      issues.push({
        field: fieldOf(where),
        code: "invalid_expression",
        message: `${where ? `${where}: ` : ""}${what} "${expr.trim()}" ${p}`,
      });
    }
  };
  const names = (lets: Let[]) => lets.map((l) => l.name);
  const checkLets = (lets: Let[], outer: ReadonlySet<string>) => {
    const scope = new Set([...outer, ...names(lets)]);
    for (const l of lets) check(l.where, `the let "${l.name}"`, l.value, scope);
    return scope;
  };
  const checkParts = (where: string, parts: Part[], scope: ReadonlySet<string>) => {
    for (const p of parts) {
      if (typeof p === "string") continue;
      if ("select" in p) check(where, "sch:value-of select", p.select, scope);
      else if (p.name !== null) check(where, "sch:name path", p.name, scope);
    }
  };

  const phaseLets = Object.values(s.phases).flatMap((p) => p.lets);
  const globals = checkLets([...s.lets, ...phaseLets], new Set());
  for (const pattern of s.patterns) {
    const patternScope = checkLets(pattern.lets, globals);
    for (const rule of pattern.rules) {
      check(rule.where, "the rule context", rule.context, patternScope);
      // What runs is the context rewritten (match.ts): it must parse as well.
      if (checkExpression(rule.context, s.namespaces, patternScope).length === 0) {
        const withCandidates = new Set([...patternScope, CANDIDATES]);
        for (const plan of planContext(rule.context, s.namespaces))
          check(rule.where, "the rule context", planExpression(plan), withCandidates);
      }
      const scope = checkLets(rule.lets, patternScope);
      for (const c of rule.checks) {
        check(c.where, `the ${c.kind} test`, c.test, scope);
        if (c.subject !== null) check(c.where, "the subject", c.subject, scope);
        checkParts(c.where, c.message, scope);
        for (const d of c.diagnostics) checkParts(c.where, d, scope);
      }
    }
  }
  return issues.slice(0, MAX_CONFIG_ISSUES);
}
