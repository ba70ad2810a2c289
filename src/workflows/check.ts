// Authoring rules: slug syntax, file types, limits and save-time step config checks (a bad
// schema, XSD or expression is a 400 when saved, never a run-time surprise — CONTRACT §2).
// Pure over the draft and the stored schemas it references: it runs on the HTTP thread for light
// drafts and on the workflow check thread for heavy ones (check-thread.ts).
import { canonicalJson } from "../audit/chain.ts";
import { type ErrorItem, type Problem, invalid, invalidBecause } from "../errors.ts";
import {
  charCount,
  headOf,
  jsonHasLoneSurrogate,
  jsonHasOverflow,
  NAME_CHARACTERS,
  NO_LONE_SURROGATES,
  NO_OVERFLOW,
  nameCharactersOk,
  quote,
  textCharactersOk,
} from "../lib/text.ts";
import {
  type StepConfigContext,
  authoredConfig,
  checkStepConfig,
  getValidator,
  pinStepConfig,
} from "../validators/registry.ts";
import { MAX_CONFIG_ISSUE_CHARS } from "../validators/limits.ts";
import { FILE_TYPES, type FileType } from "../validators/types.ts";
import { checkRowRules } from "./check-rows.ts";
import type { StepInput } from "./service.ts";
import type { WorkflowDraft } from "./types.ts";

export const MAX_STEPS = 50;
/** A workflow's retention_days: at most 100 years, as ASSAY_RETENTION_DAYS (docs/limits.md). */
export const MAX_RETENTION_DAYS = 36500;
export const MAX_STEP_CONFIG_BYTES = 1_048_576;
/** A step config with the snapshot of the stored schemas it references. */
export const MAX_PINNED_CONFIG_BYTES = 8 * MAX_STEP_CONFIG_BYTES;
/**
 * All of a workflow's step configs with their snapshots: 50 steps naming one 8 MiB stored XSD
 * would otherwise turn a 5 KB request into 400 MB of JSON held, stored and served by every GET.
 */
export const MAX_WORKFLOW_PINNED_BYTES = 64 * MAX_STEP_CONFIG_BYTES;
// A slug starts with a letter so that it can never be mistaken for a numeric id in paths.
const SLUG_RE = /^[a-z][a-z0-9_-]{0,62}$/;

// A draft's field checks, each the one source of its item: checkDraft reports them, and the route
// schemas (model.ts) carry them so that a body the schema refuses gets them in the same 400
// (documentedWith, src/http/errors.ts boundItems).
export function workflowSlugProblem(slug: string): Problem | null {
  return SLUG_RE.test(slug)
    ? null
    : invalidBecause(
        "A slug is 1 to 63 characters: lowercase letters, digits, - and _, starting with a letter.",
      );
}
export function workflowNameProblem(name: string): Problem | null {
  if (!name.trim() || charCount(name) > 200)
    return invalidBecause("A name of 1 to 200 characters is required.");
  return nameCharactersOk(name) ? null : invalidBecause(`A name ${NAME_CHARACTERS}.`);
}
export function descriptionProblem(description: string): Problem | null {
  if (charCount(description) > 5000)
    return invalidBecause("The description may hold at most 5000 characters.");
  return textCharactersOk(description)
    ? null
    : invalidBecause("The description may not contain U+0000 or unpaired surrogates.");
}
export function fileTypesProblem(types: string[]): Problem | null {
  return !types.length ||
    types.some((x) => !(FILE_TYPES as readonly string[]).includes(x)) ||
    new Set(types).size !== types.length
    ? invalidBecause(`A non-empty list of distinct file types among ${FILE_TYPES.join(", ")}.`)
    : null;
}
export function stepCountProblem(steps: unknown[]): Problem | null {
  return steps.length > MAX_STEPS
    ? { code: "too_many", message: `A workflow may have at most ${MAX_STEPS} steps.` }
    : null;
}
export function stepNameProblem(name: string | undefined): Problem | null {
  if (!name || charCount(name) > 200)
    return invalidBecause("A step name of 1 to 200 characters is required.");
  return nameCharactersOk(name) ? null : invalidBecause(`A step name ${NAME_CHARACTERS}.`);
}

/**
 * A step's name, validator and sizes, its config rewritten with the snapshot of the stored
 * schemas it references. Returns the snapshot's size in bytes, or null when the step is refused
 * (then its config is not checked further).
 */
function pinStep(s: StepInput, field: string, errors: ErrorItem[], ctx: StepConfigContext): number | null {
  const f = (k: string) => (field ? `${field}.${k}` : k);
  const nameProblem = stepNameProblem(s.name);
  if (nameProblem) errors.push({ field: f("name"), ...nameProblem });
  const v = s.validator ? getValidator(s.validator, ctx.extra) : undefined;
  if (!v) {
    errors.push({
      field: f("validator"),
      code: "unknown_validator",
      message: `Unknown validator ${quote(s.validator ?? "")}; see GET /api/v1/validators/.`,
    });
    return null;
  }
  const config = s.config ?? {};
  const authored = JSON.stringify(authoredConfig(config));
  // Stored, every read of the workflow (its versions, export, audit) would repeat it as an escape.
  if (jsonHasLoneSurrogate(authored)) {
    errors.push({ field: f("config"), code: "invalid", message: `A step config ${NO_LONE_SURROGATES}.` });
    return null;
  }
  if (jsonHasOverflow(config)) {
    errors.push({ field: f("config"), code: "invalid", message: `A step config ${NO_OVERFLOW}.` });
    return null;
  }
  // The snapshot a saved step carries is the server's, not the author's: measured below.
  if (Buffer.byteLength(authored, "utf8") > MAX_STEP_CONFIG_BYTES) {
    errors.push({
      field: f("config"),
      code: "too_large",
      message: `A step config may hold at most ${MAX_STEP_CONFIG_BYTES} bytes of JSON.`,
    });
    return null;
  }
  // The stored schemas the step references are saved with it: runs execute what was saved.
  const pinned = pinStepConfig(v.slug, config, ctx);
  const bytes = Buffer.byteLength(JSON.stringify(pinned), "utf8");
  if (bytes > MAX_PINNED_CONFIG_BYTES) {
    errors.push({
      field: f("config"),
      code: "too_large",
      message: `With the stored schemas it references, a step config may hold at most ${MAX_PINNED_CONFIG_BYTES} bytes of JSON.`,
    });
    return null;
  }
  s.config = pinned;
  return bytes;
}

