// JSON shapes of workflows and steps (CONTRACT §2).
import type { StepDef, Workflow } from "./types.ts";

export function workflowUrl(origin: string, orgSlug: string, slug: string) {
  return `${origin}/api/v1/orgs/${orgSlug}/workflows/${slug}/`;
}

/** A version's URL, by workflow id rather than slug: a run's link to it must survive a rename. */
export const versionUrl = (origin: string, orgSlug: string, workflowId: number, n: number) =>
  `${origin}/api/v1/orgs/${orgSlug}/workflows/${workflowId}/versions/${n}/`;

export function presentWorkflow(origin: string, orgSlug: string, w: Workflow) {
  return {
    id: w.id,
    slug: w.slug,
    name: w.name,
    description: w.description,
    org_slug: orgSlug,
    status: w.status,
    allowed_file_types: w.allowed_file_types,
    fail_fast: w.fail_fast,
    retention_days: w.retention_days,
    version: w.version,
    created_at: w.created_at,
    updated_at: w.updated_at,
    url: workflowUrl(origin, orgSlug, w.slug),
  };
}

export const presentStep = (s: StepDef) => ({
  id: s.id,
  order: s.order,
  name: s.name,
  validator: s.validator,
  is_active: s.is_active,
  config: s.config,
});

export const presentDetail = (origin: string, orgSlug: string, w: Workflow, steps: StepDef[]) => ({
  ...presentWorkflow(origin, orgSlug, w),
  steps: steps.map(presentStep),
});
