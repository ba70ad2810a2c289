// Response schemas of the run API (CONTRACT §2, Run), and the JSON envelope of a run request
// (documented only: src/runs/intake/modes.ts reads request bodies itself).
import { t } from "elysia";
import { documentedAs, named } from "../http/openapi/named.ts";
import { timeFilterDoc } from "../lib/filter-time.ts";
import { PageQuery } from "../http/pagination.ts";
import { Int, OneOf } from "../http/schemas.ts";
import { STEP_STATUSES } from "../jobs/protocol.ts";
import { FILE_TYPES, type Severity } from "../validators/types.ts";
import { RUN_STATUSES } from "./types.ts";

/** Every Severity (src/validators/types.ts): the compiler refuses a list that misses one. */
const SEVERITIES = ["error", "warning", "info"] as const satisfies readonly Severity[];
const _allSeverities: Exclude<Severity, (typeof SEVERITIES)[number]> extends never ? true : never = true;

export const FindingOut = named(
  "Finding",
  t.Object({
    severity: OneOf(SEVERITIES),
    code: t.String({ description: "Stable and namespaced: json_schema.required, xml.not_well_formed …" }),
    message: t.String(),
    path: t.Nullable(t.String({ description: "JSON Pointer (JSON, YAML), XPath (XML), row/field (CSV)" })),
    line: t.Nullable(Int()),
    column: t.Nullable(Int()),
    rule: t.Nullable(t.String()),
  }),
);

const RunSummary = named(
  "RunSummary",
  t.Object({
    errors: Int(),
    warnings: Int(),
    infos: Int(),
    steps_passed: Int(),
    steps_failed: Int(),
    steps_skipped: Int(),
    truncated: t.Boolean({ description: "Some step hit its cap on findings" }),
  }),
);

const StepResult = named(
  "StepResult",
  t.Object({
    step_id: Int(),
    order: Int(),
    name: t.String(),
    validator: t.String(),
    status: OneOf(STEP_STATUSES),
    duration_ms: t.Nullable(t.Number()),
    findings: t.Array(FindingOut, {
      description:
        "The step's first findings: a run answer carries at most 1000 in all (findings_count says how many the step has)",
    }),
    findings_count: Int({
      description: "All findings of the step; page them at …/runs/{run_id}/findings/",
    }),
    error: t.Nullable(t.String()),
  }),
);

const Submission = named(
  "Submission",
  t.Object({
    id: Int(),
    filename: t.Nullable(t.String()),
    content_type: t.String(),
    file_type: OneOf(FILE_TYPES),
    size: Int(),
    sha256: t.String(),
    metadata: t.Record(t.String(), t.Unknown()),
    created_at: t.String(),
    content_purged: t.Boolean(),
  }),
);

export const RunOut = named(
  "Run",
  t.Object({
    id: t.String({ description: "UUIDv7" }),
    url: t.String(),
    org_slug: t.String(),
    workflow: t.Object({
      id: Int(),
      slug: t.String(),
      version: Int(),
      version_url: t.String({ description: "That version's whole definition (GET)" }),
    }),
    submission: Submission,
    status: OneOf(RUN_STATUSES),
    summary: t.Nullable(RunSummary),
    steps: t.Array(StepResult),
    error: t.Nullable(t.String()),
    created_by: t.Object({ id: t.Nullable(Int()), username: t.Nullable(t.String()) }),
    created_at: t.String(),
    started_at: t.Nullable(t.String()),
    finished_at: t.Nullable(t.String()),
    duration_ms: t.Nullable(t.Number()),
  }),
);

export const RunEnvelope = named(
  "RunEnvelope",
  t.Object(
    {
      content: t.Union([t.String(), t.Record(t.String(), t.Unknown()), t.Array(t.Unknown())], {
        description: "The document: text (or base64), or a JSON object or array",
      }),
      content_type: t.Optional(
        t.String({
          maxLength: 255,
          description: "Its media type (required for text content), e.g. application/xml",
        }),
      ),
      filename: t.Optional(t.String({ maxLength: 255 })),
      metadata: t.Optional(
        t.Record(t.String(), t.Unknown(), { description: "Your own fields, kept with the run (16 KiB)" }),
      ),
      content_encoding: t.Optional(t.Literal("base64")),
    },
    { additionalProperties: false, description: "JSON envelope mode" },
  ),
);

export const RunMultipart = named(
  "RunMultipart",
  t.Object(
    {
      file: t.Optional(
        t.String({ contentMediaType: "application/octet-stream", description: "The document" }),
      ),
      content: t.Optional(t.String({ description: "The document as a text part (instead of file)" })),
      filename: t.Optional(t.String({ maxLength: 255 })),
      content_type: t.Optional(
        t.String({ maxLength: 255, description: "Default: the file part's type, or its name's extension" }),
      ),
      metadata: t.Optional(t.String({ description: "A JSON object, as text" })),
      content_encoding: t.Optional(t.Literal("base64")),
    },
    { additionalProperties: false, description: "Multipart mode: a file part and optional text parts" },
  ),
);

export const RunListQuery = t.Object(
  {
    ...PageQuery,
    workflow: t.Optional(t.String({ description: "Workflow slug or id" })),
    status: t.Optional(
      documentedAs(t.String(), {
        type: "string",
        enum: [...RUN_STATUSES],
        description: "Runs in this status",
      }),
    ),
    created_after: t.Optional(documentedAs(t.String(), timeFilterDoc("runs created at or after"))),
    created_before: t.Optional(documentedAs(t.String(), timeFilterDoc("runs created before"))),
  },
  { additionalProperties: true },
);
