// The validator catalogue (GET /api/v1/validators/) and the save-time config check for steps.
import { assertionsValidator } from "./assertions/index.ts";
import { csvTableValidator } from "./csv-table/index.ts";
import { jsonSchemaValidator } from "./json-schema/index.ts";
import { DEFAULT_MAX_FINDINGS, MAX_MAX_FINDINGS, MAX_TIMEOUT_MS } from "./limits.ts";
import { isPlainObject } from "./shared/config-shape.ts";
import { withoutCommonKeys } from "./shared/common.ts";
import { syntaxValidator } from "./syntax/index.ts";
import { textRulesValidator } from "./text-rules/index.ts";
import type { ConfigIssue, ValidatorDef } from "./types.ts";
import { xmlSchemaValidator } from "./xml-schema/index.ts";

export { DEFAULT_MAX_FINDINGS };

export const VALIDATORS: readonly ValidatorDef[] = Object.freeze([
  syntaxValidator,
  jsonSchemaValidator,
  xmlSchemaValidator,
  csvTableValidator,
  assertionsValidator,
  textRulesValidator,
]);

const BY_SLUG = new Map(VALIDATORS.map((v) => [v.slug, v]));

export function getValidator(slug: string): ValidatorDef | undefined {
  return BY_SLUG.get(slug);
}

function boundedInteger(config: Record<string, unknown>, key: string, max: number): ConfigIssue | null {
  if (!(key in config)) return null;
  const v = config[key];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > max) {
    return { field: key, code: "invalid", message: `must be an integer from 1 to ${max}` };
  }
  return null;
}

/** Save-time check of one step: common keys here, the rest by the validator. */
export function checkStepConfig(slug: string, config: unknown): ConfigIssue[] {
  const def = getValidator(slug);
  if (!def)
    return [{ field: "validator", code: "unknown_validator", message: `"${slug}" is not a known validator` }];
  if (!isPlainObject(config)) return [{ field: "", code: "invalid", message: "config must be an object" }];
  const issues: ConfigIssue[] = [];
  for (const [key, max] of [
    ["max_findings", MAX_MAX_FINDINGS],
    ["timeout_ms", MAX_TIMEOUT_MS],
  ] as const) {
    const i = boundedInteger(config, key, max);
    if (i) issues.push(i);
  }
  return [...issues, ...def.checkConfig(withoutCommonKeys(config))];
}

/** Findings cap of a step (the worker passes it as ctx.maxFindings). */
export function maxFindingsOf(config: unknown): number {
  const v = isPlainObject(config) ? config.max_findings : undefined;
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= MAX_MAX_FINDINGS
    ? v
    : DEFAULT_MAX_FINDINGS;
}
