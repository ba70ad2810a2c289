// `assertions`: author rules in CEL over the parsed submission. A rule whose expression, `when`
// or message reads `row` runs once per row (CSV records, or elements of a top-level JSON/YAML
// array); other rules run once per document. A rule that cannot be evaluated (missing key,
// wrong type) yields assertion.error at the rule's severity: the data did not satisfy it. A rule
// that runs over its budget (meter.ts) ends the step in error with assertion.budget_exceeded.
import { FindingCollector, finding } from "../shared/findings.ts";
import type { Finding, ValidationContext, ValidationInput, ValidatorDef } from "../types.ts";
import { type Compiled, compileExpression, evaluate, show } from "./cel.ts";
import { type AssertionsConfig, checkConfig, configSchema, PLACEHOLDER, type RuleConfig } from "./config.ts";
import { type Row, subjects } from "./data.ts";

interface CompiledRule {
  cfg: RuleConfig;
  expr: Compiled;
  when: Compiled | null;
  parts: Array<string | Compiled>;
  perRow: boolean;
}

function compileRule(cfg: RuleConfig): CompiledRule {
  const parts: Array<string | Compiled> = [];
  let last = 0;
  for (const m of cfg.message.matchAll(PLACEHOLDER)) {
    parts.push(cfg.message.slice(last, m.index), compileExpression(m[1].trim(), { bool: false }));
    last = m.index + m[0].length;
  }
  parts.push(cfg.message.slice(last));
  const expr = compileExpression(cfg.expr, { bool: true });
  const when = cfg.when === undefined ? null : compileExpression(cfg.when, { bool: true });
  const perRow = [expr, when, ...parts].some((p) => p !== null && typeof p !== "string" && p.readsRow);
  return { cfg, expr, when, parts, perRow };
}

const ROWS_PER_GC = 20_000;

/** A rule that ran over its budget: the step ends with this finding and an error. */
class OverBudget {
  constructor(readonly finding: Finding) {}
}

type Where = Pick<Row, "position"> & { path: string | null };

function budgetFinding(rule: CompiledRule, where: Where, reason: string): OverBudget {
  // Short enough to be the step's error too (200 characters); docs/cel.md says what to do.
  const message = `rule "${rule.cfg.id}" was stopped: its evaluation ${reason}`;
  return new OverBudget(
    finding("assertion.budget_exceeded", message, {
      severity: "error",
      path: where.path,
      rule: rule.cfg.id,
      ...(where.position ?? {}),
    }),
  );
}

function render(rule: CompiledRule, vars: Record<string, unknown>, where: Where): string {
  return rule.parts
    .map((p) => {
      if (typeof p === "string") return p;
      const out = evaluate(p, vars);
      if ("budget" in out) throw budgetFinding(rule, where, out.budget);
      return "value" in out ? show(out.value) : "<?>";
    })
    .join("");
}

/** Evaluates one rule against one set of variables; returns a finding or null. */
function check(rule: CompiledRule, vars: Record<string, unknown>, where: Where): Finding | null {
  const severity = rule.cfg.severity ?? "error";
  // Built only for a finding: a row's position may cost a scan of the document (data.ts).
  const init = () => ({ severity, path: where.path, rule: rule.cfg.id, ...(where.position ?? {}) });
  const error = (text: string) => finding("assertion.error", `rule "${rule.cfg.id}" ${text}`, init());
  if (rule.when) {
    const w = evaluate(rule.when, vars);
    if ("budget" in w) throw budgetFinding(rule, where, w.budget);
    if ("error" in w) return error(`could not be evaluated (when): ${w.error}`);
    if (w.value === false) return null;
    // A `when` that reads the data (dyn) may yield another type at run time: the rule's
    // applicability is then unknown, as its verdict is when `expr` does (it was skipped: passed).
    if (w.value !== true)
      return error(`could not be evaluated (when): it returned ${show(w.value)}, not a bool`);
  }
  const r = evaluate(rule.expr, vars);
  if ("budget" in r) throw budgetFinding(rule, where, r.budget);
  if ("error" in r) return error(`could not be evaluated: ${r.error}`);
  if (r.value === true) return null;
  if (r.value === false) return finding("assertion.failed", render(rule, vars, where), init());
  return error(`returned ${show(r.value)}, not a bool`);
}

function compile(config: unknown) {
  const c = config as AssertionsConfig;
  const rules = c.rules.map(compileRule);
  const options = { xmlLists: c.xml?.lists ?? "auto" };
  return (input: ValidationInput, ctx: ValidationContext) => {
    const out = new FindingCollector(ctx.maxFindings);
    try {
      for (const subject of subjects(input, options)) {
        for (const p of subject.problems ?? []) out.add(p);
        if (subject.problems) continue;
        for (const n of subject.notes ?? []) out.add(n);
        const data = subject.data;
        for (const rule of rules) {
          if (out.truncated) return out.result();
          if (!rule.perRow) {
            const f = check(rule, { data }, { path: null, position: subject.position ?? null });
            if (f) out.add(f);
          } else if (!subject.rows) {
            const msg = `rule "${rule.cfg.id}" uses \`row\`, which needs CSV records or a top-level array`;
            out.add(
              finding("assertion.error", msg, {
                severity: rule.cfg.severity ?? "error",
                rule: rule.cfg.id,
                ...(subject.position ?? {}),
              }),
            );
          } else {
            let n = 0;
            for (const row of subject.rows) {
              // Each row's evaluation leaves garbage; JSC let two runs over a million rows reach
              // 1.3 GB before collecting. A hint every ROWS_PER_GC rows (gc-pace.ts does the same).
              if (++n % ROWS_PER_GC === 0) Bun.gc(false);
              const f = check(rule, { data, row: row.value }, row);
              if (f && !out.add(f)) break;
            }
          }
        }
      }
    } catch (e) {
      if (!(e instanceof OverBudget)) throw e;
      // What the evaluation built (up to its budget: a few hundred MB) is garbage now; collected at
      // once, not whenever the next runs' allocations get to it, or several such runs in a row
      // pile up their garbage in each worker (1.2 GB of RSS after four, #19).
      Bun.gc(true);
      const result = out.result();
      return {
        findings: [...result.findings.slice(0, ctx.maxFindings - 1), e.finding],
        truncated: result.truncated,
        error: e.finding.message,
      };
    }
    return out.result();
  };
}

export const assertionsValidator: ValidatorDef = {
  slug: "assertions",
  name: "Assertions (CEL)",
  description:
    "Business rules as CEL expressions over the parsed submission (`data`, and `row` per CSV record).",
  supportedFileTypes: ["JSON", "YAML", "XML", "CSV"],
  configSchema,
  checkConfig,
  compile,
};
