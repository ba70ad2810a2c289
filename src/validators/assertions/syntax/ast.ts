// CEL's abstract syntax (cel.expr.Expr, the shape @bufbuild/cel plans from), built as plain objects:
// the planner reads only `id` and `exprKind`, so no protobuf runtime is needed to make a node.
import type { Constant, Expr } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js";

export type { Expr };
export type ExprKind = Expr["exprKind"];
export type ConstantKind = Constant["constantKind"];

/** Hands out node ids; one per parsed expression (ids only need to be unique within it). */
export class Ids {
  #next = 1n;
  next(): bigint {
    return this.#next++;
  }
}

export function node(ids: Ids, kind: ExprKind): Expr {
  return { id: ids.next(), exprKind: kind } as Expr;
}

export const constant = (ids: Ids, kind: ConstantKind): Expr =>
  node(ids, { case: "constExpr", value: { constantKind: kind } as Constant });
export const ident = (ids: Ids, name: string): Expr =>
  node(ids, { case: "identExpr", value: { name } as never });
export const call = (ids: Ids, fn: string, args: Expr[], target?: Expr): Expr =>
  node(ids, { case: "callExpr", value: { function: fn, args, target } as never });
export const list = (ids: Ids, elements: Expr[]): Expr =>
  node(ids, { case: "listExpr", value: { elements, optionalIndices: [] } as never });
export const select = (ids: Ids, operand: Expr, field: string, testOnly = false): Expr =>
  node(ids, { case: "selectExpr", value: { operand, field, testOnly } as never });

export interface FoldParts {
  iterVar: string;
  iterRange: Expr;
  accuVar: string;
  accuInit: Expr;
  loopCondition: Expr;
  loopStep: Expr;
  result: Expr;
}

export const fold = (ids: Ids, parts: FoldParts): Expr =>
  node(ids, { case: "comprehensionExpr", value: { iterVar2: "", ...parts } as never });

/** The direct children of a node, in source order. */
export function children(e: Expr): Expr[] {
  const k = e.exprKind;
  switch (k.case) {
    case "selectExpr":
      return k.value.operand ? [k.value.operand] : [];
    case "callExpr":
      return k.value.target ? [k.value.target, ...k.value.args] : k.value.args;
    case "listExpr":
      return k.value.elements;
    case "structExpr":
      return k.value.entries.flatMap((entry) => [
        ...(entry.keyKind.case === "mapKey" ? [entry.keyKind.value] : []),
        ...(entry.value ? [entry.value] : []),
      ]);
    case "comprehensionExpr": {
      const c = k.value;
      return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].filter((x) => x !== undefined);
    }
    default:
      return [];
  }
}

/** Number of nodes in the tree (iterative: trees may be deep). */
export function countNodes(root: Expr): number {
  let n = 0;
  const stack = [root];
  while (stack.length > 0) {
    const e = stack.pop() as Expr;
    n++;
    stack.push(...children(e));
  }
  return n;
}
