// GET /api/v1/orgs/{org_slug}/runs/{run_id}/findings/?step=N&page=&page_size= (Viewer): every
// finding of a run, a page at a time. A run answer carries at most RUN_FINDINGS_INLINE findings
// (src/runs/present.ts); a run with more — up to 50 steps of 10,000 — is read here, each page
// parsing only the stored chunks that hold it (src/runs/store.ts), so no request grows with the
// run (issue #19). Findings come in step order, then in the order the step reported them.
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import { invalidField, notFound } from "../errors.ts";
import type { authPlugin } from "../http/auth.ts";
import { documentedAs } from "../http/openapi/named.ts";
import { EnvelopeOf, PageQuery, envelope, parsePage } from "../http/pagination.ts";
import { AUTHED, Int, errorResponses } from "../http/schemas.ts";
import { publicUrl } from "../http/url.ts";
import { requireOrgRole } from "../orgs/access.ts";
import type { Finding } from "../validators/types.ts";
import { FindingOut } from "./model.ts";
import { runIdOf } from "./run-id.ts";

export const RunFindingOut = t.Composite([
  t.Object({
    step_id: Int({ description: "The step that reported it" }),
    step_order: Int({ description: "Its position in the workflow (1-based)" }),
  }),
  FindingOut,
]);

export function findingRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>) {
  const { orgs, runs, executor, config } = deps;
  return new Elysia({ prefix: "/api/v1/orgs/:org_slug" }).use(auth).get(
    "/runs/:run_id/findings/",
    async ({ params, query, request, principal }) => {
      const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
      const page = parsePage(query);
      const runId = runIdOf(params.run_id);
      const run = runId ? await runs.get(org.id, runId, 0) : null;
      if (!run) throw notFound("Run");
      // A run still executing: the steps that ended hold their findings in memory.
      const live = run.status === "running" ? executor.live(run.id) : null;
      const steps = live ?? run.steps;
      let chosen = steps.map((_, i) => i);
      if (query.step !== undefined) {
        const i = /^\d{1,9}$/.test(query.step) ? steps.findIndex((s) => s.order === Number(query.step)) : -1;
        if (i < 0)
          throw invalidField(
            "step",
            `step is the order of one of the run's steps: ${steps.map((s) => s.order).join(", ")}.`,
          );
        chosen = [i];
      }
      const counts = chosen.map((i) => steps[i]!.findings_count ?? steps[i]!.findings.length);
      let skip = page.offset;
      let want = page.limit;
      const results: (Finding & { step_id: number; step_order: number })[] = [];
      for (let k = 0; k < chosen.length && want > 0; k++) {
        const n = counts[k]!;
        if (skip >= n) {
          skip -= n;
          continue;
        }
        const i = chosen[k]!;
        const step = steps[i]!;
        const take = Math.min(n - skip, want);
        const found = live
          ? step.findings.slice(skip, skip + take)
          : await runs.stepFindings(run.id, i, skip, take);
        for (const f of found) results.push({ step_id: step.step_id, step_order: step.order, ...f });
        want -= take;
        skip = 0;
      }
      const total = counts.reduce((a, b) => a + b, 0);
      return envelope(publicUrl(config.base_url, request), page, total, results);
    },
    {
      auth: true,
      params: t.Object({ org_slug: t.String(), run_id: t.String() }),
      query: t.Object(
        {
          ...PageQuery,
          step: t.Optional(
            documentedAs(t.String(), {
              type: "integer",
              minimum: 1,
              description: "Only this step's findings (its order)",
            }),
          ),
        },
        { additionalProperties: true },
      ),
      response: { 200: EnvelopeOf(RunFindingOut), ...errorResponses(...AUTHED) },
      detail: {
        tags: ["Runs"],
        operationId: "listRunFindings",
        summary: "A run's findings, paged (all of them; a run answer carries the first 1000)",
      },
    },
  );
}
