// The command's output in each format. text is for people and CI logs (one finding per line as
// `file:line:column severity code message`); json, junit, sarif and html are for tools.
import { reportJson, visible } from "../../reports/escape.ts";
import { renderHtml } from "../../reports/html.ts";
import { renderJunit } from "../../reports/junit.ts";
import { countsText, findingLine, plural } from "../../reports/lines.ts";
import { renderSarif } from "../../reports/sarif.ts";
import { type FailOn, type FileResult, errorText, exitCode, reportItem, verdictOf } from "./result.ts";

export const CLI_FORMATS = ["text", "json", "junit", "sarif", "html"] as const;
export type CliFormat = (typeof CLI_FORMATS)[number];

export interface OutputContext {
  results: FileResult[];
  failOn: FailOn;
  /** The workflow's slug, for runs that never started. */
  workflow: string;
  /** Where to see a run in full, when there is a server. */
  reportUrl?: (runId: string) => string;
}

const WORD = { succeeded: "PASS", failed: "FAIL", error: "ERROR" } as const;

export function renderText(c: OutputContext): string {
  const out: string[] = [];
  for (const r of c.results) {
    const v = verdictOf(r, c.failOn);
    if (!r.run) {
      out.push(`${WORD[v]} ${r.file}: ${r.error ? errorText(r.error) : "no run"}`);
      continue;
    }
    const run = r.run;
    out.push(`${WORD[v]} ${r.file}: ${run.status} (${countsText(run.summary)})`);
    for (const s of run.steps) {
      for (const f of s.findings) out.push(findingLine(r.file, f));
      if (s.status === "error")
        out.push(
          `${r.file}: step ${s.order} "${s.name}" (${s.validator}) could not finish: ${s.error ?? "unknown error"}`,
        );
    }
    if (run.error && !run.steps.some((s) => s.status === "error")) out.push(`${r.file}: ${run.error}`);
    if (run.summary?.truncated) out.push(`${r.file}: findings were capped; not every problem is listed`);
    if (v !== "succeeded" && run.id && c.reportUrl) out.push(`  report: ${c.reportUrl(run.id)}`);
  }
  const n = { succeeded: 0, failed: 0, error: 0 };
  for (const r of c.results) n[verdictOf(r, c.failOn)]++;
  const parts = [`${n.succeeded} passed`, `${n.failed} failed`];
  if (n.error) parts.push(plural(n.error, "error"));
  out.push(`${plural(c.results.length, "file")}: ${parts.join(", ")}.`);
  // Messages, names and errors quote the submitted data and the server: a terminal or CI log
  // viewer must not obey an escape sequence in them (clear the screen, forge a link or a line).
  return `${out.map(visible).join("\n")}\n`;
}

export function renderJsonReport(c: OutputContext): string {
  const code = exitCode(c.results, c.failOn);
  const files = c.results.map((r) => ({
    file: r.file,
    verdict: verdictOf(r, c.failOn),
    run: r.run,
    error: r.error,
  }));
  const count = (v: string) => files.filter((f) => f.verdict === v).length;
  return `${reportJson(
    {
      verdict: code === 0 ? "succeeded" : code === 1 ? "failed" : "error",
      exit_code: code,
      fail_on: c.failOn,
      counts: {
        files: files.length,
        succeeded: count("succeeded"),
        failed: count("failed"),
        error: count("error"),
      },
      files,
    },
    2,
  )}\n`;
}

export function render(format: CliFormat, c: OutputContext): string {
  const items = () => c.results.map((r) => reportItem(r, c.workflow));
  switch (format) {
    case "text":
      return renderText(c);
    case "json":
      return renderJsonReport(c);
    case "junit":
      return renderJunit(items(), { failOn: c.failOn });
    case "sarif":
      return `${reportJson(renderSarif(items()), 2)}\n`;
    case "html":
      return renderHtml(items());
  }
}