/** A problem's message cut to MAX_CONFIG_ISSUE_CHARS (it may quote a path of any length). */
export const clipIssue = (m: string) =>
  m.length > MAX_CONFIG_ISSUE_CHARS ? `${headOf(m, MAX_CONFIG_ISSUE_CHARS - 1)}…` : m;

/** The validator's own check of a pinned step config (compiles its schemas). */
function checkStepConfigOf(s: StepInput, field: string, errors: ErrorItem[], ctx: StepConfigContext) {
  const f = (k: string) => (field ? `${field}.${k}` : k);
  const v = getValidator(s.validator!, ctx.extra)!;
  for (const i of checkStepConfig(v.slug, s.config ?? {}, ctx))
    errors.push({
      field: f(i.field ? `config.${i.field}` : "config"),
      code: i.code,
      message: clipIssue(i.message),
    });
}

/**
 * Per step of a draft, the config its saved step (same id and validator) has now, or null for a
 * new step. A step whose pinned config is that one is not compiled again (checkDraft): a save that
 * leaves it as saved (a rename, a deactivation, another step's change) is not refused by a
 * save-time check added after it was saved, which would leave a workflow that still runs as saved
 * impossible to rename or deactivate until its schema is changed (docs/decisions.md).
 */
export type SavedConfigs = Array<Record<string, unknown> | null>;

/** The saved configs of `steps`, by id and validator, for checkDraft. */
export function savedConfigsOf(
  steps: WorkflowDraft["steps"],
  saved: ReadonlyArray<{ id: number; validator: string; config: Record<string, unknown> }>,
): SavedConfigs {
  const byId = new Map(saved.map((s) => [s.id, s]));
  return steps.map((s) => {
    const was = s.id == null ? undefined : byId.get(s.id);
    // The same object when unchanged: a message to the check thread carries it once.
    return was && was.validator === s.validator ? was.config : null;
  });
}

/** Whether a step's pinned config is its saved one (the same stored schemas pinned included). */
const asSaved = (config: Record<string, unknown> | undefined, saved: Record<string, unknown> | null) =>
  saved != null && (config === saved || canonicalJson(config ?? {}) === canonicalJson(saved));

/**
 * Validates a complete draft; throws 400 invalid_request with every problem found. Step configs
 * are rewritten in place with the snapshot of the `ctx` schemas they reference. Synchronous:
 * await prepareChecks (src/validators/registry.ts) for the draft's validators first.
 */
export function checkDraft(
  d: WorkflowDraft,
  stepFieldOf: (i: number) => string = (i) => `steps[${i}]`,
  ctx: StepConfigContext = {},
  /** Told before each step's config is compiled (the check thread reports it: check-thread.ts). */
  onStep?: (i: number) => void,
  /** The saved config of each step (savedConfigsOf): a step left as saved is not compiled again. */
  saved: SavedConfigs = [],
): void {
  const errors: ErrorItem[] = [];
  const problem = (field: string, p: Problem | null) => p && errors.push({ field, ...p });
  problem("slug", workflowSlugProblem(d.slug));
  problem("name", workflowNameProblem(d.name));
  problem("description", descriptionProblem(d.description));
  // The API's body schema refuses these first; a document imported on the data dir
  // (`assay workflows import`) is checked here, before the retention sweep could meet it.
  const days = d.retention_days;
  if (days !== null && !(Number.isInteger(days) && days >= 0 && days <= MAX_RETENTION_DAYS))
    errors.push({
      field: "retention_days",
      code: "invalid",
      message: `must be an integer from 0 to ${MAX_RETENTION_DAYS} or null`,
    });
  problem("allowed_file_types", fileTypesProblem(d.allowed_file_types as string[]));
  const tooMany = stepCountProblem(d.steps);
  if (tooMany) problem("steps", tooMany);
  else {
    // Each step's problems together, in step order, as a client reads them.
    const perStep: ErrorItem[][] = d.steps.map(() => []);
    const sizes = d.steps.map((s, i) => pinStep(s, stepFieldOf(i), perStep[i]!, ctx));
    const total = sizes.reduce<number>((n, b) => n + (b ?? 0), 0);
    // Before any schema is compiled: refusing the whole costs no compile of its parts.
    const tooLarge = total > MAX_WORKFLOW_PINNED_BYTES;
    if (!tooLarge)
      d.steps.forEach((s, i) => {
        if (sizes[i] === null || asSaved(s.config, saved[i] ?? null)) return;
        onStep?.(i);
        checkStepConfigOf(s, stepFieldOf(i), perStep[i]!, ctx);
      });
    errors.push(...perStep.flat());
    if (tooLarge)
      errors.push({
        field: "steps",
        code: "too_large",
        message: `With the stored schemas they reference, a workflow's step configs may hold at most ${MAX_WORKFLOW_PINNED_BYTES} bytes of JSON in all.`,
      });
  }
  if (!errors.length) checkFileTypes(d, stepFieldOf, errors);
  if (!errors.length) checkRowRules(d, stepFieldOf, errors);
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
