// One entry point for the report formats: the body and the media type it is served with.
import { reportJson } from "./escape.ts";
import { renderHtml } from "./html.ts";
import { renderJunit } from "./junit.ts";
import { renderSarif } from "./sarif.ts";
import { type ReportFormat, type ReportRun, itemOf } from "./types.ts";

export const CONTENT_TYPES: Record<ReportFormat, string> = {
  json: "application/json",
  junit: "application/xml; charset=utf-8",
  // Registered with IANA for SARIF (OASIS SARIF 2.1.0, §3.1).
  sarif: "application/sarif+json",
  html: "text/html; charset=utf-8",
};

export const EXTENSIONS: Record<ReportFormat, string> = {
  json: "json",
  junit: "junit.xml",
  sarif: "sarif",
  html: "html",
};

/**
 * The report of one run, as the API serves it. JSON is the run as GET …/runs/{id}/ gives it, but
 * well-formed: a lone surrogate from the data is U+FFFD (escape.ts, reportJson), as in SARIF.
 */
export function renderRun(format: ReportFormat, run: ReportRun): string {
  switch (format) {
    case "json":
      return reportJson(run);
    case "junit":
      return renderJunit([itemOf(run)]);
    case "sarif":
      return `${reportJson(renderSarif([itemOf(run)]), 2)}\n`;
    case "html":
      // An ended run's report is dated when the run ended, not when it was asked for: the same
      // report is the same bytes, so its ETag (a digest of them) holds and a GET can be a 304.
      return renderHtml([itemOf(run)], run.finished_at ? { generatedAt: run.finished_at } : {});
  }
}
