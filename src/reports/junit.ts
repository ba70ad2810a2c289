// JUnit XML, the report format every CI shows natively: a <testsuite> per run, a <testcase> per
// step; a failed step carries its findings in <failure>, a step the service could not finish an
// <error>, a step not run <skipped>. Element order and attributes follow the widely used Jenkins
// schema (test/fixtures/schemas/junit.xsd).
import { escapeAttr, escapeXml } from "./escape.ts";
import { countsText, findingLine, plural } from "./lines.ts";
import {
  type ReportItem,
  type ReportRun,
  type ReportStep,
  UNFINISHED_STATUSES,
  endedAs,
  omittedOf,
  omittedText,
} from "./types.ts";

const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);

interface Case {
  xml: string;
  failure: boolean;
  error: boolean;
  skipped: boolean;
}

function skippedWhy(run: ReportRun, step: ReportStep): string {
  if (step.status === "pending" || step.status === "running")
    return `Not finished: the run is ${run.status}.`;
  if (run.status === "canceled") return run.error ?? "The run was canceled.";
  // A run that ended (a step's time limit, a crash) skips every later step, fail_fast or not.
  if (UNFINISHED_STATUSES.includes(run.status))
    return `Not run: the run ${endedAs(run.status)}${run.error ? `: ${run.error.replace(/\.$/, "")}` : ""}.`;
  return "Not run: an earlier step did not pass (fail_fast).";
}

/**
 * An outcome element whose reason is both its `message` and its text: Jenkins shows the message,
 * GitLab only an outcome's text (an empty `<error message="…"/>` showed no reason there).
 */
function outcome(tag: "error" | "skipped", message: string, type?: string): string {
  const typed = type === undefined ? "" : ` type="${escapeAttr(type)}"`;
  return `<${tag} message="${escapeAttr(message)}"${typed}>${escapeXml(message)}</${tag}>`;
}

const errorsIn = (s: ReportStep) => s.findings.filter((f) => f.severity === "error").length;
const warningsIn = (s: ReportStep) => s.findings.filter((f) => f.severity === "warning").length;

/**
 * The step's error-level findings, all of them, when they can be known: a bounded report (the
 * API's, REPORT_MAX_FINDINGS) leaves out the findings of the last steps, and a count of the
 * findings in the report said "0 errors" for a failed step. The run's summary counts every
 * finding: when this is the only step with findings left out, its errors are the summary's less
 * those of the other steps. null when several steps lack findings.
 */
function stepErrors(run: ReportRun, step: ReportStep): number | null {
  if (!omittedOf(step)) return errorsIn(step);
  if (!run.summary || run.steps.some((o) => o !== step && omittedOf(o))) return null;
  const others = run.steps.reduce((n, o) => (o === step ? n : n + errorsIn(o)), 0);
  return Math.max(run.summary.errors - others, errorsIn(step));
}

/** The failure's headline: the step's real counts, and how many of its findings the report holds. */
function failureMessage(run: ReportRun, step: ReportStep): string {
  const errors = stepErrors(run, step);
  const omitted = omittedOf(step);
  if (!omitted) return plural(errors!, "error");
  const total = step.findings.length + omitted;
  return errors === null
    ? `${plural(total, "finding")} (${step.findings.length} in this report)`
    : `${plural(errors, "error")} (${step.findings.length} of ${plural(total, "finding")} in this report)`;
}

/** What the report leaves out, said once for the run (each step also says its own). */
function truncationNotes(run: ReportRun): string[] {
  const held = run.steps.reduce((n, s) => n + s.findings.length, 0);
  const omitted = run.steps.reduce((n, s) => n + omittedOf(s), 0);
  const notes: string[] = [];
  if (omitted)
    notes.push(
      `This report holds ${held} of the run's ${plural(held + omitted, "finding")} (the first, in step order); the counts are the run's. GET …/runs/{run_id}/findings/ lists all of them.`,
    );
  if (run.summary?.truncated) notes.push("Findings were capped per step: not every problem is listed.");
  return notes;
}

/** How the report judges a step: `warning` (assay validate --fail-on warning) fails a step that warns. */
export interface JunitOptions {
  failOn?: "error" | "warning";
}

