// `json_schema`: validates JSON and YAML submissions with typebox 1.x (drafts 4 to 2020-12).
// Schemas are meta-validated and every $ref is checked at save time; nothing is ever fetched.
// Org-stored schemas plug in through `resources` (URI → schema) of createJsonSchemaValidator.
import Schema from "typebox/schema";
import { Settings } from "typebox/system";
import { MAX_CONFIG_ISSUES } from "../limits.ts";
import { COMMON_CONFIG_PROPERTIES } from "../shared/common.ts";
import { issue, isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import { StepLimitError } from "../limit-error.ts";
import { FindingCollector, finding } from "../shared/findings.ts";
import type { ConfigIssue, ValidationContext, ValidationInput, ValidatorDef } from "../types.ts";
import { type Dialect, dialectOf } from "./dialect.ts";
import { unknownFormats } from "./formats.ts";
import { DEFAULT_DRAFT, DRAFTS, type Draft, META_URIS, metaResources, normalise } from "./drafts.ts";
import { type TbError, toFindings } from "./errors.ts";
import { refCycle } from "./cycles.ts";
import { errorContext, unevaluatedOnArray } from "./explain.ts";
import { instanceDocuments } from "./instance.ts";
import { foreignAnchorErrors } from "./anchors.ts";
import {
  documentAnchors,
  foreignAnchorRefs,
  foreignPointerRefs,
  ROOT_BASE,
  unresolvableRefs,
} from "./refs.ts";
import { rewriteRef, withRefSlots } from "./ref-paths.ts";
import { engineView, reachableContext } from "./resources.ts";
import { foreignSubschemaErrors, type Holder, subschemaErrors } from "./subschemas.ts";
import { withUserPatterns } from "./user-patterns.ts";
import { compileCheck } from "./engine.ts";
import { enumErrors, withEnumSets } from "./enum-sets.ts";
import { patternIssues } from "./walk.ts";

export interface JsonSchemaConfig {
  schema: Record<string, unknown> | boolean;
  draft?: Draft;
  assert_formats?: boolean;
  /** Schemas `$ref` may name, by absolute URI: the org's stored schemas, snapshotted at save. */
  resources?: Record<string, Record<string, unknown>>;
}

export interface JsonSchemaOptions {
  /** Extra schemas that `$ref` may name, keyed by absolute URI (no network, ever). */
  resources?: Record<string, unknown>;
  /** The URI the schema is stored under (an org schema): the base of its relative references. */
  uri?: string;
}

export const jsonSchemaConfigSchema = {
  type: "object",
  required: ["schema"],
  properties: {
    schema: {
      type: ["object", "boolean"],
      description: "The JSON Schema the submission must satisfy (true and false are schemas too).",
    },
    draft: {
      enum: [...DRAFTS],
      description:
        "The draft the schema is read as, when it has no $schema; with one, both must name the same draft (a mismatch is refused at save). Default 2020-12.",
    },
    assert_formats: { type: "boolean", default: true, description: "Treat `format` as an assertion." },
    resources: {
      type: "object",
      additionalProperties: { type: "object" },
      description:
        "Schemas `$ref` may name, keyed by absolute URI. Filled at save time with the org's stored schemas the step references.",
    },
    ...COMMON_CONFIG_PROPERTIES,
  },
  additionalProperties: false,
};

type Compiled = ReturnType<typeof Schema.Compile>;
/** What meta-validation needs of a validator: its errors. */
type Explainer = Pick<Compiled, "Errors">;
const metaValidators = new Map<Draft, Compiled>();
const META = metaResources();
const NO_RESOURCES: Record<string, unknown> = {};

function metaValidator(draft: Draft): Compiled {
  let v = metaValidators.get(draft);
  if (!v) {
    v = Schema.Compile(META as never, (Schema.Meta as Record<string, unknown>)[META_URIS[draft]] as never);
    metaValidators.set(draft, v);
  }
  return v;
}

/** The dialect in force: $schema when present, else config.draft, else 2020-12. */
function resolveDialect(cfg: JsonSchemaConfig, resources: Record<string, unknown>): Dialect | ConfigIssue {
  const d = dialectOf(cfg.schema, resources, cfg.draft ?? DEFAULT_DRAFT);
  if ("code" in d) return d;
  if (cfg.draft && d.draft !== cfg.draft && isPlainObject(cfg.schema)) {
    const via = d.meta
      ? `the meta-schema its $schema names is draft ${d.draft}`
      : `its $schema declares draft ${d.draft}`;
    return issue("draft", "draft_mismatch", `is "${cfg.draft}" but ${via}`);
  }
  return d;
}

const contexts = new WeakMap<object, Map<string, Record<string, unknown>>>();

/**
 * Meta-schemas plus the registered resources, normalised once per (draft, formats): a registered
 * schema follows its own $schema (a draft or a stored meta-schema), else the dialect of the schema
 * referencing it, and its relative references resolve against the URI it is stored under.
 */
function resourceContext(resources: Record<string, unknown>, draft: Draft, assertFormats: boolean) {
  let perDraft = contexts.get(resources);
  if (!perDraft) {
    perDraft = new Map();
    contexts.set(resources, perDraft);
  }
  const key = `${draft}/${assertFormats}`;
  let context = perDraft.get(key);
  if (!context) {
    context = { ...META };
    for (const [uri, res] of Object.entries(resources)) {
      const d = dialectOf(res, resources, draft);
      const own: Dialect = "code" in d ? { draft, formatAssertion: false } : d;
      context[uri] = normalise(res, {
        draft: own.draft,
        assertFormats: own.formatAssertion || assertFormats,
        vocabularies: own.vocabularies,
        uri: uri.replace(/#$/, ""),
      });
    }
    perDraft.set(key, context);
  }
  return context;
}

function prepare(cfg: JsonSchemaConfig, resources: Record<string, unknown>, uri?: string) {
  const dialect = resolveDialect(cfg, resources);
  if ("code" in dialect) return { issues: [dialect] };
  const { draft } = dialect;
  const assertFormats = cfg.assert_formats ?? true;
  const schema = normalise(cfg.schema, {
    draft,
    assertFormats: dialect.formatAssertion || assertFormats,
    vocabularies: dialect.vocabularies,
    uri,
  });
  return { draft, dialect, schema, context: resourceContext(resources, draft, assertFormats) };
}

/** The hook's resources plus those the config carries (the config's win: they are the snapshot). */
function resourcesOf(cfg: JsonSchemaConfig, opts: JsonSchemaOptions): Record<string, unknown> {
  if (!cfg.resources) return opts.resources ?? NO_RESOURCES;
  return { ...opts.resources, ...cfg.resources };
}

/** Meta-validation issues of `schema` against `validator`, as config issues of `field`. */
function metaIssues(validator: Explainer, schema: unknown, field: string, prefix = ""): ConfigIssue[] {
  Settings.Set({ maxErrors: MAX_CONFIG_ISSUES });
  const explain = (value: unknown) => validator.Errors(value) as [boolean, TbError[]];
  const [valid, whole] = explain(schema);
  // Whole, then each subschema its meta-schema does not reach ($defs before draft 2019-09, a
  // `$ref` target under an unknown keyword): a $ref makes those schemas too (subschemas.ts).
  const errors = valid
    ? subschemaErrors(explain, schema, MAX_CONFIG_ISSUES)
    : whole.map((error) => ({ at: "", error }));
  return errors
    .filter(({ error: e }) => e.keyword !== "anyOf" && e.keyword !== "oneOf")
    .map(({ at, error: e }) =>
      issue(
        field,
        "invalid_schema",
        `${prefix}${at + e.instancePath || "(root)"}: ${e.message} (meta-schema ${e.schemaPath})`,
      ),
    );
}

/**
 * Issues of each `$ref` into another stored schema (`other.json#/x/y`) whose target is not a
 * schema in the draft of the schema holding it (that schema's own check did not reach a target
 * under an unknown keyword, subschemas.ts): from the schema and each stored schema carried.
 */
function foreignIssues(
  cfg: JsonSchemaConfig,
  p: { draft: Draft; schema: unknown; context: Record<string, unknown> },
  resources: Record<string, unknown>,
  uri?: string,
): ConfigIssue[] {
  Settings.Set({ maxErrors: MAX_CONFIG_ISSUES });
  const holders = new Map<string, ReturnType<Holder>>();
  const holder: Holder = (doc) => {
    if (holders.has(doc)) return holders.get(doc);
    const schema = resources[doc] ?? resources[`${doc}#`];
    const d = isPlainObject(schema) ? dialectOf(schema, resources, p.draft) : null;
    // A custom meta-schema's own check is left to the whole schema's (as for carried resources).
    const v = !d || "code" in d || d.meta ? undefined : metaValidator(d.draft);
    const h = v && { schema, explain: (value: unknown) => v.Errors(value) as [boolean, TbError[]] };
    holders.set(doc, h);
    return h;
  };
  // One pass over all references: a target checked for one is not checked again for another.
  const from = <T>(find: (schema: unknown, uri?: string) => T[]) => [
    ...find(p.schema, uri).map((r) => ({ ...r, field: "schema", prefix: "" })),
    ...Object.keys(cfg.resources ?? {}).flatMap((u) =>
      find(p.context[u], u).map((r) => ({ ...r, field: "resources", prefix: `${u}: ` })),
    ),
  ];
  const checked = new Set<unknown>();
  const errors = [
    ...foreignSubschemaErrors(from(foreignPointerRefs), holder, MAX_CONFIG_ISSUES, checked).map((e) => ({
      ...e,
      pointer: e.ref.pointer,
    })),
    // Anchors (`other.json#a`) after pointers: a target a pointer checked is not checked again.
    // Only those the engine resolves: one declared under an unknown keyword, or nowhere, is no
    // schema and the reference check refuses it (refs.ts, unresolvableRefs).
    ...foreignAnchorErrors(
      from(foreignAnchorRefs).filter((r) =>
        documentAnchors(p.context[r.doc] ?? p.context[`${r.doc}#`], r.doc).has(r.anchor),
      ),
      holder,
      MAX_CONFIG_ISSUES,
      checked,
    ),
  ];
  const out: ConfigIssue[] = [];
  for (const { ref, pointer, error: e } of errors) {
    if (e.keyword === "anyOf" || e.keyword === "oneOf") continue;
    const at = `${ref.doc}#${pointer}${e.instancePath}`;
    out.push(
      issue(
        ref.field,
        "invalid_schema",
        `${ref.prefix}$ref "${ref.ref}" at ${ref.at} points to an invalid schema: ${at}: ${e.message} (meta-schema ${e.schemaPath})`,
      ),
    );
  }
  return out;
}

/**
 * Unknown `format` names where a meta-schema's format-assertion vocabulary is in force (the
 * schema's own dialect, or a stored resource's). Under `assert_formats` alone they stay ignored,
 * as the JSON-Schema-Test-Suite's optional/format/unknown.json expects of format-annotation.
 */
function unknownFormatIssues(
  cfg: JsonSchemaConfig,
  dialect: Dialect,
  resources: Record<string, unknown>,
  draft: Draft,
): ConfigIssue[] {
  const unknown = (field: string, prefix: string, schema: unknown) =>
    unknownFormats(schema).map((at) =>
      issue(
        field,
        "unknown_format",
        `${prefix}${at} is not a format Assay checks, and the meta-schema's format-assertion vocabulary requires every format to be checked`,
      ),
    );
  const out = dialect.formatAssertion ? unknown("schema", "", cfg.schema) : [];
  for (const [uri, res] of Object.entries(cfg.resources ?? {})) {
    const d = dialectOf(res, resources, draft);
    if (!("code" in d) && d.formatAssertion) out.push(...unknown("resources", `${uri}: `, res));
  }
  return out;
}

export function checkJsonSchemaConfig(config: unknown, opts: JsonSchemaOptions = {}): ConfigIssue[] {
  if (!isPlainObject(config)) return [issue("", "invalid", "must be an object")];
  const shape = shapeIssues(jsonSchemaConfigSchema, config);
  if (shape.length > 0) return shape;
  const cfg = config as unknown as JsonSchemaConfig;
  const resources = resourcesOf(cfg, opts);
  const p = prepare(cfg, resources, opts.uri);
  if (p.issues) return p.issues;
  // A custom meta-schema is the one to satisfy; it is compiled with the org's schemas around it.
  let meta: Explainer;
  try {
    meta = p.dialect.meta
      ? withUserPatterns(() => {
          const m = p.dialect.meta!;
          const schema = normalise(m.schema, { draft: p.draft, assertFormats: true, uri: m.uri });
          // Only its Errors() are asked for, which typebox interprets: no code to generate.
          const context = reachableContext(schema, p.context);
          return {
            Errors: (value: unknown) =>
              withUserPatterns(() => Schema.Errors(context as never, schema as never, value)),
          };
        })
      : metaValidator(p.draft);
  } catch (e) {
    return [issue("schema", "invalid_schema", `its meta-schema cannot be compiled: ${(e as Error).message}`)];
  }
  const invalid = metaIssues(meta, cfg.schema, "schema");
  // Each stored schema the step carries is valid in the dialect it is read in (its own $schema,
  // else the step's draft): a draft-7 "$id": "#foo" is an anchor, in 2020-12 it is an error.
  for (const [uri, res] of Object.entries(cfg.resources ?? {})) {
    const d = dialectOf(res, resources, p.draft);
    if ("code" in d) invalid.push(issue("resources", d.code, `${uri}: ${d.message}`));
    else if (!d.meta) invalid.push(...metaIssues(metaValidator(d.draft), res, "resources", `${uri}: `));
  }
  if (invalid.length === 0) invalid.push(...foreignIssues(cfg, p, resources, opts.uri));
  if (invalid.length > 0) return invalid.slice(0, MAX_CONFIG_ISSUES);
  const formats = unknownFormatIssues(cfg, p.dialect, resources, p.draft);
  if (formats.length > 0) return formats.slice(0, MAX_CONFIG_ISSUES);
  const patterns = [cfg.schema, ...Object.values(cfg.resources ?? {})].flatMap(patternIssues);
  if (patterns.length > 0)
    return patterns.slice(0, MAX_CONFIG_ISSUES).map((i) => issue("schema", i.code, i.message));
  // The draft each stored schema is read in: a message names where an anchor hides (refs.ts).
  const draftOf = (uri: string): Draft => {
    const res = resources[uri] ?? resources[`${uri}#`];
    const d = isPlainObject(res) ? dialectOf(res, resources, p.draft) : undefined;
    return d && !("code" in d) ? d.draft : p.draft;
  };
  const refs = unresolvableRefs(p.schema, p.context, opts.uri ?? ROOT_BASE, { draft: p.draft, draftOf });
  if (refs.length > 0)
    return refs.slice(0, MAX_CONFIG_ISSUES).map((m) => issue("schema", "unresolvable_ref", m));
  // typebox would treat a dangling reference inside a resource as `false`, as in the schema.
  const inner = Object.keys(cfg.resources ?? {}).flatMap((uri) =>
    unresolvableRefs(p.context[uri], p.context, uri, { draft: draftOf(uri), draftOf }).map(
      (m) => `${uri}: ${m}`,
    ),
  );
  if (inner.length > 0)
    return inner.slice(0, MAX_CONFIG_ISSUES).map((m) => issue("resources", "unresolvable_ref", m));
  // References that loop without moving into the document would recurse until the stack ends.
  const cycle = opts.uri ? refCycle(p.schema, p.context, opts.uri) : refCycle(p.schema, p.context);
  if (cycle) return [issue("schema", "invalid_schema", cycle)];
  // The compile a run does (engine.ts): what passes here compiles on every thread.
  try {
    const view = engineView(p.schema, p.context, opts.uri);
    compileCheck(view.context, view.schema);
  } catch (e) {
    const why = e instanceof RangeError ? NESTED_TOO_DEEPLY : (e as Error).message;
    return [issue("schema", "invalid_schema", `cannot be compiled: ${why}`)];
  }
  return [];
}

/** Why the engine ran out of stack compiling a schema: width is never it (engine.ts). */
const NESTED_TOO_DEEPLY = "its subschemas and the references between them nest too deeply";

/** Thrown when the engine runs out of stack on a document: the step ends `error`, in our words. */
export class SchemaRecursionError extends StepLimitError {
  constructor() {
    super({
      severity: "error",
      code: "json_schema.engine_limit",
      message:
        "the schema could not be evaluated on this document: its references recurse too deeply " +
        "(references that loop back without moving into the document never end); the data was not checked",
      path: null,
      line: null,
      column: null,
      rule: null,
    });
  }
}

/** Thrown when the schema cannot be compiled on this thread: the step ends `error`, in our words. */
export class SchemaCompileLimitError extends StepLimitError {
  constructor() {
    super({
      severity: "error",
      code: "json_schema.engine_limit",
      message: `the schema could not be compiled: ${NESTED_TOO_DEEPLY}; the data was not checked`,
      path: null,
      line: null,
      column: null,
      rule: null,
    });
  }
}

/** Runs the engine; a stack overflow (a $ref cycle the save-time check could not rule out) is ours. */
function guarded<T>(run: () => T, limit: () => StepLimitError = () => new SchemaRecursionError()): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof RangeError) throw limit();
    throw e;
  }
}

