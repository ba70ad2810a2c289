// What every report is rendered from: runs in the shape the API presents them
// (src/runs/present.ts), each with the file name its findings point at. The API names a run by its
// submission's filename; the CLI by the path the user typed, which the server never sees (a
// submission filename has no directories), so code-scanning tools can find the file in the repo.
import type { RunSummary } from "../runs/types.ts";
import type { Finding } from "../validators/types.ts";

export interface ReportStep {
  order: number;
  name: string;
  validator: string;
  status: string;
  duration_ms: number | null;
  findings: Finding[];
  /** All findings of the step, when `findings` holds only the first (a server report is bounded). */
  findings_count?: number;
  error: string | null;
}

/** Findings of a step left out of a report (a server report carries at most REPORT_MAX_FINDINGS). */
export const omittedOf = (s: ReportStep) =>
  Math.max(0, (s.findings_count ?? s.findings.length) - s.findings.length);

/** The sentence every format uses for them. */
export const omittedText = (s: ReportStep, n: number) =>
  `${n} more finding${n === 1 ? "" : "s"} of step ${s.order} ${n === 1 ? "is" : "are"} not in this report: GET …/runs/{run_id}/findings/?step=${s.order} lists all of them.`;

/** A presented run (presentRun's output satisfies it), or one the CLI ran locally. */
export interface ReportRun {
  id: string;
  url: string | null;
  workflow: { slug: string; version: number };
  submission: { filename: string | null; content_type: string; file_type: string };
  status: string;
  summary: RunSummary | null;
  steps: ReportStep[];
  error: string | null;
  created_at: string;
  finished_at: string | null;
  duration_ms: number | null;
}

export interface ReportItem {
  run: ReportRun;
  /** The name findings are reported against: `file:line:column`. */
  file: string;
  /**
   * Set when the file got no run (the CLI's: refused by the server, not reachable, not finished in
   * time): `run` then only carries the file, its content type and the workflow's slug, and no
   * report may present it as a run, nor its lack of findings as a clean file.
   */
  notValidated?: { code: string; reason: string };
}

export const REPORT_FORMATS = ["json", "junit", "sarif", "html"] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** The run could not be judged: the service failed, a limit stopped it, or it was canceled. */
export const UNFINISHED_STATUSES = ["error", "timed_out", "canceled"];

/** A run's end in words, "ended in error", "timed out": the bare status read "the run ended error". */
export const endedAs = (status: string) =>
  status === "error" ? "ended in error" : status === "timed_out" ? "timed out" : `ended ${status}`;

export const fileOf = (run: ReportRun) => run.submission.filename ?? `run-${run.id}`;

export const itemOf = (run: ReportRun): ReportItem => ({ run, file: fileOf(run) });
