// CEL's macros, expanded at parse time into comprehensions exactly as cel-go expands them (the
// accumulator is `@result`, a name no one can write), plus cel-go's `cel.bind` (ext/bindings).
import { call, constant, type Expr, fold, type Ids, ident, list, select } from "./ast.ts";
import { CelSyntaxError } from "./lexer.ts";

const RESULT = "@result";

/** A macro's loop variable: a plain name. */
function variable(fn: string, e: Expr): string {
  if (e.exprKind.case !== "identExpr" || e.exprKind.value.name.startsWith("."))
    throw new CelSyntaxError(`the first argument of ${fn}() must be a variable name`, 0);
  const name = e.exprKind.value.name;
  // cel-go's accumulator was once called __result__: it stays reserved there, so here too.
  if (name === "__result__") throw new CelSyntaxError(`the variable name ${name} is reserved`, 0);
  return name;
}

const bool = (ids: Ids, value: boolean) => constant(ids, { case: "boolValue", value });
const int = (ids: Ids, value: bigint) => constant(ids, { case: "int64Value", value });

/** The expansion of `target.fn(args)` or `fn(args)`, or null when it is an ordinary call. */
export function expandMacro(ids: Ids, fn: string, target: Expr | undefined, args: Expr[]): Expr | null {
  if (target === undefined) {
    if (fn !== "has" || args.length !== 1) return null;
    const arg = args[0].exprKind;
    if (arg.case !== "selectExpr" || arg.value.testOnly || !arg.value.operand)
      throw new CelSyntaxError("has() takes a field selection, as in has(data.field)", 0);
    return select(ids, arg.value.operand, arg.value.field, true);
  }
  if (
    fn === "bind" &&
    args.length === 3 &&
    target.exprKind.case === "identExpr" &&
    target.exprKind.value.name === "cel"
  ) {
    // cel-go ext/bindings: a comprehension over nothing whose accumulator is the bound name.
    const name = variable("cel.bind", args[0]);
    return fold(ids, {
      iterVar: "#unused",
      iterRange: list(ids, []),
      accuVar: name,
      accuInit: args[1],
      loopCondition: bool(ids, false),
      loopStep: ident(ids, name),
      result: args[2],
    });
  }
  const accu = () => ident(ids, RESULT);
  const over = (
    iterVar: string,
    parts: Omit<Parameters<typeof fold>[1], "iterVar" | "iterRange" | "accuVar">,
  ) => fold(ids, { iterVar, iterRange: target, accuVar: RESULT, ...parts });
  if (args.length === 2 && (fn === "all" || fn === "exists" || fn === "exists_one" || fn === "existsOne")) {
    const v = variable(fn, args[0]);
    const p = args[1];
    if (fn === "all")
      return over(v, {
        accuInit: bool(ids, true),
        loopCondition: call(ids, "@not_strictly_false", [accu()]),
        loopStep: call(ids, "_&&_", [accu(), p]),
        result: accu(),
      });
    if (fn === "exists")
      return over(v, {
        accuInit: bool(ids, false),
        loopCondition: call(ids, "@not_strictly_false", [call(ids, "!_", [accu()])]),
        loopStep: call(ids, "_||_", [accu(), p]),
        result: accu(),
      });
    return over(v, {
      accuInit: int(ids, 0n),
      loopCondition: bool(ids, true),
      loopStep: call(ids, "_?_:_", [p, call(ids, "_+_", [accu(), int(ids, 1n)]), accu()]),
      result: call(ids, "_==_", [accu(), int(ids, 1n)]),
    });
  }
  if (fn === "sortBy" && args.length === 2) {
    // cel-go ext/lists: the keys computed by a map(), then the list sorted by them.
    const keys = expandMacro(ids, "map", target, args) as Expr;
    return call(ids, "@sortByAssociatedKeys", [target, keys]);
  }
  if ((fn === "map" && (args.length === 2 || args.length === 3)) || (fn === "filter" && args.length === 2)) {
    const v = variable(fn, args[0]);
    const value = fn === "filter" ? ident(ids, v) : args[args.length - 1];
    const append = call(ids, "_+_", [accu(), list(ids, [value])]);
    const guard = fn === "filter" ? args[1] : args.length === 3 ? args[1] : null;
    return over(v, {
      accuInit: list(ids, []),
      loopCondition: bool(ids, true),
      loopStep: guard ? call(ids, "_?_:_", [guard, append, accu()]) : append,
      result: accu(),
    });
  }
  return null;
}
