import type { FileType } from "../validators/types.ts";

export interface StepDef {
  id: number;
  order: number;
  name: string;
  validator: string;
  is_active: boolean;
  config: Record<string, unknown>;
}

export interface Workflow {
  id: number;
  org_id: number;
  slug: string;
  name: string;
  description: string;
  status: "active" | "inactive";
  allowed_file_types: FileType[];
  fail_fast: boolean;
  retention_days: number | null;
  version: number;
  created_at: string;
  updated_at: string;
  step_count: number;
}

/** What a save writes: the settings and the full ordered step list (id null = new step). */
export interface WorkflowDraft {
  slug: string;
  name: string;
  description: string;
  status: "active" | "inactive";
  allowed_file_types: FileType[];
  fail_fast: boolean;
  retention_days: number | null;
  steps: Array<
    Omit<StepDef, "id" | "order"> & {
      id: number | null;
      /** A new step that had this id in an earlier version (a restore): it gets it back if free. */
      revive?: number;
    }
  >;
}

/**
 * The defaults a new workflow (POST) or a replaced one (PUT) starts from; also the draft a stored
 * schema's check sends to the check thread (nothing of a workflow to check).
 */
export const EMPTY_DRAFT: Readonly<WorkflowDraft> = {
  slug: "",
  name: "",
  description: "",
  status: "active",
  allowed_file_types: [],
  fail_fast: true,
  retention_days: null,
  steps: [],
};

/**
 * The snapshot a run executes (workflow_versions.definition): the whole definition as saved.
 * Versions saved before migration 0016 lack name, description, status and retention_days.
 */
export interface WorkflowVersion {
  workflow_id: number;
  version: number;
  slug: string;
  name?: string;
  description?: string;
  status?: "active" | "inactive";
  retention_days?: number | null;
  allowed_file_types: FileType[];
  fail_fast: boolean;
  steps: StepDef[];
}
