// Request and response schemas of the audit API (docs/audit.md). Responses use Int(): no
// TypeBox transforms in response schemas (test/response-schemas.test.ts).
import { t } from "elysia";
import { documentedAs, named } from "../http/openapi/named.ts";
import { timeFilterDoc } from "../lib/filter-time.ts";
import { Int } from "../http/schemas.ts";
import { PageQuery } from "../http/pagination.ts";

const filters = {
  actor: t.Optional(t.String({ description: "Username of the actor (exact)" })),
  action: t.Optional(
    t.String({ description: "An action (workflow.update), or every action of a kind (workflow.*)" }),
  ),
  target_type: t.Optional(
    t.String({
      description:
        "workflow (step.* entries too: a step is part of its workflow, the step id in changes), member, token, user, org, webhook, run, schema, settings, audit_log",
    }),
  ),
  target_id: t.Optional(t.String()),
  // Parsed by hand in routes.ts (one errors[] item per bad filter): documented as what they are.
  created_after: t.Optional(documentedAs(t.String(), timeFilterDoc("entries at or after"))),
  created_before: t.Optional(documentedAs(t.String(), timeFilterDoc("entries before"))),
  format: t.Optional(
    documentedAs(t.String(), {
      type: "string",
      enum: ["json", "csv", "jsonl"],
      default: "json",
      description: "json (a page, the default), csv or jsonl (every matching entry, streamed)",
    }),
  ),
};

export const OrgAuditQuery = t.Object({ ...PageQuery, ...filters }, { additionalProperties: true });
export const AdminAuditQuery = t.Object(
  { ...PageQuery, ...filters, org: t.Optional(t.String({ description: "Only this org's entries (slug)" })) },
  { additionalProperties: true },
);

export const AuditEntryOut = named(
  "AuditEntry",
  t.Object({
    seq: Int({ description: "Position in the hash chain" }),
    created_at: t.String(),
    org_id: t.Nullable(Int()),
    org_slug: t.Nullable(t.String()),
    actor: t.Object({
      type: t.String({ description: "user, cli, system or anonymous" }),
      user_id: t.Nullable(Int()),
      username: t.Nullable(t.String()),
      token_id: t.Nullable(Int()),
      session_id: t.Nullable(Int()),
      ip: t.Nullable(t.String()),
    }),
    action: t.String(),
    target: t.Object({ type: t.String(), id: t.Nullable(t.String()), name: t.Nullable(t.String()) }),
    changes: t.Nullable(t.Record(t.String(), t.Unknown(), { description: "{before, after, …context}" })),
    prev_hash: t.String(),
    hash: t.String({ description: "SHA-256 of the entry (docs/audit.md)" }),
  }),
);

export const AuditHeadOut = named(
  "AuditHead",
  t.Object({
    seq: Int({ description: "The newest entry's position in the chain" }),
    hash: t.String({ description: "Its SHA-256: `assay audit verify --anchor SEQ:HASH` checks it later" }),
    created_at: t.Nullable(t.String()),
  }),
);