function compileSchema(config: unknown, opts: JsonSchemaOptions) {
  const cfg = config as JsonSchemaConfig;
  const p = prepare(cfg, resourcesOf(cfg, opts));
  if (p.issues) throw new Error(`json_schema config not checked: ${p.issues[0].message}`);
  // Stored schemas under their own `$id` too (resources.ts, engineView).
  const view = engineView(p.schema, p.context);
  const context = view.context;
  // Saved schemas compiled at save, but a thread's stack is not the saving thread's (engine.ts).
  const validator = guarded(
    () => compileCheck(context, view.schema),
    () => new SchemaCompileLimitError(),
  );
  return { validator, schema: view.schema, context };
}

/**
 * True when every document of the input satisfies the schema; no findings are built. The cheap
 * half of validation, for the inline lane (src/jobs/inline.ts): building findings from errors is
 * not linear in the document (errors.ts compares errors pairwise), so a document that fails goes
 * to a worker, where the step's time limit can stop it.
 */
export function compileJsonSchemaPassCheck(config: unknown, opts: JsonSchemaOptions = {}) {
  const { validator } = compileSchema(config, opts);
  return (input: ValidationInput): boolean =>
    instanceDocuments(input).every((doc) => !doc.problem && guarded(() => validator.Check(doc.value)));
}

