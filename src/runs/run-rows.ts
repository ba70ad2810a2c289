// A run as the runs store reads it: the row joined with its submission and workflow slug, and
// the step summaries stored in runs.steps (the findings are stored apart: findings-store.ts).
import { parseJson } from "../db/util.ts";
import type { FileType } from "../validators/types.ts";
import type { Run, RunStatus, RunStep, RunSummary, Submission } from "./types.ts";

export interface RunRow {
  id: string;
  org_id: number;
  workflow_id: number;
  workflow_slug: string;
  workflow_version: number;
  status: RunStatus;
  summary: string | null;
  steps: string;
  error: string | null;
  attempts: number;
  created_by: number | null;
  created_by_name: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  s_id: number;
  s_filename: string | null;
  s_content_type: string;
  s_charset: string;
  s_file_type: FileType;
  s_size: number;
  s_sha256: string;
  s_metadata: string;
  s_created_at: string;
  s_purged_at: string | null;
}

export const COLUMNS = `r.*, w.slug AS workflow_slug, s.id AS s_id, s.filename AS s_filename, s.content_type AS s_content_type,
  s.charset AS s_charset, s.file_type AS s_file_type, s.size AS s_size, s.sha256 AS s_sha256, s.metadata AS s_metadata,
  s.created_at AS s_created_at, s.purged_at AS s_purged_at`;
export const JOINS = "JOIN submissions s ON s.id = r.submission_id JOIN workflows w ON w.id = r.workflow_id";
export const SELECT = `SELECT ${COLUMNS} FROM runs r ${JOINS}`;

/**
 * The step summaries stored in runs.steps: `findings` always empty, `findings_count` instead; the
 * findings are stored apart (src/runs/findings-store.ts). A list parses these and nothing more,
 * however many findings the runs have (issue #19).
 */
export function summariesJson(steps: RunStep[]): string {
  return JSON.stringify(
    steps.map((s) => ({ ...s, findings: [], findings_count: s.findings_count ?? s.findings.length })),
  );
}

/** The run row with its step summaries; findings are added by the caller when wanted. */
export function toRun(r: RunRow): Run {
  const steps = parseJson<RunStep[]>(r.steps, []);
  const submission: Submission = {
    id: r.s_id,
    filename: r.s_filename,
    content_type: r.s_content_type,
    charset: r.s_charset,
    file_type: r.s_file_type,
    size: r.s_size,
    sha256: r.s_sha256,
    metadata: parseJson(r.s_metadata, {}),
    created_at: r.s_created_at,
    purged_at: r.s_purged_at,
  };
  return {
    id: r.id,
    org_id: r.org_id,
    workflow_id: r.workflow_id,
    workflow_slug: r.workflow_slug,
    workflow_version: r.workflow_version,
    submission,
    status: r.status,
    summary: parseJson<RunSummary | null>(r.summary, null),
    steps,
    error: r.error,
    attempts: r.attempts,
    created_by: { id: r.created_by, username: r.created_by_name },
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
    duration_ms: r.duration_ms,
  };
}
