// The save-time refusal of fontoxpath's own functions (`fontoxpath:evaluate#2`, which runs a
// string as XPath where no check reads it), of function-lookup() and of the `Q{…}` names of the
// functions Assay replaces (xpath.ts, engineProblem), applied again when a step is compiled to
// run: a step saved before one of them was refused keeps its config, since a save re-checks only
// the steps it changes. Such an expression is not evaluated; refused($why) is, so it ends as
// any expression that raises an error does (evaluate.ts): a `schematron.evaluation_error`
// finding naming the call, never a pass.
import { FONTOXPATH_NS, engineProblems, refusedExpression } from "./xpath.ts";

/**
 * Text an expression must hold to reach any of them: a `Q{…}` name, function-lookup (under any
 * prefix), or a prefix the schema binds to fontoxpath's namespace (checked apart). Anything else
 * is not parsed again: parsing to a tree costs about three times fontoxpath's own parse.
 */
const MAY_REACH = /Q\s*\{|function-lookup/;

export class EngineGuard {
  readonly #done = new Map<string, string>();
  /** Prefixes bound to fontoxpath's namespace: an expression using one is parsed too. */
  readonly #engine: RegExp | null;

  constructor(readonly namespaces: Record<string, string>) {
    const prefixes = Object.keys(namespaces).filter((p) => namespaces[p]?.trim() === FONTOXPATH_NS);
    // The prefix wherever it occurs: a `-` before it may be a minus, not part of a name
    // (`0 -f:evaluate(…)` ran evaluate()); a needless match only costs the parse.
    this.#engine =
      prefixes.length > 0 ? new RegExp(`(?:${prefixes.map(literally).join("|")})\\s*:`, "u") : null;
  }

  /** `expr`, or one that raises why it is not run (computed once per expression). */
  expression(expr: string): string {
    let out = this.#done.get(expr);
    if (out === undefined) {
      const problems =
        MAY_REACH.test(expr) || this.#engine?.test(expr) ? engineProblems(expr, this.namespaces) : [];
      out =
        problems.length === 0
          ? expr
          : refusedExpression(
              `the expression ${problems.join("; it ")}; refused when the step runs as at save, it was not evaluated`,
            );
      this.#done.set(expr, out);
    }
    return out;
  }
}

const literally = (s: string) => s.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");