/**
 * The validator findings come from: the schema with its references in allOf slots, so that each
 * error's path names the `$ref`s it went through (ref-paths.ts). Compiled on the first failure.
 */
function slottedValidator(schema: unknown, context: Record<string, unknown>) {
  // Large enums are lookups here too (enum-sets.ts), their errors read back by enumErrors.
  const slotted = {
    schema: withEnumSets(withRefSlots(schema), true),
    context: Object.fromEntries(
      Object.entries(context).map(([uri, s]) => [rewriteRef(uri), withEnumSets(withRefSlots(s), true)]),
    ),
  };
  // Errors() is typebox's interpreter whatever the validator: nothing to compile (engine.ts).
  const validator = {
    Errors: (value: unknown) => Schema.Errors(slotted.context as never, slotted.schema as never, value),
  };
  return { validator, ...slotted };
}

export function compileJsonSchema(config: unknown, opts: JsonSchemaOptions = {}) {
  const { validator, schema, context } = compileSchema(config, opts);
  let explaining: ReturnType<typeof slottedValidator> | undefined;
  return (input: ValidationInput, ctx: ValidationContext) => {
    const out = new FindingCollector(ctx.maxFindings);
    for (const doc of instanceDocuments(input)) {
      if (doc.problem) {
        if (!out.add(doc.problem)) break;
        continue;
      }
      if (guarded(() => validator.Check(doc.value))) continue;
      // Headroom over maxFindings: some raw errors are merged away by toFindings.
      Settings.Set({ maxErrors: Math.min(ctx.maxFindings * 4 + 64, 50_000) });
      const found = guarded(() => {
        explaining ??= slottedValidator(schema, context);
        const e = explaining;
        const [, errors] = withUserPatterns(() => e.validator.Errors(doc.value)) as [boolean, TbError[]];
        const real = enumErrors(errors).filter((x) => !unevaluatedOnArray(doc.value, x));
        // Only the interpreter's fault on arrays failed the check (a schema too wide to compile,
        // engine.ts): the document matches, as the compiled check would have said.
        if (real.length === 0 && errors.length > 0) return null;
        // One over what the step keeps, so that the collector knows when it dropped some.
        return toFindings(
          real,
          doc.locate,
          errorContext(e.schema, e.context, doc.value),
          ctx.maxFindings + 1,
        );
      });
      if (found === null) continue;
      if (found.length === 0)
        found.push(finding("json_schema.invalid", "does not match the schema", { path: "" }));
      for (const f of found) if (!out.add(f)) break;
      if (out.truncated) break;
    }
    return out.result();
  };
}

export function createJsonSchemaValidator(opts: JsonSchemaOptions = {}): ValidatorDef {
  return {
    slug: "json_schema",
    name: "JSON Schema",
    description: "Validates JSON and YAML against a JSON Schema (drafts 4, 6, 7, 2019-09, 2020-12).",
    supportedFileTypes: ["JSON", "YAML"],
    configSchema: jsonSchemaConfigSchema,
    checkConfig: (config) => checkJsonSchemaConfig(config, opts),
    compile: (config) => compileJsonSchema(config, opts),
  };
}

export const jsonSchemaValidator = createJsonSchemaValidator();
