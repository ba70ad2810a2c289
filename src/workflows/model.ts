// Request and response schemas of the workflow API: the single source for validation, types
// and OpenAPI. Semantic checks (slug syntax, step configs) live in check.ts.
import { t } from "elysia";
import { documentedAs, documentedWith, named } from "../http/openapi/named.ts";
import { BOUNDS, Int } from "../http/schemas.ts";
import { FILE_TYPES } from "../validators/types.ts";
import {
  MAX_RETENTION_DAYS,
  MAX_STEPS,
  descriptionProblem,
  fileTypesProblem,
  stepCountProblem,
  stepNameProblem,
  workflowNameProblem,
  workflowSlugProblem,
} from "./check.ts";

// Checked in check.ts (one errors[] item for the list), documented as the enum it is.
const FileTypeName = documentedAs(t.String({ error: "must be one of JSON, XML, YAML, CSV, TEXT" }), {
  type: "string",
  enum: [...FILE_TYPES],
});
const Status = t.Union([t.Literal("active"), t.Literal("inactive")], { error: "must be active or inactive" });
const Config = t.Record(t.String(), t.Unknown(), {
  error: "must be an object",
  description: "Validator config (see GET /api/v1/validators/)",
});

// Integers are Int, never t.Integer: a JSON body takes no numbers written as text, and each has a
// maximum so no value reaches a Date or an INTEGER column out of range (src/http/schemas.ts).
/** A step's 1-based position; a workflow has at most MAX_STEPS steps (docs/limits.md). */
export const StepOrder = Int({
  minimum: 1,
  maximum: MAX_STEPS,
  error: `must be an integer from 1 to ${MAX_STEPS}`,
});
const RetentionDays = t.Nullable(Int({ minimum: 0, maximum: MAX_RETENTION_DAYS }), {
  error: `must be an integer from 0 to ${MAX_RETENTION_DAYS} or null`,
});

/** Checked in check.ts: 1 to 200 characters (blank allowed, unlike a workflow's name). */
const StepName = documentedWith(
  t.String({ error: "must be a string" }),
  { minLength: 1, maxLength: 200 },
  stepNameProblem,
);

export const StepIn = named(
  "StepInput",
  t.Object(
    {
      name: StepName,
      validator: t.String({ error: "must be a validator slug" }),
      config: t.Optional(Config),
      is_active: t.Optional(t.Boolean({ error: "must be true or false" })),
    },
    { additionalProperties: false, error: "must be a step object {name, validator, config, is_active}" },
  ),
);

export const StepPatch = named(
  "StepPatch",
  t.Object(
    {
      name: t.Optional(StepName),
      validator: t.Optional(t.String({ error: "must be a validator slug" })),
      config: t.Optional(Config),
      is_active: t.Optional(t.Boolean({ error: "must be true or false" })),
      order: t.Optional(StepOrder),
    },
    { additionalProperties: false },
  ),
);

// The bounds below are checked in check.ts, which reports a draft's problems together: here they
// are documented, with check.ts's own check of each (documentedWith), which a body the schema
// refuses is given too (src/http/errors.ts, boundItems).
const fields = {
  slug: documentedWith(t.String({ error: "must be a string" }), BOUNDS.workflowSlug, workflowSlugProblem),
  name: documentedWith(t.String({ error: "must be a string" }), BOUNDS.name, workflowNameProblem),
  description: t.Optional(
    documentedWith(t.String({ error: "must be a string" }), { maxLength: 5000 }, descriptionProblem),
  ),
  allowed_file_types: documentedWith(
    t.Array(FileTypeName, { error: "must be an array of file types" }),
    { minItems: 1, uniqueItems: true },
    fileTypesProblem,
  ),
  fail_fast: t.Optional(t.Boolean({ error: "must be true or false" })),
  status: t.Optional(Status),
  retention_days: t.Optional(RetentionDays),
  steps: t.Optional(
    documentedWith(
      t.Array(StepIn, { error: "must be an array of steps" }),
      { maxItems: MAX_STEPS },
      stepCountProblem,
    ),
  ),
};

export const WorkflowIn = named("WorkflowInput", t.Object(fields, { additionalProperties: false }));
export const WorkflowPatch = named(
  "WorkflowPatch",
  t.Partial(t.Object(fields), {
    additionalProperties: false,
    description: "The fields to change; the others keep their values",
  }),
);

export const StepOut = named(
  "Step",
  t.Object({
    id: Int(),
    order: Int(),
    name: t.String(),
    validator: t.String(),
    is_active: t.Boolean(),
    config: t.Record(t.String(), t.Unknown()),
  }),
);

const common = {
  id: Int(),
  slug: t.String(),
  name: t.String(),
  description: t.String(),
  org_slug: t.String(),
  status: Status,
  allowed_file_types: t.Array(t.String()),
  fail_fast: t.Boolean(),
  retention_days: t.Nullable(Int()),
  version: Int(),
  created_at: t.String(),
  updated_at: t.String(),
  url: t.String(),
};
export const WorkflowListItem = named("WorkflowSummary", t.Object({ ...common, step_count: Int() }));
export const WorkflowDetail = named("Workflow", t.Object({ ...common, steps: t.Array(StepOut) }));

export const WorkflowParams = t.Object({ org_slug: t.String(), workflow: t.String() });
export const StepParams = t.Object({ org_slug: t.String(), workflow: t.String(), step_id: t.String() });
