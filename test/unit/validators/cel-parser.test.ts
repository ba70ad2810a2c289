// Our CEL parser (src/validators/assertions/syntax/) against cel-go's own trees: the cel-spec npm
// package carries, for each expression of cel-go's parser and comprehension tests, the tree cel-go
// builds (as its debug string) or no tree when cel-go refuses the expression. Every one must match.
import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { ExprSchema } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js";
import {
  getComprehensionSuite,
  getParsingSuite,
  type IncrementalTestSuite,
} from "@bufbuild/cel-spec/testdata/tests.js";
import { KindAdorner, toDebugString } from "@bufbuild/cel-spec/testdata/to-debug-string.js";
import { children, type Expr } from "../../../src/validators/assertions/syntax/ast.ts";
import { CelSyntaxError, parseCel, syntaxMessage } from "../../../src/validators/assertions/syntax/parser.ts";

/**
 * cel-go refuses some of these only under the options its tests set: backtick-quoted names need
 * its EnableIdentEscapeSyntax (the CEL spec has them; the conformance suite tests them), and its
 * recursion limit there is 32 levels. Ours: 64 levels of brackets, 2000 nodes (CEL_LIMITS).
 */
function acceptedOnPurpose(expr: string, tree: Expr): boolean {
  return expr.includes("`") || depth(tree) > 32;
}

/** The suite's cel-go ran without ext/bindings; we expand cel.bind (macros.ts). */
const UNEXPANDED_BIND = "cel^#*expr.Expr_IdentExpr#.bind(";

function depth(e: Expr): number {
  return 1 + Math.max(0, ...children(e).map(depth));
}

function* cases(suite: IncrementalTestSuite): Generator<{ expr: string; ast?: string }> {
  for (const s of suite.suites) yield* cases(s);
  for (const t of suite.tests) yield { expr: t.original.expr, ast: t.ast };
}

function debug(expr: string): { text: string; tree: Expr } | Error {
  try {
    const tree = parseCel(expr).expr;
    return { text: toDebugString(create(ExprSchema, tree as never), KindAdorner.singleton), tree };
  } catch (e) {
    return e as Error;
  }
}

describe("CEL parser: cel-go's trees", () => {
  for (const [name, suite] of [
    ["parsing", getParsingSuite()],
    ["comprehension", getComprehensionSuite()],
  ] as const) {
    test(`${name} suite`, () => {
      const wrong: string[] = [];
      let n = 0;
      for (const c of cases(suite)) {
        n++;
        const got = debug(c.expr);
        if (got instanceof Error && !(got instanceof CelSyntaxError)) wrong.push(`${c.expr}: ${got.stack}`);
        else if (c.ast === undefined) {
          if (!(got instanceof Error) && !acceptedOnPurpose(c.expr, got.tree))
            wrong.push(`${c.expr}: cel-go refuses it, we got ${got.text}`);
        } else if (got instanceof Error) {
          wrong.push(`${c.expr}: ${got.message}`);
        } else if (got.text !== c.ast && !c.ast.includes(UNEXPANDED_BIND)) {
          wrong.push(
            `${c.expr}:\n  expected ${c.ast}\n  got      ${got instanceof Error ? got.message : got.text}`,
          );
        }
      }
      expect(n).toBeGreaterThan(50);
      expect(wrong).toEqual([]);
    });
  }
});

describe("CEL parser: messages and limits", () => {
  const message = (expr: string) => {
    try {
      parseCel(expr);
      return "parsed";
    } catch (e) {
      if (!(e instanceof CelSyntaxError)) throw e;
      return syntaxMessage(expr, e);
    }
  };
  test("syntax errors say where and what", () => {
    expect(message("data.x >")).toBe("syntax error at line 1, column 9: unexpected end of expression");
  });
});
