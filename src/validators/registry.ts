// The validator catalogue (GET /api/v1/validators/) and the save-time config check for steps.
import { assertionsValidator } from "./assertions/index.ts";
import { csvTableValidator } from "./csv-table/index.ts";
import { createJsonSchemaValidator, jsonSchemaValidator } from "./json-schema/index.ts";
import { referencedResources, schemaRefs } from "./json-schema/resources.ts";
import { quote } from "../lib/text.ts";
import { DEFAULT_MAX_FINDINGS, MAX_MAX_FINDINGS, MAX_TIMEOUT_MS } from "./limits.ts";
import { isPlainObject } from "./shared/config-shape.ts";
import { withoutCommonKeys } from "./shared/common.ts";
import { schematronValidator } from "./schematron/index.ts";
import { loadLibxml } from "./shared/libxml.ts";
import { syntaxValidator } from "./syntax/index.ts";
import { textRulesValidator } from "./text-rules/index.ts";
import type { ConfigIssue, ValidatorDef } from "./types.ts";
import { checkXmlSchemaConfig, pinXsdDocuments, xsdRootOf } from "./xml-schema/config.ts";
import { xmlSchemaValidator } from "./xml-schema/index.ts";

export { DEFAULT_MAX_FINDINGS };

export const VALIDATORS: readonly ValidatorDef[] = Object.freeze([
  syntaxValidator,
  jsonSchemaValidator,
  xmlSchemaValidator,
  schematronValidator,
  csvTableValidator,
  assertionsValidator,
  textRulesValidator,
]);

const BY_SLUG = new Map(VALIDATORS.map((v) => [v.slug, v]));

/**
 * The validator of `slug`: a built-in one, or one of `extra`, the validators a single instance
 * adds (test servers only: src/validators/test-hold/index.ts).
 */
export function getValidator(slug: string, extra: readonly ValidatorDef[] = []): ValidatorDef | undefined {
  return BY_SLUG.get(slug) ?? extra.find((v) => v.slug === slug);
}

function boundedInteger(config: Record<string, unknown>, key: string, max: number): ConfigIssue | null {
  if (!(key in config)) return null;
  const v = config[key];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > max) {
    return { field: key, code: "invalid", message: `must be an integer from 1 to ${max}` };
  }
  return null;
}

/** What the org supplies to a save-time check: its stored schemas, by absolute URI. */
export interface StepConfigContext {
  resources?: Record<string, Record<string, unknown>>;
  /** Validators this instance adds to the built-in ones (see getValidator). */
  extra?: readonly ValidatorDef[];
  /** Stored XSD documents (text) that XSD steps may include or import. */
  xsdDocuments?: Record<string, string>;
}

/** The config without the keys the server writes (snapshots of stored schemas): the author's. */
export function authoredConfig(config: Record<string, unknown>): Record<string, unknown> {
  const { resources: _r, documents: _d, ...rest } = config;
  return rest;
}

/** URIs of stored schemas a step's config names (json_schema $refs); [] for other validators. */
export function externalRefsOf(slug: string, config: unknown): string[] {
  return slug === jsonSchemaValidator.slug ? schemaRefs(config) : [];
}

/** The root of the XSD schema set of an xml_schema step, or null (src/schemas/ fetches the set). */
export function xsdRootOfStep(slug: string, config: unknown): ReturnType<typeof xsdRootOf> {
  return slug === xmlSchemaValidator.slug ? xsdRootOf(config) : null;
}

/**
 * The config to save: a json_schema step carries a snapshot of the stored schemas it reaches
 * (config.resources), an XSD step the stored documents of its schema set (config.documents), so
 * runs execute exactly what was saved. Other validators: unchanged. XSD steps need libxml2:
 * await prepareChecks first.
 */
export function pinStepConfig(
  slug: string,
  config: Record<string, unknown>,
  ctx: StepConfigContext = {},
): Record<string, unknown> {
  if (slug === xmlSchemaValidator.slug) return pinXsdDocuments(config, ctx.xsdDocuments);
  // A malformed `resources` is left for the check to report.
  if (
    slug !== jsonSchemaValidator.slug ||
    (config.resources !== undefined && !isPlainObject(config.resources))
  )
    return config;
  const carried = isPlainObject(config.resources) ? (config.resources as StepConfigContext["resources"]) : {};
  const pinned = referencedResources(config, { ...carried, ...ctx.resources });
  const { resources: _old, ...rest } = config;
  return Object.keys(pinned).length > 0 ? { ...rest, resources: pinned } : rest;
}

/**
 * Save-time check of one step: common keys here, the rest by the validator. Synchronous: await
 * prepareChecks for the step's validator first.
 */
export function checkStepConfig(slug: string, config: unknown, ctx: StepConfigContext = {}): ConfigIssue[] {
  const found = getValidator(slug, ctx.extra);
  const def =
    found && ctx.resources && slug === jsonSchemaValidator.slug
      ? createJsonSchemaValidator({ resources: ctx.resources })
      : found && ctx.xsdDocuments && slug === xmlSchemaValidator.slug
        ? { ...found, checkConfig: (c: unknown) => checkXmlSchemaConfig(c, ctx.xsdDocuments) }
        : found;
  if (!def)
    return [
      { field: "validator", code: "unknown_validator", message: `${quote(slug)} is not a known validator` },
    ];
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

/** Validators whose save-time check parses with libxml2 (syntax and assertions check none). */
const CHECKS_WITH_LIBXML: ReadonlySet<string> = new Set([xmlSchemaValidator.slug, schematronValidator.slug]);

/**
 * Makes ready what checkStepConfig needs for steps of these validators: libxml2 is loaded only
 * when one of them checks XML (src/validators/shared/libxml.ts), so a server that never saves an
 * XML schema never carries its wasm.
 */
export async function prepareChecks(slugs: Iterable<string>): Promise<void> {
  for (const slug of slugs) {
    if (CHECKS_WITH_LIBXML.has(slug)) {
      await loadLibxml();
      return;
    }
  }
}

/** Findings cap of a step (the worker passes it as ctx.maxFindings). */
export function maxFindingsOf(config: unknown): number {
  const v = isPlainObject(config) ? config.max_findings : undefined;
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= MAX_MAX_FINDINGS
    ? v
    : DEFAULT_MAX_FINDINGS;
}
