// Rewrites of a checked expression for evaluation (never shown to authors):
// - map() and filter() append to one growing list instead of building `@result + [x]` each step
//   (env.ts, @append): linear instead of quadratic, and no list nested 100,000 levels deep;
// - every comprehension is metered: its range is charged by size (@range) and each step by the
//   number of nodes of its condition and step (@tick), so nested loops run out of budget in
//   proportion to the work they do, whatever their data;
// - every list and map literal left is charged for what it allocates (@build): an empty list
//   costs the engine ~180 bytes, a map ~400, so `data.a.map(x, data.a.map(y, {'k': x}))`, paying
//   only its nodes, held 1.4 GB within its budget (found against the built binary, #19).
import { LIST_LITERAL_UNITS, MAP_LITERAL_UNITS } from "./meter.ts";
import { call, children, constant, countNodes, type Expr, type Ids } from "./syntax/ast.ts";

const RESULT = "@result";

function isIdent(e: Expr | undefined, name: string): boolean {
  return e?.exprKind.case === "identExpr" && e.exprKind.value.name === name;
}

/** `@result + [x]` → `@append(@result, x)`; null when `e` is not that. */
function appendOf(ids: Ids, e: Expr): Expr | null {
  const k = e.exprKind;
  if (k.case !== "callExpr" || k.value.function !== "_+_" || k.value.target || k.value.args.length !== 2)
    return null;
  const [accu, item] = k.value.args;
  if (
    !isIdent(accu, RESULT) ||
    item.exprKind.case !== "listExpr" ||
    item.exprKind.value.elements.length !== 1
  )
    return null;
  return call(ids, "@append", [accu, item.exprKind.value.elements[0]]);
}

/** The step of a map()/filter() expansion with its appends rewritten, or null. */
function growingStep(ids: Ids, step: Expr): Expr | null {
  const direct = appendOf(ids, step);
  if (direct) return direct;
  const k = step.exprKind;
  if (k.case !== "callExpr" || k.value.function !== "_?_:_" || k.value.args.length !== 3) return null;
  const [guard, yes, no] = k.value.args;
  const append = appendOf(ids, yes);
  return append && isIdent(no, RESULT) ? call(ids, "_?_:_", [guard, append, no]) : null;
}

export function rewriteForEvaluation(root: Expr, ids: Ids): Expr {
  const visit = (e: Expr): void => {
    for (const c of children(e)) visit(c);
    const k = e.exprKind;
    if (k.case !== "comprehensionExpr") return;
    const c = k.value;
    if (!c.iterRange || !c.loopCondition || !c.loopStep || !c.accuInit) return;
    const stepCost = BigInt(1 + countNodes(c.loopCondition) + countNodes(c.loopStep));
    const init = c.accuInit.exprKind;
    if (c.accuVar === RESULT && init.case === "listExpr" && init.value.elements.length === 0) {
      const step = growingStep(ids, c.loopStep);
      if (step) {
        c.loopStep = step;
        c.accuInit = call(ids, "@newlist", []);
      }
    }
    c.iterRange = call(ids, "@range", [c.iterRange]);
    c.loopCondition = call(ids, "@tick", [
      c.loopCondition,
      constant(ids, { case: "int64Value", value: stepCost }),
    ]);
  };
  visit(root);
  chargeLiterals(root, ids);
  return root;
}

/** Wraps each list and map literal in `@build(literal, units)`, in place (iterative: deep trees). */
function chargeLiterals(root: Expr, ids: Ids): void {
  const stack = [root];
  while (stack.length > 0) {
    const e = stack.pop() as Expr;
    stack.push(...children(e));
    const k = e.exprKind;
    let units: number;
    if (k.case === "listExpr")
      units = LIST_LITERAL_UNITS.base + LIST_LITERAL_UNITS.each * k.value.elements.length;
    else if (k.case === "structExpr" && !k.value.messageName)
      units = MAP_LITERAL_UNITS.base + MAP_LITERAL_UNITS.each * k.value.entries.length;
    else continue;
    const literal = { id: e.id, exprKind: k } as Expr;
    const wrapped = call(ids, "@build", [
      literal,
      constant(ids, { case: "int64Value", value: BigInt(units) }),
    ]);
    e.id = wrapped.id;
    e.exprKind = wrapped.exprKind;
  }
}
