// Authoring rules: slug syntax, file types, limits and save-time step config checks (a bad
// schema, XSD or expression is a 400 when saved, never a run-time surprise — CONTRACT §2).
import type { Actor } from "../audit/types.ts";
import { type ErrorItem, invalid, notFound } from "../errors.ts";
import type { SchemaStore } from "../schemas/store.ts";
import { storedClosure, storedXsdSet } from "../schemas/service.ts";
import {
  type StepConfigContext,
  authoredConfig,
  checkStepConfig,
  externalRefsOf,
  getValidator,
  pinStepConfig,
  prepareChecks,
  xsdRootOfStep,
} from "../validators/registry.ts";
import { FILE_TYPES, type FileType, type ValidatorDef } from "../validators/types.ts";
import type { WorkflowStore } from "./store.ts";
import type { StepDef, Workflow, WorkflowDraft } from "./types.ts";
import { NAME_CHARACTERS, nameCharactersOk, textCharactersOk } from "../lib/text.ts";

export const MAX_STEPS = 50;
/** A workflow's retention_days: at most 100 years, as ASSAY_RETENTION_DAYS (docs/limits.md). */
export const MAX_RETENTION_DAYS = 36500;
export const MAX_STEP_CONFIG_BYTES = 1_048_576;
/** A step config with the snapshot of the stored schemas it references. */
export const MAX_PINNED_CONFIG_BYTES = 8 * MAX_STEP_CONFIG_BYTES;
// A slug starts with a letter so that it can never be mistaken for a numeric id in paths.
const SLUG_RE = /^[a-z][a-z0-9_-]{0,62}$/;

export interface StepInput {
  name?: string;
  validator?: string;
  config?: Record<string, unknown>;
  is_active?: boolean;
}
export interface WorkflowInput {
  slug?: string;
  name?: string;
  description?: string;
  allowed_file_types?: string[];
  fail_fast?: boolean;
  status?: "active" | "inactive";
  retention_days?: number | null;
  steps?: StepInput[];
}

function checkStep(s: StepInput, field: string, errors: ErrorItem[], ctx: StepConfigContext) {
  const f = (k: string) => (field ? `${field}.${k}` : k);
  if (!s.name || s.name.length > 200)
    errors.push({
      field: f("name"),
      code: "invalid",
      message: "A step name of 1 to 200 characters is required.",
    });
  else if (!nameCharactersOk(s.name))
    errors.push({ field: f("name"), code: "invalid", message: `A step name ${NAME_CHARACTERS}.` });
  const v = s.validator ? getValidator(s.validator, ctx.extra) : undefined;
  if (!v) {
    errors.push({
      field: f("validator"),
      code: "unknown_validator",
      message: `Unknown validator "${s.validator ?? ""}"; see GET /api/v1/validators/.`,
    });
    return;
  }
  const config = s.config ?? {};
  // The snapshot a saved step carries is the server's, not the author's: measured below.
  if (Buffer.byteLength(JSON.stringify(authoredConfig(config)), "utf8") > MAX_STEP_CONFIG_BYTES) {
    errors.push({
      field: f("config"),
      code: "too_large",
      message: `A step config may hold at most ${MAX_STEP_CONFIG_BYTES} bytes of JSON.`,
    });
    return;
  }
  // The stored schemas the step references are saved with it: runs execute what was saved.
  const pinned = pinStepConfig(v.slug, config, ctx);
  if (Buffer.byteLength(JSON.stringify(pinned), "utf8") > MAX_PINNED_CONFIG_BYTES) {
    errors.push({
      field: f("config"),
      code: "too_large",
      message: `With the stored schemas it references, a step config may hold at most ${MAX_PINNED_CONFIG_BYTES} bytes of JSON.`,
    });
    return;
  }
  s.config = pinned;
  for (const i of checkStepConfig(v.slug, pinned, ctx))
    errors.push({ field: f(i.field ? `config.${i.field}` : "config"), code: i.code, message: i.message });
}

/**
 * Validates a complete draft; throws 400 invalid_request with every problem found. Step configs
 * are rewritten in place with the snapshot of the `ctx` schemas they reference. Synchronous:
 * await prepareChecks (src/validators/registry.ts) for the draft's validators first.
 */
