// `assertions`: author rules in CEL over the parsed submission. A rule whose expression, `when`
// or message reads `row` runs once per row (CSV records, or elements of a top-level JSON/YAML
// array); other rules run once per document. A rule that cannot be evaluated (missing key,
// wrong type) yields assertion.error at the rule's severity: the data did not satisfy it.
import { MAX_ASSERTION_RULES, MAX_EXPRESSION_LENGTH } from "../limits.ts";
import { COMMON_CONFIG_PROPERTIES, SEVERITY_SCHEMA } from "../shared/common.ts";
import { issue, isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import { FindingCollector, finding } from "../shared/findings.ts";
import type { ConfigIssue, Severity, ValidationContext, ValidationInput, ValidatorDef } from "../types.ts";
import { celMessage, checkExpression, type Evaluate, parseExpression, show, usesRow } from "./cel.ts";
import { type Row, subjects } from "./data.ts";

const expression = { type: "string", minLength: 1, maxLength: MAX_EXPRESSION_LENGTH };
const configSchema = {
  type: "object",
  required: ["rules"],
  properties: {
    rules: {
      type: "array",
      minItems: 1,
      maxItems: MAX_ASSERTION_RULES,
      items: {
        type: "object",
        required: ["id", "expr", "message"],
        properties: {
          id: { type: "string", minLength: 1, maxLength: 100 },
          expr: { ...expression, description: "CEL; must be true for the data to pass." },
          message: {
            type: "string",
            minLength: 1,
            maxLength: 2000,
            description: "May embed {{ cel }} placeholders.",
          },
          severity: SEVERITY_SCHEMA,
          when: { ...expression, description: "CEL; the rule applies only when true." },
        },
        additionalProperties: false,
      },
    },
    ...COMMON_CONFIG_PROPERTIES,
  },
  additionalProperties: false,
};

interface RuleConfig {
  id: string;
  expr: string;
  message: string;
  severity?: Severity;
  when?: string;
}

const PLACEHOLDER = /\{\{([\s\S]*?)\}\}/g;

function checkConfig(config: unknown): ConfigIssue[] {
  if (!isPlainObject(config)) return [issue("", "invalid", "must be an object")];
  const shape = shapeIssues(configSchema, config);
  if (shape.length > 0) return shape;
  const issues: ConfigIssue[] = [];
  const ids = new Set<string>();
  (config.rules as RuleConfig[]).forEach((r, i) => {
    if (ids.has(r.id))
      issues.push(issue(`rules[${i}].id`, "duplicate", `"${r.id}" is used by an earlier rule`));
    ids.add(r.id);
    const e = checkExpression(r.expr, true);
    if (e) issues.push(issue(`rules[${i}].expr`, "invalid_expression", e));
    const w = r.when === undefined ? null : checkExpression(r.when, true);
    if (w) issues.push(issue(`rules[${i}].when`, "invalid_expression", w));
    for (const m of r.message.matchAll(PLACEHOLDER)) {
      const p = checkExpression(m[1].trim(), false);
      if (p) issues.push(issue(`rules[${i}].message`, "invalid_expression", `placeholder {{${m[1]}}}: ${p}`));
    }
  });
  return issues;
}

interface CompiledRule {
  cfg: RuleConfig;
  expr: Evaluate;
  when: Evaluate | null;
  parts: Array<string | Evaluate>;
  perRow: boolean;
}

function compileRule(cfg: RuleConfig): CompiledRule {
  const parts: Array<string | Evaluate> = [];
  let last = 0;
  for (const m of cfg.message.matchAll(PLACEHOLDER)) {
    parts.push(cfg.message.slice(last, m.index), parseExpression(m[1].trim()));
    last = m.index + m[0].length;
  }
  parts.push(cfg.message.slice(last));
  const expr = parseExpression(cfg.expr);
  const when = cfg.when === undefined ? null : parseExpression(cfg.when);
  const perRow = [expr, when, ...parts].some((p) => typeof p === "function" && usesRow(p.ast));
  return { cfg, expr, when, parts, perRow };
}

function render(rule: CompiledRule, vars: Record<string, unknown>): string {
  return rule.parts
    .map((p) => {
      if (typeof p === "string") return p;
      try {
        return show(p(vars));
      } catch {
        return "<?>";
      }
    })
    .join("");
}

/** Evaluates one rule against one set of variables; returns a finding or null. */
function evaluate(
  rule: CompiledRule,
  vars: Record<string, unknown>,
  where: Pick<Row, "position"> & { path: string | null },
) {
  const severity = rule.cfg.severity ?? "error";
  const init = { severity, path: where.path, rule: rule.cfg.id, ...(where.position ?? {}) };
  try {
    if (rule.when && rule.when(vars) !== true) return null;
    const result = rule.expr(vars);
    if (result === true) return null;
    if (result === false) return finding("assertion.failed", render(rule, vars), init);
    return finding("assertion.error", `rule "${rule.cfg.id}" returned ${show(result)}, not a bool`, init);
  } catch (e) {
    return finding("assertion.error", `rule "${rule.cfg.id}" could not be evaluated: ${celMessage(e)}`, init);
  }
}

function compile(config: unknown) {
  const rules = (config as { rules: RuleConfig[] }).rules.map(compileRule);
  return (input: ValidationInput, ctx: ValidationContext) => {
    const out = new FindingCollector(ctx.maxFindings);
    for (const subject of subjects(input)) {
      for (const p of subject.problems ?? []) out.add(p);
      if (subject.problems) continue;
      const data = subject.data;
      for (const rule of rules) {
        if (out.truncated) return out.result();
        if (!rule.perRow) {
          const f = evaluate(rule, { data }, { path: null, position: null });
          if (f) out.add(f);
        } else if (!subject.rows) {
          const msg = `rule "${rule.cfg.id}" uses \`row\`, which needs CSV records or a top-level array`;
          out.add(
            finding("assertion.error", msg, { severity: rule.cfg.severity ?? "error", rule: rule.cfg.id }),
          );
        } else {
          for (const row of subject.rows) {
            const f = evaluate(rule, { data, row: row.value }, row);
            if (f && !out.add(f)) break;
          }
        }
      }
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
