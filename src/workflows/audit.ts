// What the audit log records of a workflow: its settings, its version, the SHA-256 of the stored
// definition (the versions API serves that definition in full: the log vouches for it), and per
// step id the step's place, name, validator, state and config digest — configs themselves can
// hold megabytes of schema, so the log keeps their digest, not their text.
import { digestOf } from "../audit/changes.ts";
import { sha256 } from "../audit/chain.ts";
import type { StepDef, Workflow } from "./types.ts";

export function workflowRecord(w: Workflow, steps: StepDef[], definition: string | null) {
  return {
    slug: w.slug,
    name: w.name,
    description: w.description,
    status: w.status,
    allowed_file_types: w.allowed_file_types,
    fail_fast: w.fail_fast,
    retention_days: w.retention_days,
    version: w.version,
    ...(definition === null ? {} : { definition_sha256: sha256(definition) }),
    steps: Object.fromEntries(
      steps.map((s) => [
        String(s.id),
        {
          order: s.order,
          name: s.name,
          validator: s.validator,
          is_active: s.is_active,
          config: digestOf(s.config),
        },
      ]),
    ),
  };
}