export function checkDraft(
  d: WorkflowDraft,
  stepFieldOf: (i: number) => string = (i) => `steps[${i}]`,
  ctx: StepConfigContext = {},
): void {
  const errors: ErrorItem[] = [];
  if (!SLUG_RE.test(d.slug))
    errors.push({
      field: "slug",
      code: "invalid",
      message: "A slug is 1 to 63 characters: lowercase letters, digits, - and _, starting with a letter.",
    });
  if (!d.name.trim() || d.name.length > 200)
    errors.push({ field: "name", code: "invalid", message: "A name of 1 to 200 characters is required." });
  else if (!nameCharactersOk(d.name))
    errors.push({ field: "name", code: "invalid", message: `A name ${NAME_CHARACTERS}.` });
  if (d.description.length > 5000)
    errors.push({
      field: "description",
      code: "invalid",
      message: "The description may hold at most 5000 characters.",
    });
  else if (!textCharactersOk(d.description))
    errors.push({
      field: "description",
      code: "invalid",
      message: "The description may not contain U+0000 or unpaired surrogates.",
    });
  // The API's body schema refuses these first; a document imported on the data dir
  // (`assay workflows import`) is checked here, before the retention sweep could meet it.
  const days = d.retention_days;
  if (days !== null && !(Number.isInteger(days) && days >= 0 && days <= MAX_RETENTION_DAYS))
    errors.push({
      field: "retention_days",
      code: "invalid",
      message: `must be an integer from 0 to ${MAX_RETENTION_DAYS} or null`,
    });
  const types = d.allowed_file_types as string[];
  if (
    !types.length ||
    types.some((x) => !(FILE_TYPES as readonly string[]).includes(x)) ||
    new Set(types).size !== types.length
  )
    errors.push({
      field: "allowed_file_types",
      code: "invalid",
      message: `A non-empty list of distinct file types among ${FILE_TYPES.join(", ")}.`,
    });
  if (d.steps.length > MAX_STEPS)
    errors.push({
      field: "steps",
      code: "too_many",
      message: `A workflow may have at most ${MAX_STEPS} steps.`,
    });
  else
    d.steps.forEach((s, i) => {
      checkStep(s, stepFieldOf(i), errors, ctx);
    });
  if (!errors.length) checkFileTypes(d, stepFieldOf, errors);
  if (errors.length) throw invalid("The workflow definition is invalid.", errors);
}

/**
 * A run is refused unless every active step reads its file type (CONTRACT §4, step 8): a step
 * that reads none of the allowed types, or steps with no type in common, would make every run of
 * the workflow fail. Refused when saved, naming the step.
 */
function checkFileTypes(d: WorkflowDraft, stepFieldOf: (i: number) => string, errors: ErrorItem[]) {
  const allowed = d.allowed_file_types as FileType[];
  let common = new Set(allowed);
  const active: string[] = [];
  d.steps.forEach((s, i) => {
    const v = s.is_active ? getValidator(s.validator) : undefined;
    if (!v) return;
    const reads = v.supportedFileTypes;
    const named = `Step ${i + 1} "${s.name}" (${s.validator}) reads ${reads.join(", ")}`;
    const field = stepFieldOf(i) ? `${stepFieldOf(i)}.validator` : "validator";
    if (!allowed.some((t) => reads.includes(t)))
      errors.push({
        field,
        code: "file_type_unsupported",
        message: `${named}: none of the workflow's allowed_file_types (${allowed.join(", ")}).`,
      });
    common = new Set([...common].filter((t) => reads.includes(t)));
    active.push(named);
  });
  if (!errors.length && active.length && !common.size)
    errors.push({
      field: "allowed_file_types",
      code: "file_type_unsupported",
      message: `No allowed file type is read by every active step, so every run would be refused: ${active.join("; ")}.`,
    });
}

/** A draft's content, for "did anything change": step ids and key order do not count. */
function contentOf(d: WorkflowDraft): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sorted({ ...d, steps: d.steps.map(({ id: _, ...s }) => s) }));
}

export const draftOf = (w: Workflow, steps: StepDef[]): WorkflowDraft => ({
  slug: w.slug,
  name: w.name,
  description: w.description,
  status: w.status,
  allowed_file_types: w.allowed_file_types,
  fail_fast: w.fail_fast,
  retention_days: w.retention_days,
  steps: steps.map((s) => ({
    id: s.id,
    name: s.name,
    validator: s.validator,
    config: s.config,
    is_active: s.is_active,
  })),
});

const newStep = (s: StepInput) => ({
  id: null,
  name: s.name ?? "",
  validator: s.validator ?? "",
  config: s.config ?? {},
  is_active: s.is_active ?? true,
});

/** The defaults a new workflow (POST) or a replaced one (PUT) starts from. */
const EMPTY: WorkflowDraft = {
  slug: "",
  name: "",
  description: "",
  status: "active",
  allowed_file_types: [],
  fail_fast: true,
  retention_days: null,
  steps: [],
};

/** The fields the input names, over `base`; steps given are new steps replacing the list. */
export function applyInput(base: WorkflowDraft, b: WorkflowInput): WorkflowDraft {
  return {
    slug: b.slug ?? base.slug,
    name: b.name ?? base.name,
    description: b.description ?? base.description,
    status: b.status ?? base.status,
    allowed_file_types: (b.allowed_file_types ?? base.allowed_file_types) as FileType[],
    fail_fast: b.fail_fast ?? base.fail_fast,
    retention_days: b.retention_days === undefined ? base.retention_days : b.retention_days,
    steps: b.steps ? b.steps.map(newStep) : base.steps,
  };
}

