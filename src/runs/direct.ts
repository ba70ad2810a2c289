// Runs executed from memory. A client waiting for a sync answer has not been told anything yet,
// so its run need not be on disk before it executes: it is written once, in its final state,
// before the 201 leaves (one commit instead of three). If the wait runs out first, the run is
// written as queued or running before the 202 leaves, and from then on it is an ordinary run
// (crash recovery, cancel, polling). A crash before either write drops a run nobody was told
// about: the client's connection breaks without an answer (docs/execution.md).
import type { FreshRun } from "./job.ts";
import type { NewRun } from "./store.ts";
import type { Run, RunStatus, RunStep, RunSummary } from "./types.ts";

export interface DirectRun {
  record: NewRun & { createdAt: string; workflowSlug: string };
  /** Set once the first write is issued; later writes (the final update) queue behind it. */
  written: Promise<number> | null;
  /** Submission id, known after the first write commits. */
  submissionId: number | null;
  /** The final run, built in memory, until the route takes it. */
  result: Run | null;
  /** The execution has ended (result or an ordinary run from then on). */
  ended: boolean;
  /** The route no longer needs the record (it answered, or gave up waiting and persisted it). */
  settled: boolean;
  /** The inline runner already checked it and it failed: straight to a worker for the findings. */
  skipInline: boolean;
}

export interface FinalState {
  status: RunStatus;
  steps: RunStep[];
  summary: RunSummary | null;
  error: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

/** The run as GET would read it back, without reading it back. */
export function runFromMemory(r: DirectRun["record"], sid: number, f: FinalState): Run {
  return runOf(r, sid, {
    status: f.status,
    summary: f.summary,
    steps: f.steps,
    error: f.error,
    attempts: 1,
    started_at: f.startedAt,
    finished_at: f.finishedAt,
    duration_ms: f.durationMs,
  });
}

/**
 * A run just written queued, as GET reads it then: the 202 of `Prefer: respond-async` or
 * `wait=0` is this, not a read back (a worker may have taken, even ended, the run meanwhile, and
 * "at once" is the run as committed: docs/api.md).
 */
export function queuedRun(r: NewRun & { createdAt: string; workflowSlug: string }, sid: number): Run {
  return runOf(r, sid, {
    status: "queued",
    summary: null,
    steps: r.steps,
    error: null,
    attempts: 0,
    started_at: null,
    finished_at: null,
    duration_ms: null,
  });
}

type State = Pick<
  Run,
  "status" | "summary" | "steps" | "error" | "attempts" | "started_at" | "finished_at" | "duration_ms"
>;

function runOf(r: NewRun & { createdAt: string; workflowSlug: string }, sid: number, state: State): Run {
  const s = r.submission;
  return {
    id: r.id,
    org_id: r.orgId,
    workflow_id: r.workflowId,
    workflow_slug: r.workflowSlug,
    workflow_version: r.workflowVersion,
    submission: {
      id: sid,
      filename: s.filename,
      content_type: s.contentType,
      charset: s.charset,
      file_type: s.fileType,
      size: s.bytes.byteLength,
      sha256: s.sha256,
      metadata: s.metadata,
      created_at: r.createdAt,
      purged_at: null,
    },
    created_by: { id: r.user.id, username: r.user.username },
    created_at: r.createdAt,
    ...state,
  };
}

/** What the executor launches for a direct run (the record's bytes, copied to the worker). */
export function freshOf(r: DirectRun["record"]): FreshRun {
  return {
    id: r.id,
    org_id: r.orgId,
    workflow_id: r.workflowId,
    workflow_version: r.workflowVersion,
    file_type: r.submission.fileType,
    charset: r.submission.charset,
    filename: r.submission.filename,
    content: r.submission.bytes,
    steps: r.steps,
  };
}
