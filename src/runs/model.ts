// Response schemas of the run API (CONTRACT §2, Run).
import { t } from "elysia";
import { Int } from "../http/schemas.ts";

export const FindingOut = t.Object({
  severity: t.String(),
  code: t.String(),
  message: t.String(),
  path: t.Nullable(t.String()),
  line: t.Nullable(Int()),
  column: t.Nullable(Int()),
  rule: t.Nullable(t.String()),
});

export const RunOut = t.Object({
  id: t.String({ description: "UUIDv7" }),
  url: t.String(),
  org_slug: t.String(),
  workflow: t.Object({
    id: Int(),
    slug: t.String(),
    version: Int(),
    version_url: t.String({ description: "That version's whole definition (GET)" }),
  }),
  submission: t.Object({
    id: Int(),
    filename: t.Nullable(t.String()),
    content_type: t.String(),
    file_type: t.String(),
    size: Int(),
    sha256: t.String(),
    metadata: t.Record(t.String(), t.Unknown()),
    created_at: t.String(),
    content_purged: t.Boolean(),
  }),
  status: t.String({ description: "queued, running, succeeded, failed, error, canceled, timed_out" }),
  summary: t.Nullable(
    t.Object({
      errors: Int(),
      warnings: Int(),
      infos: Int(),
      steps_passed: Int(),
      steps_failed: Int(),
      steps_skipped: Int(),
      truncated: t.Boolean(),
    }),
  ),
  steps: t.Array(
    t.Object({
      step_id: Int(),
      order: Int(),
      name: t.String(),
      validator: t.String(),
      status: t.String({ description: "pending, running, passed, failed, skipped, error" }),
      duration_ms: t.Nullable(t.Number()),
      findings: t.Array(FindingOut),
      error: t.Nullable(t.String()),
    }),
  ),
  error: t.Nullable(t.String()),
  created_by: t.Object({ id: t.Nullable(Int()), username: t.Nullable(t.String()) }),
  created_at: t.String(),
  started_at: t.Nullable(t.String()),
  finished_at: t.Nullable(t.String()),
  duration_ms: t.Nullable(t.Number()),
});

export const RunListQuery = t.Object(
  {
    page: t.Optional(t.String()),
    page_size: t.Optional(t.String()),
    workflow: t.Optional(t.String({ description: "Workflow slug or id" })),
    status: t.Optional(t.String()),
    created_after: t.Optional(t.String({ description: "ISO 8601" })),
    created_before: t.Optional(t.String({ description: "ISO 8601" })),
  },
  { additionalProperties: true },
);
