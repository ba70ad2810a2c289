// One CEL environment for every rule: `data` and `row` are dynamic; limits bound the size of
// what authors may write (AST nodes, nesting, literal sizes). CEL has no loops or recursion, so
// evaluation is bounded by data size; macros nested over big lists are the costly case, and the
// worker's step timeout is the backstop for them.
import { Environment } from "@marcbachmann/cel-js";
import { CEL_LIMITS } from "../limits.ts";
import { hasNestedQuantifier } from "../shared/safe-regex.ts";

export const celEnv = new Environment({
  enableOptionalTypes: true,
  homogeneousAggregateLiterals: false,
  limits: CEL_LIMITS,
})
  .registerVariable("data", "dyn")
  .registerVariable("row", "dyn");

export type Evaluate = ((ctx: Record<string, unknown>) => unknown) & { ast: unknown };

/** First line of a cel-js error (the rest is a source excerpt with a caret). */
export function celMessage(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0];
}

/** Literal regexes given to matches(): the engine is JavaScript's backtracking RegExp. */
function unsafeMatches(node: unknown): string | null {
  if (Array.isArray(node)) {
    for (const n of node) {
      const r = unsafeMatches(n);
      if (r) return r;
    }
    return null;
  }
  if (node === null || typeof node !== "object") return null;
  const n = node as { op?: unknown; args?: unknown };
  if ((n.op === "rcall" || n.op === "call") && Array.isArray(n.args) && n.args[0] === "matches") {
    for (const a of n.args.flat(2) as Array<{ op?: unknown; args?: unknown }>) {
      if (a?.op === "value" && typeof a.args === "string" && hasNestedQuantifier(a.args)) {
        return `matches() pattern "${a.args}" nests quantifiers, e.g. (a+)+, which can take exponential time`;
      }
    }
  }
  return unsafeMatches(n.args);
}

/** Save-time check: parses and type-checks; `bool` requires a bool (or dyn) result. */
export function checkExpression(expr: string, bool: boolean): string | null {
  try {
    const r = celEnv.check(expr);
    if (!r.valid) return celMessage(r.error);
    if (bool && r.type !== "bool" && r.type !== "dyn") return `must evaluate to bool, not ${r.type}`;
    return unsafeMatches((celEnv.parse(expr) as unknown as Evaluate).ast);
  } catch (e) {
    return celMessage(e);
  }
}

export function parseExpression(expr: string): Evaluate {
  return celEnv.parse(expr) as unknown as Evaluate;
}

/** Does the expression read the variable `row`? Such rules run once per row. */
export function usesRow(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(usesRow);
  if (node === null || typeof node !== "object") return false;
  const n = node as { op?: unknown; args?: unknown };
  if (n.op === "id") return n.args === "row";
  return usesRow(n.args);
}

/** CEL value → text for messages. */
export function show(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "bigint" || typeof v === "number" || typeof v === "boolean") return String(v);
  if (v === null || v === undefined) return "null";
  if (v instanceof Date) return v.toISOString();
  try {
    return JSON.stringify(v, (_k, x) =>
      typeof x === "bigint" ? Number(x) : x instanceof Map ? Object.fromEntries(x) : x,
    );
  } catch {
    return String(v);
  }
}
