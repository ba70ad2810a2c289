// Workflow versions (CONTRACT §3): list, one version's whole definition, a field-by-field diff
// (Viewer), and restore (Author: a new version equal to n).
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import type { authPlugin } from "../http/auth.ts";
import { EnvelopeOf, PageQuery, envelope, parsePage } from "../http/pagination.ts";
import { describe, param } from "../http/openapi/components.ts";
import { AUTHED, errorResponses } from "../http/schemas.ts";
import { publicOrigin, publicUrl } from "../http/url.ts";
import { requireOrgRole } from "../orgs/access.ts";
import { WorkflowParams } from "./model.ts";
import { presentStep, versionUrl, workflowUrl } from "./present.ts";
import type { Workflow, WorkflowVersion } from "./types.ts";
import { DiffQuery, VersionDetail, VersionDiffOut, VersionListItem, VersionParams } from "./version-model.ts";
import type { VersionMeta } from "./version-store.ts";
import type { VersionService } from "./versions.ts";

function presentMeta(origin: string, org: string, w: Workflow, m: VersionMeta) {
  return {
    version: m.version,
    url: versionUrl(origin, org, w.id, m.version),
    created_at: m.created_at,
    created_by:
      m.created_by_name === null && m.created_by === null
        ? null
        : { id: m.created_by, username: m.created_by_name },
    restored_from: m.restored_from,
    is_current: m.version === w.version,
  };
}

function presentVersion(origin: string, org: string, w: Workflow, m: VersionMeta, def: WorkflowVersion) {
  return {
    ...presentMeta(origin, org, w, m),
    workflow: { id: w.id, slug: w.slug, url: workflowUrl(origin, org, w.slug) },
    settings_recorded: def.name !== undefined,
    slug: def.slug,
    name: def.name ?? null,
    description: def.description ?? null,
    status: def.status ?? null,
    retention_days: def.retention_days ?? null,
    allowed_file_types: def.allowed_file_types,
    fail_fast: def.fail_fast,
    steps: def.steps.map(presentStep),
  };
}

export function versionRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>, versions: VersionService) {
  const { orgs, config } = deps;
  const origin = (r: Request) => publicOrigin(config.base_url, r);
  const detail = { tags: ["Workflows"] };
  return new Elysia({ prefix: "/api/v1/orgs/:org_slug/workflows/:workflow/versions" })
    .use(auth)
    .get(
      "/",
      async ({ params, query, request, principal }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const p = parsePage(query);
        const { workflow, count, items } = await versions.list(org.id, params.workflow, p.limit, p.offset);
        const results = items.map((m) => ({
          ...presentMeta(origin(request), org.slug, workflow, m),
          step_count: m.step_count,
        }));
        return envelope(publicUrl(config.base_url, request), p, count, results);
      },
      {
        auth: true,
        params: WorkflowParams,
        query: t.Object(PageQuery, { additionalProperties: true }),
        response: { 200: EnvelopeOf(VersionListItem), ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "listWorkflowVersions",
          summary: "The workflow's versions, newest first",
        },
      },
    )
    .get(
      "/:version/",
      async ({ params, request, principal }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const { workflow, meta, def } = await versions.detail(org.id, params.workflow, params.version);
        return presentVersion(origin(request), org.slug, workflow, meta, def);
      },
      {
        auth: true,
        preconditions: "read",
        params: VersionParams,
        response: { 200: VersionDetail, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: {
          ...detail,
          operationId: "getWorkflowVersion",
          summary: "One version: the whole definition as it was saved (settings, steps, configs)",
        },
      },
    )
    .get(
      "/:version/diff/",
      async ({ params, query, request, principal }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const r = await versions.diff(org.id, params.workflow, params.version, query.against);
        const o = origin(request);
        const ref = (n: number) => ({ version: n, url: versionUrl(o, org.slug, r.workflow.id, n) });
        return {
          workflow: {
            id: r.workflow.id,
            slug: r.workflow.slug,
            url: workflowUrl(o, org.slug, r.workflow.slug),
          },
          from: ref(r.from.meta.version),
          to: ref(r.to.meta.version),
          ...r.diff,
        };
      },
      {
        auth: true,
        params: VersionParams,
        query: DiffQuery,
        response: { 200: VersionDiffOut, ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "diffWorkflowVersions",
          summary: "What changed from version `against` (default n − 1) to version n, field by field",
        },
      },
    )
    .post(
      "/:version/restore/",
      async ({ params, request, principal, actor, headers, set }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "author");
        const { created, workflow: w } = await versions.restore(
          org.id,
          params.workflow,
          params.version,
          actor,
          { ifMatch: headers["if-match"], ifNoneMatch: headers["if-none-match"] },
        );
        // Nothing to restore (the workflow already equals n): 200 with the current version.
        const { workflow, meta, def } = await versions.detail(org.id, String(w.id), String(w.version));
        const body = presentVersion(origin(request), org.slug, workflow, meta, def);
        if (created) {
          set.status = 201;
          set.headers.location = body.url;
        }
        return body;
      },
      {
        auth: "author",
        preconditions: "own",
        params: VersionParams,
        response: { 200: VersionDetail, 201: VersionDetail, ...errorResponses(...AUTHED, 409, 412) },
        detail: describe({
          ...detail,
          operationId: "restoreWorkflowVersion",
          summary: "Restore version n: a new version with its settings and steps (slug and status stay)",
          description:
            "201 with the new version and its Location; 200 with the current version when the workflow already equals n (nothing saved). If-Match names the workflow's ETag as read.",
          parameters: [param("IfMatch"), param("IfNoneMatchEdit")],
        }),
      },
    );
}
