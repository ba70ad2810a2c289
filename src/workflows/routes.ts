// Workflow API: list and detail (Viewer), authoring (Author). CONTRACT §2, §2a, §3.
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import type { Principal, authPlugin } from "../http/auth.ts";
import { describe, header, param } from "../http/openapi/components.ts";
import { EnvelopeOf, PageQuery, envelope, parsePage } from "../http/pagination.ts";
import { AUTHED, errorResponses } from "../http/schemas.ts";
import { publicOrigin, publicUrl } from "../http/url.ts";
import { requireOrgRole } from "../orgs/access.ts";
import {
  StepIn,
  StepOut,
  StepParams,
  StepOrder,
  StepPatch,
  WorkflowDetail,
  WorkflowIn,
  WorkflowListItem,
  WorkflowParams,
  WorkflowPatch,
} from "./model.ts";
import { etagOf, ifMatchHolds, noneMatchFails, preconditionFailed } from "./etag.ts";
import { presentDetail, presentStep, presentWorkflow, workflowUrl } from "./present.ts";

const OrgParams = t.Object({ org_slug: t.String() });

export function workflowRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>) {
  const { orgs, workflows, config } = deps;
  const origin = (r: Request) => publicOrigin(config.base_url, r);
  const detail = { tags: ["Workflows"] };
  // The target an unsafe step route's preconditions are judged on (src/http/preconditions.ts).
  const stepTarget = async (c: {
    params: { org_slug: string; workflow: string; step_id: string };
    principal: Principal;
  }) =>
    workflows.getStep(
      (await requireOrgRole(orgs, c.principal, c.params.org_slug, "author")).org.id,
      c.params.workflow,
      c.params.step_id,
    );
  // PUT and PATCH: If-Match in, ETag out (etag.ts).
  const conditional = {
    parameters: [param("IfMatch"), param("IfNoneMatchEdit")],
    responses: { 200: { headers: { ETag: header("ETag") } } },
  };
  return new Elysia({ prefix: "/api/v1/orgs/:org_slug/workflows" })
    .use(auth)
    .get(
      "/",
      async ({ params, query, request, principal }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const p = parsePage(query);
        const { count, items } = await workflows.list(org.id, p.limit, p.offset);
        const results = items.map((w) => ({
          ...presentWorkflow(origin(request), org.slug, w),
          step_count: w.step_count,
        }));
        return envelope(publicUrl(config.base_url, request), p, count, results);
      },
      {
        auth: true,
        params: OrgParams,
        query: t.Object(PageQuery, { additionalProperties: true }),
        response: { 200: EnvelopeOf(WorkflowListItem), ...errorResponses(...AUTHED) },
        detail: { ...detail, operationId: "listWorkflows", summary: "List workflows" },
      },
    )
    .post(
      "/",
      async ({ params, body, request, principal, actor, set }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "author");
        const { workflow, steps } = await workflows.create(org.id, body, actor);
        set.status = 201;
        set.headers.location = presentWorkflow(origin(request), org.slug, workflow).url;
        return presentDetail(origin(request), org.slug, workflow, steps);
      },
      {
        auth: "author",
        // An org at its most workflows: the 409 first (§13.2.1).
        preconditions: async (c: { params: { org_slug: string }; principal: Principal }) =>
          workflows.roomFor((await requireOrgRole(orgs, c.principal, c.params.org_slug, "author")).org.id),
        params: OrgParams,
        body: WorkflowIn,
        response: { 201: WorkflowDetail, ...errorResponses(...AUTHED, 409) },
        detail: { ...detail, operationId: "createWorkflow", summary: "Create a workflow" },
      },
    )
    .get(
      "/:workflow/",
      async ({ params, request, principal, headers, set }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const { workflow, steps } = await workflows.load(org.id, params.workflow);
        set.headers.etag = etagOf(workflow.version);
        // RFC 9110 §13.2.2: If-Match first (a GET too: 412 unless it names the current version,
        // until 2026-11-29 ignored here), then If-None-Match (304 while it names it).
        const ifMatch = headers["if-match"];
        if (ifMatch !== undefined && !ifMatchHolds(ifMatch, workflow.version))
          throw preconditionFailed(workflow.version);
        const noneMatch = headers["if-none-match"];
        if (noneMatch !== undefined && noneMatchFails(noneMatch, workflow.version)) {
          set.status = 304;
          return;
        }
        return presentDetail(origin(request), org.slug, workflow, steps);
      },
      {
        auth: true,
        params: WorkflowParams,
        response: { 200: WorkflowDetail, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: describe({
          ...detail,
          operationId: "getWorkflow",
          summary: "Workflow detail (slug or numeric id)",
          parameters: [param("IfMatchRead"), param("IfNoneMatch")],
          responses: {
            200: { headers: { ETag: header("ETag") } },
            304: {
              description: "Not Modified: the workflow is still at the version If-None-Match names.",
              headers: { ETag: header("ETag") },
            },
          },
        }),
      },
    )
    .put(
      "/:workflow/",
      async ({ params, body, request, principal, actor, headers, set }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "author");
        const { workflow, steps } = await workflows.update(org.id, params.workflow, body, true, actor, {
          ifMatch: headers["if-match"],
          ifNoneMatch: headers["if-none-match"],
        });
        set.headers.etag = etagOf(workflow.version);
        return presentDetail(origin(request), org.slug, workflow, steps);
      },
      {
        auth: "author",
        preconditions: "own",
        params: WorkflowParams,
        body: WorkflowIn,
        response: { 200: WorkflowDetail, ...errorResponses(...AUTHED, 409, 412) },
        detail: describe({
          ...detail,
          operationId: "replaceWorkflow",
          summary: "Replace a workflow's definition",
          ...conditional,
        }),
      },
    )
    .patch(
      "/:workflow/",
      async ({ params, body, request, principal, actor, headers, set }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "author");
        const { workflow, steps } = await workflows.update(org.id, params.workflow, body, false, actor, {
          ifMatch: headers["if-match"],
          ifNoneMatch: headers["if-none-match"],
        });
        set.headers.etag = etagOf(workflow.version);
        return presentDetail(origin(request), org.slug, workflow, steps);
      },
      {
        auth: "author",
        preconditions: "own",
        params: WorkflowParams,
        body: WorkflowPatch,
        response: { 200: WorkflowDetail, ...errorResponses(...AUTHED, 409, 412) },
        detail: describe({
          ...detail,
          operationId: "updateWorkflow",
          summary: "Change some fields (status: active/inactive)",
          ...conditional,
        }),
      },
    )
    .delete(
      "/:workflow/",
      async ({ params, principal, actor, headers, set }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "author");
        await workflows.remove(org.id, params.workflow, actor, {
          ifMatch: headers["if-match"],
          ifNoneMatch: headers["if-none-match"],
        });
        set.status = 204;
      },
      {
        auth: "author",
        preconditions: "own",
        params: WorkflowParams,
        response: { 204: t.Void(), ...errorResponses(...AUTHED, 409, 412) },
        detail: describe({
          ...detail,
          operationId: "deleteWorkflow",
          summary: "Delete a workflow (its runs stay readable)",
          parameters: [param("IfMatch"), param("IfNoneMatchEdit")],
        }),
      },
    )
    .post(
      "/:workflow/steps/",
      async ({ params, body, principal, actor, set, request }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "author");
        const { step, workflow } = await workflows.addStep(org.id, params.workflow, body, actor);
        set.status = 201;
        set.headers.location = `${workflowUrl(origin(request), org.slug, workflow.slug)}steps/${step.id}/`;
        return presentStep(step);
      },
      {
        auth: "author",
        preconditions: async (c: { params: { org_slug: string; workflow: string }; principal: Principal }) =>
          workflows.load(
            (await requireOrgRole(orgs, c.principal, c.params.org_slug, "author")).org.id,
            c.params.workflow,
          ),
        params: WorkflowParams,
        body: t.Composite([StepIn, t.Object({ order: t.Optional(StepOrder) })], {
          additionalProperties: false,
        }),
        response: { 201: StepOut, ...errorResponses(...AUTHED, 409) },
        detail: { ...detail, operationId: "addStep", summary: "Add a step (at `order`, default last)" },
      },
    )
    .get(
      "/:workflow/steps/:step_id/",
      async ({ params, principal }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        return presentStep(await workflows.getStep(org.id, params.workflow, params.step_id));
      },
      {
        auth: true,
        preconditions: "read",
        params: StepParams,
        response: { 200: StepOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: { ...detail, operationId: "getStep", summary: "A step (the Location of addStep)" },
      },
    )
    .patch(
      "/:workflow/steps/:step_id/",
      async ({ params, body, principal, actor }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "author");
        const { step } = await workflows.updateStep(org.id, params.workflow, params.step_id, body, actor);
        return presentStep(step);
      },
      {
        auth: "author",
        preconditions: stepTarget,
        params: StepParams,
        body: StepPatch,
        response: { 200: StepOut, ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "updateStep",
          summary: "Edit, reorder (order) or deactivate (is_active) a step",
        },
      },
    )
    .delete(
      "/:workflow/steps/:step_id/",
      async ({ params, principal, actor, set }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "author");
        await workflows.deleteStep(org.id, params.workflow, params.step_id, actor);
        set.status = 204;
      },
      {
        auth: "author",
        preconditions: stepTarget,
        params: StepParams,
        response: { 204: t.Void(), ...errorResponses(...AUTHED, 409) },
        detail: { ...detail, operationId: "deleteStep", summary: "Delete a step" },
      },
    );
}
