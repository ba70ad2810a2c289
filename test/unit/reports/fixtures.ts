// Runs in the presented shape for renderer tests: one of every step outcome.
import type { ReportRun } from "../../../src/reports/types.ts";
import type { Finding } from "../../../src/validators/types.ts";

export const finding = (over: Partial<Finding> = {}): Finding => ({
  severity: "error",
  code: "json_schema.required",
  message: 'missing required property "id"',
  path: "/items/0",
  line: 3,
  column: 7,
  rule: "#/required",
  ...over,
});

export function run(over: Partial<ReportRun> = {}): ReportRun {
  return {
    id: "01900000-0000-7000-8000-000000000001",
    url: "http://127.0.0.1:8080/api/v1/orgs/acme/runs/01900000-0000-7000-8000-000000000001/",
    workflow: { slug: "orders", version: 3 },
    submission: {
      filename: "orders.json",
      content_type: "application/json; charset=utf-8",
      file_type: "JSON",
    },
    status: "failed",
    summary: {
      errors: 2,
      warnings: 1,
      infos: 0,
      steps_passed: 1,
      steps_failed: 1,
      steps_skipped: 1,
      truncated: false,
    },
    steps: [
      {
        order: 1,
        name: "syntax",
        validator: "syntax",
        status: "passed",
        duration_ms: 2,
        findings: [
          finding({ severity: "warning", code: "syntax.duplicate_key", line: 1, column: 1, path: null }),
        ],
        error: null,
      },
      {
        order: 2,
        name: "schema",
        validator: "json_schema",
        status: "failed",
        duration_ms: 15,
        findings: [
          finding(),
          finding({ code: "json_schema.type", message: "must be integer", line: null, column: null }),
        ],
        error: null,
      },
      {
        order: 3,
        name: "rules",
        validator: "assertions",
        status: "skipped",
        duration_ms: null,
        findings: [],
        error: null,
      },
    ],
    error: null,
    created_at: "2025-01-02T03:04:05.678Z",
    finished_at: "2025-01-02T03:04:05.700Z",
    duration_ms: 22,
    ...over,
  };
}

/** Everything a hostile submission could put into a report's text. */
export const HOSTILE = `<script>alert("x")</script> & ' \u0001\u0008 \ud800 ]]> --> <!--`;
