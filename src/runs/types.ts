import type { StepStatus } from "../jobs/protocol.ts";
import type { FileType, Finding } from "../validators/types.ts";

export const FINAL_STATUSES = ["succeeded", "failed", "error", "canceled", "timed_out"] as const;
export const RUN_STATUSES = ["queued", "running", ...FINAL_STATUSES] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const isFinal = (s: RunStatus) => (FINAL_STATUSES as readonly string[]).includes(s);

export interface RunStep {
  step_id: number;
  order: number;
  name: string;
  validator: string;
  status: StepStatus;
  duration_ms: number | null;
  findings: Finding[];
  /** Why the step is in error (time limit, crash, engine failure); null otherwise. */
  error: string | null;
  /** Findings were capped at the step's max_findings (surfaces as summary.truncated). */
  truncated?: boolean;
  /**
   * How many findings the step has in all, when `findings` may hold only the first of them (a run
   * read back from the database: findings are stored apart, src/runs/store.ts). Absent: all.
   */
  findings_count?: number;
}

export interface RunSummary {
  errors: number;
  warnings: number;
  infos: number;
  steps_passed: number;
  steps_failed: number;
  steps_skipped: number;
  truncated: boolean;
}

export interface Submission {
  id: number;
  filename: string | null;
  content_type: string;
  charset: string;
  file_type: FileType;
  size: number;
  sha256: string;
  metadata: Record<string, unknown>;
  created_at: string;
  purged_at: string | null;
}

export interface Run {
  id: string;
  org_id: number;
  workflow_id: number;
  workflow_slug: string;
  workflow_version: number;
  submission: Submission;
  status: RunStatus;
  summary: RunSummary | null;
  steps: RunStep[];
  error: string | null;
  attempts: number;
  created_by: { id: number | null; username: string | null };
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
}

export interface RunFilters {
  workflowId?: number;
  status?: RunStatus;
  createdAfter?: string;
  createdBefore?: string;
}
