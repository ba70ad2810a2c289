// SARIF 2.1.0 (OASIS), the format code-scanning tools import: one SARIF run for the whole report
// (tools such as GitHub code scanning expect one run per tool and category), a rule per finding
// code, a result per finding located by the file name, line and column. Steps and runs that could
// not finish become tool execution notifications, not results: they say nothing about the data.
import { VERSION } from "../version.ts";
import type { Finding, Severity } from "../validators/types.ts";
import { type ReportItem, UNFINISHED_STATUSES, endedAs, omittedOf, omittedText } from "./types.ts";

export const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";
const LEVEL: Record<Severity, "error" | "warning" | "note"> = {
  error: "error",
  warning: "warning",
  info: "note",
};

/**
 * A file path as a relative URI reference, each segment percent-encoded. The path is already
 * written with "/" (labelOf turns Windows' "\" into "/"): a "\" left is part of a name (POSIX),
 * `%5C`, not a directory — `back\slash.json` was reported as the other file `back/slash.json`.
 */
export function fileUri(file: string): string {
  return file
    .split("/")
    .map((seg) => encodeURIComponent(seg.toWellFormed()))
    .join("/");
}

interface Rule {
  id: string;
  shortDescription: { text: string };
  defaultConfiguration: { level: "error" | "warning" | "note" };
  properties: { validators: string[] };
}

export function renderSarif(items: ReportItem[]) {
  const rules: Rule[] = [];
  const ruleIndex = new Map<string, number>();
  const artifacts: Record<string, unknown>[] = [];
  const artifactIndex = new Map<string, number>();
  const results: Record<string, unknown>[] = [];
  const notifications: Record<string, unknown>[] = [];
  /** Not failures: findings a bounded report leaves out. */
  const notes: Record<string, unknown>[] = [];

  const ruleFor = (f: Finding, validator: string) => {
    let i = ruleIndex.get(f.code);
    if (i === undefined) {
      i = rules.length;
      ruleIndex.set(f.code, i);
      rules.push({
        id: f.code,
        shortDescription: { text: `${f.code} (reported by the ${validator} validator)` },
        defaultConfiguration: { level: LEVEL[f.severity] },
        properties: { validators: [validator] },
      });
    } else if (!rules[i]!.properties.validators.includes(validator))
      rules[i]!.properties.validators.push(validator);
    return i;
  };

  for (const { run, file, notValidated } of items) {
    const uri = fileUri(file);
    let index = artifactIndex.get(uri);
    if (index === undefined) {
      index = artifacts.length;
      artifactIndex.set(uri, index);
      const mime = run.submission.content_type.split(";")[0]!.trim();
      artifacts.push({
        location: { uri },
        ...(/^[^/]+\/.+$/.test(mime) ? { mimeType: mime } : {}),
        // Unknown for a file that got no run: left out rather than "".
        ...(run.submission.file_type ? { properties: { file_type: run.submission.file_type } } : {}),
      });
    }
    // No run: nothing was checked, which the log must not read as a clean file.
    if (notValidated) {
      notifications.push(notification(`${file}: not validated: ${notValidated.reason}`, uri, index));
      continue;
    }
    for (const step of run.steps) {
      for (const f of step.findings) {
        // Always a region: GitHub code scanning places a result by region.startLine (required
        // there; a result without one is not shown at its file). A finding about the whole
        // document (no line: an assertion, a rule of the table) is placed at line 1.
        const physical: Record<string, unknown> = {
          artifactLocation: { uri, index },
          region:
            f.line !== null && f.line >= 1
              ? {
                  startLine: f.line,
                  ...(f.column !== null && f.column >= 1 ? { startColumn: f.column } : {}),
                }
              : { startLine: 1 },
        };
        const loc: Record<string, unknown> = { physicalLocation: physical };
        if (f.path) loc.logicalLocations = [{ fullyQualifiedName: f.path }];
        results.push({
          ruleId: f.code,
          ruleIndex: ruleFor(f, step.validator),
          level: LEVEL[f.severity],
          message: { text: f.message || f.code },
          locations: [loc],
          properties: {
            run_id: run.id,
            step: step.name,
            step_order: step.order,
            validator: step.validator,
            ...(f.rule ? { rule: f.rule } : {}),
          },
        });
      }
      const omitted = omittedOf(step);
      if (omitted)
        notes.push({ ...notification(`${file}: ${omittedText(step, omitted)}`, uri, index), level: "note" });
      if (step.status === "error")
        notifications.push(
          notification(
            `${file}: step ${step.order} "${step.name}" (${step.validator}) could not finish: ${step.error ?? "unknown error"}`,
            uri,
            index,
          ),
        );
    }
    // A step that reached its max_findings: the results are not every problem (as JUnit, HTML and
    // the text output say); a note, since the run itself finished.
    if (run.summary?.truncated)
      notes.push({
        ...notification(`${file}: findings were capped per step: not every problem is listed.`, uri, index),
        level: "note",
      });
    // Not final yet: no result may still mean no finding so far, so the log must not read as clean.
    if (run.status === "queued" || run.status === "running")
      notifications.push(
        notification(
          `${file}: the run is still ${run.status}: findings of the steps not finished are not in this report.`,
          uri,
          index,
        ),
      );
    else if (UNFINISHED_STATUSES.includes(run.status) && !run.steps.some((s) => s.status === "error"))
      notifications.push(
        notification(
          `${file}: the run ${endedAs(run.status)}${run.error ? `: ${run.error}` : "."}`,
          uri,
          index,
        ),
      );
  }

  const workflows = [...new Set(items.map((i) => i.run.workflow.slug))];
  const run: Record<string, unknown> = {
    tool: {
      driver: {
        name: "Assay",
        version: VERSION,
        semanticVersion: VERSION,
        rules,
      },
    },
    invocations: [
      {
        executionSuccessful: notifications.length === 0,
        ...(notifications.length + notes.length
          ? { toolExecutionNotifications: [...notifications, ...notes] }
          : {}),
      },
    ],
    artifacts,
    results,
    // Validators count columns in UTF-16 code units (src/validators/shared/position.ts).
    columnKind: "utf16CodeUnits",
    properties: {
      runs: items.map((i) =>
        i.notValidated
          ? { file: i.file, run_id: null, status: null, error: i.notValidated.reason }
          : { file: i.file, run_id: i.run.id, status: i.run.status },
      ),
    },
  };
  // The category code-scanning tools group results by: one per workflow.
  if (workflows.length === 1) run.automationDetails = { id: `assay/${workflows[0]}/` };
  return { $schema: SARIF_SCHEMA, version: "2.1.0", runs: [run] };
}

function notification(text: string, uri: string, index: number) {
  return {
    level: "error",
    message: { text },
    locations: [{ physicalLocation: { artifactLocation: { uri, index } } }],
  };
}