export function createWorkflowService(
  store: WorkflowStore,
  schemas?: SchemaStore,
  /** Validators this instance adds to the built-in ones (registry.ts, getValidator). */
  extra: readonly ValidatorDef[] = [],
) {
  /**
   * What checkDraft needs for this draft: the engines its steps' checks use, loaded, and the
   * org's stored schemas the steps reference (transitively).
   */
  async function checkContext(orgId: number, d: WorkflowDraft): Promise<StepConfigContext> {
    await prepareChecks(d.steps.map((s) => s.validator));
    if (!schemas) return { extra };
    const ctx: StepConfigContext = { extra };
    const uris = d.steps.flatMap((s) => externalRefsOf(s.validator, s.config));
    if (uris.length > 0) ctx.resources = await storedClosure(schemas, orgId, uris);
    const roots = d.steps.flatMap((s) => xsdRootOfStep(s.validator, s.config) ?? []);
    if (roots.length > 0) ctx.xsdDocuments = await storedXsdSet(schemas, orgId, roots);
    return ctx;
  }
  async function load(orgId: number, identifier: string) {
    const w = await store.find(orgId, identifier);
    if (!w) throw notFound("Workflow");
    return { workflow: w, steps: await store.steps(w.id) };
  }
  return {
    load,
    list: store.list,
    async create(orgId: number, b: WorkflowInput, actor: Actor) {
      const d = applyInput(EMPTY, b);
      checkDraft(d, undefined, await checkContext(orgId, d));
      return store.save(orgId, null, d, { actor, action: "workflow.create" });
    },
    /**
     * PUT replaces the whole definition; PATCH changes the named fields (steps too, if given).
     * A request that changes nothing (PATCH {}, the same values) saves nothing: the version
     * counts changes (CONTRACT §2), and the audit log records none.
     */
    async update(orgId: number, identifier: string, b: WorkflowInput, replace: boolean, actor: Actor) {
      const cur = await load(orgId, identifier);
      const now = draftOf(cur.workflow, cur.steps);
      const d = applyInput(replace ? EMPTY : now, b);
      if (contentOf(d) === contentOf(now)) return cur;
      checkDraft(d, undefined, await checkContext(orgId, d));
      return store.save(orgId, cur.workflow.id, d, { actor, action: "workflow.update" });
    },
    async remove(orgId: number, identifier: string, actor: Actor) {
      const { workflow } = await load(orgId, identifier);
      await store.softDelete(workflow, actor);
    },
    async addStep(orgId: number, identifier: string, s: StepInput & { order?: number }, actor: Actor) {
      const cur = await load(orgId, identifier);
      const d = draftOf(cur.workflow, cur.steps);
      const at = Math.min(Math.max((s.order ?? d.steps.length + 1) - 1, 0), d.steps.length);
      d.steps.splice(at, 0, newStep(s));
      checkDraft(d, (i) => (i === at ? "" : `steps[${i}]`), await checkContext(orgId, d));
      const saved = await store.save(orgId, cur.workflow.id, d, { actor, action: "step.create" });
      return { ...saved, step: saved.steps[at]! };
    },
    async updateStep(
      orgId: number,
      identifier: string,
      stepId: string,
      s: StepInput & { order?: number },
      actor: Actor,
    ) {
      const cur = await load(orgId, identifier);
      const d = draftOf(cur.workflow, cur.steps);
      const from = d.steps.findIndex((x) => String(x.id) === stepId);
      if (from < 0) throw notFound("Step");
      const old = d.steps[from]!;
      const changed = {
        ...old,
        name: s.name ?? old.name,
        validator: s.validator ?? old.validator,
        config: s.config ?? (s.validator && s.validator !== old.validator ? {} : old.config),
        is_active: s.is_active ?? old.is_active,
      };
      d.steps.splice(from, 1);
      const to = s.order === undefined ? from : Math.min(s.order - 1, d.steps.length);
      d.steps.splice(to, 0, changed);
      if (contentOf(d) === contentOf(draftOf(cur.workflow, cur.steps)))
        return { ...cur, step: cur.steps[from]! };
      checkDraft(d, (i) => (i === to ? "" : `steps[${i}]`), await checkContext(orgId, d));
      const saved = await store.save(orgId, cur.workflow.id, d, { actor, action: "step.update" });
      return { ...saved, step: saved.steps[to]! };
    },
    async deleteStep(orgId: number, identifier: string, stepId: string, actor: Actor) {
      const cur = await load(orgId, identifier);
      const d = draftOf(cur.workflow, cur.steps);
      const at = d.steps.findIndex((x) => String(x.id) === stepId);
      if (at < 0) throw notFound("Step");
      d.steps.splice(at, 1);
      return store.save(orgId, cur.workflow.id, d, { actor, action: "step.delete" });
    },
  };
}
export type WorkflowService = ReturnType<typeof createWorkflowService>;
