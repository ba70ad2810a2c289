// An assertions rule that reads `row` runs once per CSV record or top-level array element
// (docs/cel.md); an XML document has neither, so on a workflow that allows only XML every run
// of such a rule ends in assertion.error. Refused when saved, naming the rule's expression.
import type { ErrorItem } from "../errors.ts";
import { compileExpression } from "../validators/assertions/cel.ts";
import type { AssertionsConfig } from "../validators/assertions/config.ts";
import { PLACEHOLDER } from "../validators/assertions/config.ts";
import type { FileType } from "../validators/types.ts";
import type { WorkflowDraft } from "./types.ts";

/** The file types whose documents give `row` values (CSV records, a top-level array). */
const ROW_TYPES: readonly FileType[] = ["CSV", "JSON", "YAML"];

const readsRow = (source: string, bool: boolean): boolean => {
  try {
    return compileExpression(source, { bool }).readsRow;
  } catch {
    return false; // the validator's own check reports a bad expression
  }
};

/** The part of a rule that reads `row` ("expr", "when", "message"), or null. */
function rowPart(rule: AssertionsConfig["rules"][number]): string | null {
  if (readsRow(rule.expr, true)) return "expr";
  if (rule.when !== undefined && readsRow(rule.when, true)) return "when";
  for (const m of rule.message.matchAll(PLACEHOLDER)) if (readsRow(m[1]!.trim(), false)) return "message";
  return null;
}

export function checkRowRules(d: WorkflowDraft, stepFieldOf: (i: number) => string, errors: ErrorItem[]) {
  if (d.allowed_file_types.some((t) => ROW_TYPES.includes(t))) return;
  d.steps.forEach((s, i) => {
    if (!s.is_active || s.validator !== "assertions") return;
    const rules = (s.config as Partial<AssertionsConfig>).rules ?? [];
    rules.forEach((rule, j) => {
      const part = rowPart(rule);
      if (!part) return;
      const step = stepFieldOf(i);
      errors.push({
        field: `${step ? `${step}.` : ""}config.rules[${j}].${part}`,
        code: "file_type_unsupported",
        message: `Rule "${rule.id}" reads \`row\`, which needs CSV records or a top-level JSON or YAML array; the workflow's allowed_file_types (${d.allowed_file_types.join(", ")}) give none.`,
      });
    });
  });
}
