// Run API: start a run (Executor), read runs and results (Viewer), content, cancel.
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import { AppError, type ErrorItem, conflict, forbidden, notFound } from "../errors.ts";
import type { Principal, authPlugin } from "../http/auth.ts";
import { EnvelopeOf, envelope, parsePage } from "../http/pagination.ts";
import { describe, header, param } from "../http/openapi/components.ts";
import { documentedAs } from "../http/openapi/named.ts";
import { AUTHED, ErrorSchema, errorResponses } from "../http/schemas.ts";
import { headAnswer } from "../http/head.ts";
import { checkUntagged } from "../http/preconditions.ts";
import { notModified, notModifiedAnswer } from "../http/tagged-read.ts";
import { contentHeaders } from "../http/security.ts";
import { publicOrigin, publicUrl } from "../http/url.ts";
import { requireOrgRole } from "../orgs/access.ts";
import { roleRank } from "../orgs/store.ts";
import { readContentHead } from "./content-store.ts";
import { START_RUN_DOC } from "./docs.ts";
import { startRunHandler } from "./start-handler.ts";
import { filterTime, storedTime, timeFilterMessage } from "../lib/filter-time.ts";
import { RunListQuery, RunOut } from "./model.ts";
import { presentRun, runUrl } from "./present.ts";
import { RUN_STATUSES, type RunFilters, type RunStatus, isFinal } from "./types.ts";
import { runIdOf } from "./run-id.ts";

const RETRY_AFTER_S = "1";
/** The download's name when the submission had none. */
const EXTENSION: Record<string, string> = { JSON: "json", XML: "xml", YAML: "yaml", CSV: "csv", TEXT: "txt" };
const contentMismatch = (etag: string) =>
  `If-Match names another entity tag than the run's content (ETag ${etag}, its SHA-256), which never changes.`;

