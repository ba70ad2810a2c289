// Response schemas of the versions API (docs/audit.md). Int() in responses, never a transform.
import { t } from "elysia";
import { documentedAs, named } from "../http/openapi/named.ts";
import { Int } from "../http/schemas.ts";
import { StepOut } from "./model.ts";

export const VersionParams = t.Object({ org_slug: t.String(), workflow: t.String(), version: t.String() });

const Author = t.Nullable(
  t.Object({ id: t.Nullable(Int()), username: t.Nullable(t.String()) }, { description: "Who saved it" }),
);

const meta = {
  version: Int(),
  url: t.String({ description: "This version (by workflow id: stays valid after a slug change)" }),
  created_at: t.String(),
  created_by: Author,
  restored_from: t.Nullable(Int({ description: "The version this one restored" })),
  is_current: t.Boolean(),
};

export const VersionListItem = named(
  "WorkflowVersionSummary",
  t.Object({ ...meta, step_count: t.Nullable(Int()) }),
);

export const VersionDetail = named(
  "WorkflowVersion",
  t.Object({
    ...meta,
    workflow: t.Object({ id: Int(), slug: t.String(), url: t.String() }),
    settings_recorded: t.Boolean({
      description: "False for versions saved before name, description, status and retention were recorded",
    }),
    slug: t.String({ description: "The slug when this version was saved" }),
    name: t.Nullable(t.String()),
    description: t.Nullable(t.String()),
    status: t.Nullable(t.String()),
    retention_days: t.Nullable(Int()),
    allowed_file_types: t.Array(t.String()),
    fail_fast: t.Boolean(),
    steps: t.Array(StepOut),
  }),
);

export const DiffQuery = t.Object(
  {
    // Parsed by the service (a positive integer, else 400): documented as what it is.
    against: t.Optional(
      documentedAs(t.String(), {
        type: "integer",
        minimum: 1,
        description: "The version to compare with (default: n − 1)",
      }),
    ),
  },
  { additionalProperties: true },
);

const Ref = t.Object({ version: Int(), url: t.String() });

export const VersionDiffOut = named(
  "WorkflowVersionDiff",
  t.Object({
    workflow: t.Object({ id: Int(), slug: t.String(), url: t.String() }),
    from: Ref,
    to: Ref,
    changes: t.Array(
      t.Object({
        path: t.String({ description: "JSON Pointer: /name, /steps/{step_id}/config/…" }),
        op: t.String({ description: "added, removed or changed" }),
        before: t.Optional(t.Unknown()),
        after: t.Optional(t.Unknown()),
        step: t.Nullable(t.Object({ id: Int(), name: t.String() })),
      }),
    ),
    truncated: t.Boolean({
      description:
        "More than 1000 changes, or their paths past 1 MiB of characters in all: the list stops there",
    }),
    unrecorded: t.Array(t.String(), { description: "Settings one of the two versions did not record" }),
  }),
);
