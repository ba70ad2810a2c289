// The outcome of validating one file, remote or local, and the exit code of the whole command:
// 2 when anything could not be validated (network, auth, server error, a run that could not
// finish), else 1 when any run failed (or, with --fail-on warning, warned), else 0.
import type { ErrorItem } from "../../errors.ts";
import { type ReportItem, type ReportRun, UNFINISHED_STATUSES } from "../../reports/types.ts";

/** Stops the command with exit code 2 and a message; no report is written. */
export class ValidateError extends Error {}

export interface RequestError {
  /** HTTP status when the server answered; null for network errors and local checks. */
  status: number | null;
  code: string;
  detail: string;
  errors: ErrorItem[];
}

export interface FileResult {
  file: string;
  contentType: string;
  run: ReportRun | null;
  error: RequestError | null;
}

export type FailOn = "error" | "warning";
export type Verdict = "succeeded" | "failed" | "error";

export function verdictOf(r: FileResult, failOn: FailOn): Verdict {
  if (r.error || !r.run || UNFINISHED_STATUSES.includes(r.run.status)) return "error";
  if (r.run.status === "failed") return "failed";
  if (r.run.status !== "succeeded") return "error"; // not final: should not happen after waiting
  if (failOn === "warning" && (r.run.summary?.warnings ?? 0) > 0) return "failed";
  return "succeeded";
}

export function exitCode(results: FileResult[], failOn: FailOn): 0 | 1 | 2 {
  const v = results.map((r) => verdictOf(r, failOn));
  return v.includes("error") ? 2 : v.includes("failed") ? 1 : 0;
}

export const errorText = (e: RequestError) =>
  `${e.status ? `${e.status} ` : ""}${e.code}: ${e.detail}${e.errors.map((x) => ` [${x.field}: ${x.message}]`).join("")}`;

/** What report renderers take: a file that got no run still appears, said not validated. */
export function reportItem(r: FileResult, workflow: string): ReportItem {
  if (r.run) return { run: r.run, file: r.file };
  const now = new Date().toISOString();
  return {
    file: r.file,
    notValidated: r.error
      ? { code: r.error.code, reason: errorText(r.error) }
      : { code: "no_run", reason: "No run." },
    run: {
      id: "",
      url: null,
      workflow: { slug: workflow, version: 0 },
      submission: { filename: r.file, content_type: r.contentType, file_type: "" },
      status: "error",
      summary: null,
      steps: [],
      error: r.error ? errorText(r.error) : "No run.",
      created_at: now,
      finished_at: now,
      duration_ms: 0,
    },
  };
}
