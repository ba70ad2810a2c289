// GET /api/v1/orgs/{org_slug}/runs/{run_id}/report/?format=json|junit|sarif|html (Viewer): a run's
// results as a file for CI systems and people. A run still executing is reported as it stands,
// with Retry-After like the run itself.
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import { invalidField, notFound } from "../errors.ts";
import type { authPlugin } from "../http/auth.ts";
import { describe, header, param } from "../http/openapi/components.ts";
import { documentedAs } from "../http/openapi/named.ts";
import { RunOut } from "../runs/model.ts";
import { AUTHED, errorResponses } from "../http/schemas.ts";
import { bytesTag, notModified, notModifiedAnswer } from "../http/tagged-read.ts";
import { publicOrigin } from "../http/url.ts";
import { requireOrgRole } from "../orgs/access.ts";
import { presentRun } from "../runs/present.ts";
import { runIdOf } from "../runs/run-id.ts";
import { isFinal } from "../runs/types.ts";
import { CONTENT_TYPES, EXTENSIONS, renderRun } from "./render.ts";
import { REPORT_FORMATS, type ReportFormat } from "./types.ts";

const RETRY_AFTER_S = "1";
const encoder = new TextEncoder();
const mismatch = (etag: string) =>
  `If-Match names another entity tag than the report's current one (ETag ${etag}): read it again.`;
/**
 * Findings a report holds at most (first steps first); each step says how many it leaves out. A
 * report is rendered on the HTTP thread: bounded like every answer (issue #19), and 10,000 lines
 * are more than anyone reads in a CI log. All of them: GET …/runs/{id}/findings/.
 */
export const REPORT_MAX_FINDINGS = 10_000;

export function reportRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>) {
  const { orgs, runs, executor, config } = deps;
  return new Elysia({ prefix: "/api/v1/orgs/:org_slug" }).use(auth).get(
    "/runs/:run_id/report/",
    async ({ params, query, request, principal }) => {
      const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
      const runId = runIdOf(params.run_id);
      const run = runId ? await runs.get(org.id, runId, REPORT_MAX_FINDINGS) : null;
      if (!run) throw notFound("Run");
      const format = (query.format ?? "json") as ReportFormat;
      if (!REPORT_FORMATS.includes(format))
        throw invalidField("format", `format is one of ${REPORT_FORMATS.join(", ")}.`);
      const live = run.status === "running" ? executor.live(run.id) : null;
      const presented = presentRun(
        publicOrigin(config.base_url, request),
        org.slug,
        run,
        live,
        REPORT_MAX_FINDINGS,
      );
      const headers: Record<string, string> = {
        "content-type": CONTENT_TYPES[format],
        "content-disposition": `inline; filename="assay-run-${run.id}.${EXTENSIONS[format]}"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      };
      // The HTML quotes submitted data: even escaped, it gets no script, no outside resource and
      // no origin of ours (sandbox). The other formats get the API's policy (src/http/security.ts).
      if (format === "html")
        headers["content-security-policy"] =
          "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox";
      if (!isFinal(run.status)) headers["retry-after"] = RETRY_AFTER_S;
      // The ETag is a digest of the bytes: it holds exactly while the report is the same, whatever
      // made it change (src/http/tagged-read.ts). Encoded once, hashed, then sent.
      const body = encoder.encode(renderRun(format, presented));
      headers.etag = bytesTag(body);
      if (notModified(request.headers, headers.etag, mismatch(headers.etag)))
        return notModifiedAnswer(headers);
      return new Response(body, { headers });
    },
    {
      auth: true,
      params: t.Object({ org_slug: t.String(), run_id: t.String() }),
      // Unknown query parameters are ignored, as on every other operation.
      query: t.Object(
        {
          format: t.Optional(
            documentedAs(t.String(), {
              type: "string",
              enum: [...REPORT_FORMATS],
              default: "json",
              description: "The report's format",
            }),
          ),
        },
        { additionalProperties: true },
      ),
      response: {
        200: t.Any({
          description:
            "json: the run (application/json); junit: JUnit XML, a testsuite per run and a testcase per step; sarif: SARIF 2.1.0 (application/sarif+json); html: a self-contained page",
        }),
        304: t.Void(),
        ...errorResponses(...AUTHED, 412),
      },
      detail: describe({
        tags: ["Runs"],
        operationId: "getRunReport",
        summary: "A run's results as a JSON, JUnit XML, SARIF 2.1.0 or HTML report",
        parameters: [param("IfMatchTagged"), param("IfNoneMatchTagged")],
        responses: {
          304: {
            description: "Not Modified: If-None-Match names the report's current ETag; no body.",
            headers: { ETag: header("ReportETag"), "Retry-After": header("RetryAfter") },
          },
          200: {
            description: "The report; while the run is not final, Retry-After says when to ask again",
            headers: {
              "Retry-After": header("RetryAfter"),
              "Content-Disposition": header("ContentDisposition"),
              ETag: header("ReportETag"),
            },
            content: {
              "application/json": { schema: RunOut },
              "application/xml": { schema: { type: "string", description: "JUnit XML" } },
              "application/sarif+json": { schema: { type: "object", description: "SARIF 2.1.0" } },
              "text/html": { schema: { type: "string", description: "A self-contained page" } },
            },
          },
        },
      }),
    },
  );
}
