// JSON shape of a run (CONTRACT §2, Run).
import { versionUrl } from "../workflows/present.ts";
import type { Run, RunStep } from "./types.ts";

/**
 * Findings a run answer carries at most, in all, first steps first (docs/decisions.md): every run
 * whose steps keep the default cap of 1000 findings in one step is shown whole, and no answer —
 * GET, the 201 of a sync run, a poll — grows with a run's findings. Each step's `findings_count`
 * says how many it has; GET …/runs/{id}/findings/ pages through all of them.
 */
export const RUN_FINDINGS_INLINE = 1000;

export const runUrl = (origin: string, orgSlug: string, id: string) =>
  `${origin}/api/v1/orgs/${orgSlug}/runs/${id}/`;

export function presentRun(
  origin: string,
  orgSlug: string,
  r: Run,
  live?: RunStep[] | null,
  maxFindings = RUN_FINDINGS_INLINE,
) {
  const steps = live ?? r.steps;
  let left = maxFindings;
  return {
    id: r.id,
    url: runUrl(origin, orgSlug, r.id),
    org_slug: orgSlug,
    workflow: {
      id: r.workflow_id,
      slug: r.workflow_slug,
      version: r.workflow_version,
      // The definition this run executed, as saved (GET it for the steps and their configs).
      version_url: versionUrl(origin, orgSlug, r.workflow_id, r.workflow_version),
    },
    submission: {
      id: r.submission.id,
      filename: r.submission.filename,
      content_type: r.submission.content_type,
      file_type: r.submission.file_type,
      size: r.submission.size,
      sha256: r.submission.sha256,
      metadata: r.submission.metadata,
      created_at: r.submission.created_at,
      content_purged: r.submission.purged_at !== null,
    },
    status: r.status,
    summary: r.summary,
    steps: steps.map((s) => {
      const n = Math.min(s.findings.length, left);
      left -= n;
      return {
        step_id: s.step_id,
        order: s.order,
        name: s.name,
        validator: s.validator,
        status: s.status,
        duration_ms: s.duration_ms,
        findings: n === s.findings.length ? s.findings : s.findings.slice(0, n),
        findings_count: s.findings_count ?? s.findings.length,
        error: s.error,
      };
    }),
    error: r.error,
    created_by: r.created_by,
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
    duration_ms: r.duration_ms,
  };
}