function stepCase(item: ReportItem, step: ReportStep, o: JunitOptions): Case {
  const { run, file } = item;
  const open = `<testcase name="${escapeAttr(`${step.order}. ${step.name} (${step.validator})`)}" classname="${escapeAttr(file)}" time="${seconds(step.duration_ms)}"`;
  const omitted = omittedOf(step);
  const lines = [
    ...step.findings.map((f) => findingLine(file, f)),
    ...(omitted ? [omittedText(step, omitted)] : []),
  ].join("\n");
  const c: Case = { xml: "", failure: false, error: false, skipped: false };
  let body = "";
  if (step.status === "failed") {
    c.failure = true;
    body = `<failure message="${escapeAttr(failureMessage(run, step))}" type="failed">${escapeXml(lines)}</failure>`;
  } else if (o.failOn === "warning" && step.status === "passed" && warningsIn(step) > 0) {
    // The command fails on warnings, so the report says which step failed it: a CI page that
    // showed every case green under a red job was a contradiction.
    c.failure = true;
    const message = `${plural(warningsIn(step), "warning")} (failing on warnings)`;
    body = `<failure message="${escapeAttr(message)}" type="warning">${escapeXml(lines)}</failure>`;
  } else if (step.status === "error") {
    c.error = true;
    body = outcome("error", step.error ?? "The step could not finish.", "error");
  } else if (step.status !== "passed") {
    c.skipped = true;
    body = outcome("skipped", skippedWhy(run, step));
  }
  // Warnings and infos of a passed step are worth seeing, but are not a failure.
  if (lines && !c.failure) body += `<system-out>${escapeXml(lines)}</system-out>`;
  c.xml = body ? `${open}>${body}</testcase>` : `${open}/>`;
  return c;
}

/** A run that ended without judging the data, for a reason no step carries (crash, purge). */
function runCase(item: ReportItem): Case | null {
  const { run, file } = item;
  if (!UNFINISHED_STATUSES.includes(run.status) || run.steps.some((s) => s.status === "error")) return null;
  const why = run.error ?? `The run ended ${run.status}.`;
  return {
    xml: `<testcase name="run" classname="${escapeAttr(file)}" time="${seconds(run.duration_ms)}">${outcome("error", why, run.status)}</testcase>`,
    failure: false,
    error: true,
    skipped: false,
  };
}

/**
 * A file that got no run (refused, server not reachable): one case in error that says so. It has
 * no run id, status, version or findings, and none is made up: "no findings" would read as clean.
 */
function notValidatedCase(file: string, why: { code: string; reason: string }): Case {
  return {
    xml: `<testcase name="submission" classname="${escapeAttr(file)}" time="0.000">${outcome("error", `Not validated: ${why.reason}`, why.code)}</testcase>`,
    failure: false,
    error: true,
    skipped: false,
  };
}

function property(name: string, value: unknown) {
  return `<property name="${escapeAttr(name)}" value="${escapeAttr(value ?? "")}"/>`;
}

function suite(
  item: ReportItem,
  o: JunitOptions,
): { xml: string; tests: number; failures: number; errors: number } {
  const { run, file, notValidated } = item;
  const cases = notValidated
    ? [notValidatedCase(file, notValidated)]
    : run.steps.map((s) => stepCase(item, s, o));
  const extra = notValidated ? null : runCase(item);
  if (extra) cases.push(extra);
  const count = (k: "failure" | "error" | "skipped") => cases.filter((c) => c[k]).length;
  const props = notValidated
    ? [
        property("workflow", run.workflow.slug),
        property("content_type", run.submission.content_type),
        property("error", notValidated.code),
      ]
    : [
        property("run_id", run.id),
        property("status", run.status),
        // Version 0: `assay validate --local` (a definition file, no server version).
        property(
          "workflow",
          `${run.workflow.slug} ${run.workflow.version > 0 ? `v${run.workflow.version}` : "(local)"}`,
        ),
        property("content_type", run.submission.content_type),
        property("findings", countsText(run.summary)),
      ];
  const notes = truncationNotes(run);
  if (notes.length) props.push(property("truncated", "true"));
  if (run.url) props.push(property("url", run.url));
  const attrs = [
    `name="${escapeAttr(file)}"`,
    `tests="${cases.length}"`,
    `failures="${count("failure")}"`,
    `errors="${count("error")}"`,
    `skipped="${count("skipped")}"`,
    `time="${seconds(run.duration_ms)}"`,
    `timestamp="${escapeAttr(run.created_at)}"`,
    `package="${escapeAttr(`assay.${run.workflow.slug}`)}"`,
  ];
  if (run.id) attrs.push(`id="${escapeAttr(run.id)}"`);
  const out = notes.length ? `    <system-out>${escapeXml(notes.join("\n"))}</system-out>\n` : "";
  const xml = `  <testsuite ${attrs.join(" ")}>\n    <properties>${props.join("")}</properties>\n${cases.map((c) => `    ${c.xml}\n`).join("")}${out}  </testsuite>\n`;
  return { xml, tests: cases.length, failures: count("failure"), errors: count("error") };
}

export function renderJunit(items: ReportItem[], o: JunitOptions = {}): string {
  const suites = items.map((i) => suite(i, o));
  const sum = (k: "tests" | "failures" | "errors") => suites.reduce((n, s) => n + s[k], 0);
  const ms = items.reduce((n, i) => n + (i.run.duration_ms ?? 0), 0);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="assay" tests="${sum("tests")}" failures="${sum("failures")}" errors="${sum("errors")}" time="${seconds(ms)}">\n${suites.map((s) => s.xml).join("")}</testsuites>\n`;
}
