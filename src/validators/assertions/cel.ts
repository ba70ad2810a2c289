// From CEL source to a function of the data: parse (syntax/), check (check.ts), rewrite for
// evaluation (rewrite.ts), plan with @bufbuild/cel in Assay's environment (env.ts). Evaluation
// runs under a budget (meter.ts) and its errors are put in the author's words (errors.ts).
import { celMap, isCelError, plan } from "@bufbuild/cel";
import { CEL_LIMITS } from "../limits.ts";
import { CheckError, checkTypes } from "./check.ts";
import { env } from "./env.ts";
import { userMessage } from "./errors.ts";
import { BudgetExceeded, Meter, withMeter } from "./meter.ts";
import { rewriteForEvaluation } from "./rewrite.ts";
import { children, countNodes, type Expr } from "./syntax/ast.ts";
import { CelSyntaxError, parseCel, syntaxMessage } from "./syntax/parser.ts";

// @bufbuild/cel's own maps (map literals in a rule, `{'a': null}`) answer has() with `get(k) !=
// undefined`, so a key whose value is null reads as absent, against the spec (has() and `in`:
// "is a key in the map"; cel-spec's map_null_entry tests). Their get() returns undefined only for
// a missing key, so that test, strict, is the right one. The document's maps: views.ts.
{
  const native = Object.getPrototypeOf(celMap(new Map())) as {
    get(k: unknown): unknown;
    has(k: unknown): boolean;
  };
  native.has = function has(this: typeof native, key: unknown) {
    return this.get(key) !== undefined;
  };
}

export { show } from "./values.ts";

/** A save-time problem with an expression, in words for its author. */
export class ExpressionError extends Error {}

export interface Compiled {
  run(vars: Record<string, unknown>): unknown;
  /** The expression reads `row` (outside a macro that binds its own `row`). */
  readsRow: boolean;
}

export type Outcome = { value: unknown } | { error: string } | { budget: string };

export interface CompileOptions {
  /** The result must be a bool (rules and `when`), or anything (message placeholders). */
  bool: boolean;
  /** Skip the type check (the conformance suite's disable_check tests only). */
  unchecked?: boolean;
}

export function compileExpression(source: string, options: CompileOptions): Compiled {
  const parsed = checked(source, options);
  const readsRow = reads(parsed.expr, "row");
  const evaluate = plan(env, rewriteForEvaluation(parsed.expr, parsed.ids));
  return { run: (vars) => evaluate(vars as never), readsRow };
}

/** Parsed and checked, or an ExpressionError saying why not. */
function checked(source: string, options: CompileOptions): ReturnType<typeof parseCel> {
  let parsed: ReturnType<typeof parseCel>;
  try {
    parsed = parseCel(source);
  } catch (e) {
    if (e instanceof CelSyntaxError) throw new ExpressionError(syntaxMessage(source, e));
    if (e instanceof RangeError) throw new ExpressionError("the expression nests too deeply");
    throw e;
  }
  const nodes = countNodes(parsed.expr);
  if (nodes > CEL_LIMITS.maxAstNodes)
    throw new ExpressionError(
      `the expression is too large: ${nodes} nodes, at most ${CEL_LIMITS.maxAstNodes}`,
    );
  if (!options.unchecked) {
    try {
      checkTypes(parsed.expr, options);
    } catch (e) {
      if (e instanceof CheckError) throw new ExpressionError(e.message);
      throw e;
    }
  }
  return parsed;
}

/** Save-time check (on the HTTP thread: no planning): null when fine, else what is wrong. */
export function checkExpression(source: string, bool: boolean): string | null {
  try {
    checked(source, { bool });
    return null;
  } catch (e) {
    if (e instanceof ExpressionError) return e.message;
    throw e;
  }
}

/** Evaluates under a fresh budget; never throws. */
export function evaluate(compiled: Compiled, vars: Record<string, unknown>): Outcome {
  const meter = new Meter();
  let result: unknown;
  try {
    result = withMeter(meter, () => compiled.run(vars));
  } catch (e) {
    if (meter.exceeded !== null || e instanceof BudgetExceeded)
      return { budget: meter.exceeded ?? (e as Error).message };
    return { error: userMessage(e) };
  }
  // An exhausted budget wins over the result: `||` may have absorbed the error it raised.
  if (meter.exceeded !== null) return { budget: meter.exceeded };
  if (isCelError(result)) return { error: userMessage(result) };
  return { value: result };
}

/** Does `name` occur free in the expression (not as a macro's own variable)? */
function reads(e: Expr, name: string): boolean {
  const k = e.exprKind;
  if (k.case === "identExpr") return k.value.name === name;
  if (k.case === "comprehensionExpr") {
    const c = k.value;
    const outer = [c.iterRange, c.accuInit].some((x) => x !== undefined && reads(x, name));
    if (outer) return true;
    const inLoop = c.iterVar !== name && c.accuVar !== name;
    if (inLoop && [c.loopCondition, c.loopStep].some((x) => x !== undefined && reads(x, name))) return true;
    return c.accuVar !== name && c.result !== undefined && reads(c.result, name);
  }
  return children(e).some((c) => reads(c, name));
}
