// The `assertions` step config: its published schema and its save-time check (CONTRACT §2a: a
// bad expression is a 400 at save, each problem an errors[] item naming its field).
import { MAX_ASSERTION_RULES, MAX_EXPRESSION_LENGTH, MAX_FINDING_MESSAGE_CHARS } from "../limits.ts";
import { COMMON_CONFIG_PROPERTIES, SEVERITY_SCHEMA } from "../shared/common.ts";
import { issue, isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import type { ConfigIssue, Severity } from "../types.ts";
import { checkExpression } from "./cel.ts";
import { XML_PATH, type XmlLists, xmlPathProblem } from "./xml-lists.ts";

const expression = { type: "string", minLength: 1, maxLength: MAX_EXPRESSION_LENGTH };
export const configSchema = {
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
            maxLength: MAX_FINDING_MESSAGE_CHARS,
            description: "May embed {{ cel }} placeholders; a filled-in message is cut at this length too.",
          },
          severity: SEVERITY_SCHEMA,
          when: { ...expression, description: "CEL; the rule applies only when true." },
        },
        additionalProperties: false,
      },
    },
    xml: {
      type: "object",
      description: "How XML submissions become `data`.",
      properties: {
        lists: {
          description:
            'Elements that are always lists: paths from the root ("order/item", "//item" at any depth), "always" for every element below the root, or "auto" (default: a list only when it repeats).',
          anyOf: [
            { enum: ["auto", "always"] },
            {
              type: "array",
              maxItems: 100,
              // xmlPathProblem's syntax, published; the save words it per path (xmlListsIssues).
              items: { type: "string", maxLength: 500, pattern: XML_PATH.source },
            },
          ],
          default: "auto",
        },
      },
      additionalProperties: false,
    },
    ...COMMON_CONFIG_PROPERTIES,
  },
  additionalProperties: false,
};

export interface RuleConfig {
  id: string;
  expr: string;
  message: string;
  severity?: Severity;
  when?: string;
}

export interface AssertionsConfig {
  rules: RuleConfig[];
  xml?: { lists?: XmlLists };
}

export const PLACEHOLDER = /\{\{([\s\S]*?)\}\}/g;

/** xml.lists, item by item (the schema's anyOf alone would only say "must match a schema"). */
function xmlListsIssues(config: Record<string, unknown>): ConfigIssue[] {
  const lists = isPlainObject(config.xml) ? config.xml.lists : undefined;
  if (lists === undefined || lists === "auto" || lists === "always") return [];
  if (!Array.isArray(lists))
    return [issue("xml.lists", "invalid", 'must be "auto", "always" or a list of paths')];
  if (lists.length > 100) return [issue("xml.lists", "invalid", "must hold at most 100 paths")];
  return lists.flatMap((path, i) => {
    const p =
      typeof path === "string" && path.length <= 500
        ? xmlPathProblem(path)
        : "must be a path of at most 500 characters";
    return p ? [issue(`xml.lists[${i}]`, "invalid", p)] : [];
  });
}

export function checkConfig(config: unknown): ConfigIssue[] {
  if (!isPlainObject(config)) return [issue("", "invalid", "must be an object")];
  const lists = xmlListsIssues(config);
  const shape = [
    ...shapeIssues(configSchema, config).filter((i) => !i.field.startsWith("xml.lists")),
    ...lists,
  ];
  if (shape.length > 0) return shape;
  const issues: ConfigIssue[] = [];
  const ids = new Set<string>();
  const c = config as unknown as AssertionsConfig;
  c.rules.forEach((r, i) => {
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