export function runRoutes(
  deps: Deps,
  auth: ReturnType<typeof authPlugin>,
  /** The start's handler (start-handler.ts), built by the app with its rate-limit hook. */
  startRun: ReturnType<typeof startRunHandler> = startRunHandler(deps),
) {
  const { orgs, config, runs, executor, workflowStore } = deps;
  const origin = (r: Request) => publicOrigin(config.base_url, r);
  const detail = { tags: ["Runs"] };
  const loadRun = async (orgId: number, id: string, findings?: number) => {
    const runId = runIdOf(id);
    const run = runId ? await runs.get(orgId, runId, findings) : null;
    if (!run) throw notFound("Run");
    return run;
  };

  /**
   * The submitted bytes as a download, or for a HEAD GET's headers alone, from the submission's
   * row: no byte of the content is read (src/http/head.ts). Content over 1 MiB is a stream of its
   * slices, which Bun sends chunked, without Content-Length (oven-sh/bun#10507): HEAD says so too.
   */
  const contentAnswer = async (
    params: { org_slug: string; run_id: string },
    principal: Principal,
    request: Request,
  ): Promise<Response> => {
    const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
    const runId = runIdOf(params.run_id);
    const gone = () =>
      new AppError(
        410,
        "gone",
        "The submission content was purged by the retention policy; the run and its findings remain.",
      );
    // A download of the exact bytes, never a document of our origin (src/http/security.ts).
    // The ETag is the content's SHA-256 (submission.sha256): the bytes never change (RFC 9110 §8.8.3).
    const headersOf = (c: { filename: string | null; file_type: string; sha256: string }) => ({
      ...contentHeaders(c.filename ?? `run-${runId}.${EXTENSION[c.file_type] ?? "txt"}`),
      etag: `"${c.sha256}"`,
    });
    // A HEAD, or a GET with conditions to judge first: from the row alone (no byte read for a 304).
    const h = request.headers;
    if (request.method === "HEAD" || h.has("if-match") || h.has("if-none-match")) {
      const head = runId ? await readContentHead(deps.db, org.id, runId) : null;
      if (!head) throw notFound("Run");
      if (head.purged) throw gone();
      const headers = headersOf(head);
      if (notModified(h, headers.etag!, contentMismatch(headers.etag!))) return notModifiedAnswer(headers);
      if (request.method === "HEAD") return headAnswer(request, headers, head.sliced ? null : head.size);
    }
    const c = runId ? await runs.content(org.id, runId) : null;
    if (!c) throw notFound("Run");
    if (!c.body) throw gone();
    // Content over 1 MiB is a stream of its slices (src/runs/content-store.ts).
    return new Response(c.body as unknown as BodyInit, { headers: headersOf(c) });
  };

  return new Elysia({ prefix: "/api/v1/orgs/:org_slug" })
    .use(auth)
    .post("/workflows/:workflow/runs/", startRun, {
      auth: true,
      preconditions: "own",
      parse: "none",
      params: t.Object({ org_slug: t.String(), workflow: t.String() }),
      query: t.Object(
        {
          // Parsed by the run service (a positive integer, else 400): documented as what it is.
          version: t.Optional(
            documentedAs(t.String(), {
              type: "integer",
              minimum: 1,
              description:
                "Run this version of the workflow (default: the current one); 409 workflow_version_unavailable if it has none such",
            }),
          ),
        },
        { additionalProperties: true },
      ),
      response: { 201: RunOut, 202: RunOut, ...errorResponses(...AUTHED, 409, 413, 415, 422, 503) },
      detail: describe({ ...detail, ...START_RUN_DOC }),
    })
    .get(
      "/runs/",
      async ({ params, query, request, principal }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const p = parsePage(query);
        const filters: RunFilters = {};
        const errors: ErrorItem[] = [];
        if (query.status !== undefined) {
          if ((RUN_STATUSES as readonly string[]).includes(query.status))
            filters.status = query.status as RunStatus;
          else
            errors.push({
              field: "status",
              code: "invalid",
              message: `status is one of ${RUN_STATUSES.join(", ")}.`,
            });
        }
        for (const k of ["created_after", "created_before"] as const) {
          const v = query[k];
          if (v === undefined) continue;
          const ms = filterTime(v);
          if (ms === null) errors.push({ field: k, code: "invalid", message: timeFilterMessage(k) });
          else filters[k === "created_after" ? "createdAfter" : "createdBefore"] = storedTime(ms);
        }
        // Empty, it named no workflow and the list was silently empty; every other filter's empty
        // value is a 400 too.
        if (query.workflow === "")
          errors.push({
            field: "workflow",
            code: "invalid",
            message: "workflow is a workflow's slug or id.",
          });
        if (errors.length) throw new AppError(400, "invalid_request", "Invalid filters.", errors);
        if (query.workflow !== undefined) {
          const wf = await workflowStore.find(org.id, query.workflow);
          // An id past the 32-bit ids is no workflow (PostgreSQL would refuse the comparison).
          const asId = /^\d{1,10}$/.test(query.workflow) ? Number(query.workflow) : -1;
          filters.workflowId = wf ? wf.id : asId <= 2 ** 31 - 1 ? asId : -1;
        }
        const { count, items } = await runs.list(org.id, filters, p.limit, p.offset);
        return envelope(
          publicUrl(config.base_url, request),
          p,
          count,
          // A running run's steps as GET of the run shows them (this node's live states).
          items.map((r) =>
            presentRun(origin(request), org.slug, r, r.status === "running" ? executor.live(r.id) : null),
          ),
        );
      },
      {
        auth: true,
        params: t.Object({ org_slug: t.String() }),
        query: RunListQuery,
        response: { 200: EnvelopeOf(RunOut), ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "listRuns",
          summary: "List runs, newest first (findings omitted: read a run for them)",
        },
      },
    )
    .get(
      "/runs/:run_id/",
      async ({ params, request, principal, set }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const run = await loadRun(org.id, params.run_id);
        if (!isFinal(run.status)) set.headers["retry-after"] = RETRY_AFTER_S;
        return presentRun(
          origin(request),
          org.slug,
          run,
          run.status === "running" ? executor.live(run.id) : null,
        );
      },
      {
        auth: true,
        preconditions: "read",
        params: t.Object({ org_slug: t.String(), run_id: t.String() }),
        response: { 200: RunOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: describe({
          ...detail,
          operationId: "getRun",
          summary: "Run details and results",
          responses: {
            200: {
              description: "The run; while it is not final, Retry-After says when to ask again",
              headers: { "Retry-After": header("RetryAfter") },
            },
          },
        }),
      },
    )
    .get(
      "/runs/:run_id/content/",
      ({ params, principal, request }) => contentAnswer(params, principal, request),
      {
        auth: true,
        params: t.Object({ org_slug: t.String(), run_id: t.String() }),
        response: {
          200: t.Any({
            description:
              "The submitted bytes as a download (application/octet-stream, Content-Disposition: attachment); the declared type is the run's submission.content_type",
          }),
          304: t.Void(),
          410: ErrorSchema,
          ...errorResponses(...AUTHED, 412),
        },
        detail: describe({
          ...detail,
          operationId: "getRunContent",
          summary: "The submitted content, byte for byte",
          parameters: [param("IfMatchTagged"), param("IfNoneMatchTagged")],
          responses: {
            304: {
              description: "Not Modified: If-None-Match names the content's ETag; no body.",
              headers: { ETag: header("ContentETag") },
            },
            200: {
              description:
                "The submitted bytes as a download (Content-Disposition: attachment), whatever type they were submitted as (the run's submission.content_type)",
              headers: { "Content-Disposition": header("ContentDisposition"), ETag: header("ContentETag") },
              content: {
                "application/octet-stream": {
                  schema: { type: "string", contentMediaType: "application/octet-stream" },
                },
              },
            },
          },
        }),
      },
    )
    .post(
      "/runs/:run_id/cancel/",
      async ({ params, request, principal, actor }) => {
        // Any member may reach the run; the creator (whatever their role now) or an author may cancel.
        const { org, role } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const run = await loadRun(org.id, params.run_id, 0);
        if (roleRank(role) < roleRank("author") && run.created_by.id !== principal.user.id)
          throw forbidden("Only the run's creator or an author can cancel it.");
        // A run that has ended is the 409 it is without the headers (RFC 9110 §13.2.1), then
        // If-Match / If-None-Match: a run has no entity tag (src/http/preconditions.ts).
        if (isFinal(run.status)) throw conflict(`The run is already ${run.status}.`);
        checkUntagged(request.headers);
        // Logged in the transaction that writes the canceled state (none if the run ended first),
        // by whichever node writes it.
        await executor.cancel(run.id, org.id, run.workflow_id, {
          reason: `Canceled by ${principal.user.username}.`,
          actor,
          change: {
            action: "run.cancel",
            org_id: org.id,
            target_type: "run",
            target_id: run.id,
            target_name: run.workflow_slug,
            before: { status: run.status },
            context: { workflow_version: run.workflow_version },
          },
        });
        await executor.waitFinal(run.id, 5000);
        const now = (await runs.get(org.id, run.id))!;
        // The run ended on its own between the check above and the cancel (its step finished
        // first): the cancel did not take, so the answer is the 409 it would have been a moment later.
        if (isFinal(now.status) && now.status !== "canceled")
          throw conflict(`The run is already ${now.status}.`);
        return presentRun(origin(request), org.slug, now);
      },
      {
        auth: true,
        preconditions: "own",
        params: t.Object({ org_slug: t.String(), run_id: t.String() }),
        response: { 200: RunOut, ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "cancelRun",
          summary: "Cancel a queued or running run (its creator, or Author)",
        },
      },
    );
}
export { runUrl };
