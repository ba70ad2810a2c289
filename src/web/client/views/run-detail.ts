// One run: status, summary, each step with its findings, and the submitted content with the
// failing lines highlighted. A run still going is polled (as Retry-After says) until final.
import { ApiError, api, enc, get, request } from "../api.ts";
import { showHiddenControls } from "../../../lib/text.ts";
import { type Child, h, mount } from "../dom.ts";
import type { Ctx, Rendered } from "../router.ts";
import { can, me } from "../session.ts";
import type { ReportFormat } from "../../../reports/types.ts";
import { FINAL, type Finding, type Run, type RunStep } from "../types.ts";
import {
  badge,
  bytes,
  duration,
  empty,
  errorNotice,
  heading,
  notice,
  severityBadge,
  table,
  tableRow,
  time,
} from "../ui.ts";
import { afterFailedPoll } from "../poll.ts";
import { type ContentView, contentViewer, goToLine } from "./content.ts";
import { findingCounts } from "./runs.ts";

const MAX_CONTENT_BYTES = 5 * 1048576;

function location(f: Finding): Child {
  const parts: Child[] = [];
  // The path names the document's own keys (a JSON key, a CSV header): controls shown, not obeyed.
  if (f.path) parts.push(h("code", null, showHiddenControls(f.path)));
  if (f.line != null) {
    const label = `line ${f.line}${f.column != null ? `, column ${f.column}` : ""}`;
    parts.push(
      h(
        "a",
        {
          href: `#L${f.line}`,
          class: "loc",
          onclick: (e: Event) => {
            e.preventDefault();
            goToLine(f.line!);
          },
        },
        label,
      ),
    );
  }
  return parts.length ? h("span", { class: "where" }, parts) : h("span", { class: "muted" }, "—");
}

/** Findings per page when more of a step's findings are loaded (the API's maximum page size). */
const FINDINGS_PAGE = 200;

const FINDING_HEADS = ["Severity", "Code", "Message", "Location"];
const findingCells = (f: Finding): Child[] => [
  severityBadge(f.severity),
  h("code", null, f.code),
  showHiddenControls(f.message),
  location(f),
];
const findingsTable = (s: RunStep) =>
  table(FINDING_HEADS, s.findings.map(findingCells), `Findings of step ${s.order}`);

/** "Showing 1,000 of 5,000 findings." and the button for the next page; null when all are shown. */
function moreLine(s: RunStep, total: number, more: (button: HTMLButtonElement) => void): HTMLElement | null {
  const have = s.findings.length;
  if (total <= have) return null;
  return h(
    "p",
    { class: "more" },
    `Showing ${have.toLocaleString()} of ${total.toLocaleString()} findings. `,
    h(
      "button",
      {
        type: "button",
        class: "button secondary",
        "data-key": `more-${s.order}`,
        onclick: (e: Event) => more(e.currentTarget as HTMLButtonElement),
      },
      `Show ${Math.min(FINDINGS_PAGE, total - have)} more`,
    ),
  );
}

function stepSection(
  s: RunStep,
  more: (s: RunStep, section: HTMLElement, button: HTMLButtonElement) => Promise<void>,
): HTMLElement {
  s.findings ??= [];
  const total = s.findings_count ?? s.findings.length;
  const section: HTMLElement = h(
    "section",
    { class: "run-step", "aria-labelledby": `step-${s.order}` },
    h("h3", { id: `step-${s.order}` }, `${s.order}. ${s.name} `, badge(s.status)),
    h("p", { class: "muted small" }, h("code", null, s.validator), ` · ${duration(s.duration_ms)}`),
    s.error ? notice("error", h("p", null, showHiddenControls(s.error))) : null,
    s.findings.length
      ? findingsTable(s)
      : s.status === "passed"
        ? h("p", { class: "muted" }, "No findings.")
        : null,
    // A run answer carries its first 1000 findings; the rest are read a page at a time.
    moreLine(s, total, (button) => void more(s, section, button)),
  );
  return section;
}

/**
 * Adds a loaded page of a step's findings to its section: new rows after the ones shown (which
 * stay as they are), and the "Showing … of …" line for what is left. Until 2026-11-30 each page
 * redrew every step's table and the whole content view: 1.5–6.7 s a click on a 5,000-finding run.
 */
function appendFindings(
  s: RunStep,
  section: HTMLElement,
  added: Finding[],
  more: (s: RunStep, section: HTMLElement, button: HTMLButtonElement) => Promise<void>,
): void {
  const tbody = section.querySelector("tbody");
  if (tbody) for (const f of added) tbody.append(tableRow(FINDING_HEADS, findingCells(f)));
  // A step whose findings all lie past the run answer's first 1000 has no table yet.
  else section.querySelector(".more")?.before(findingsTable(s));
  const line = moreLine(s, s.findings_count ?? s.findings.length, (button) => void more(s, section, button));
  const old = section.querySelector(".more");
  if (!line) old?.remove();
  else if (old) {
    // The button stays the same element (focus stays on it); only its words change.
    old.firstChild!.textContent = line.firstChild!.textContent;
    old.querySelector("button")!.textContent = line.querySelector("button")!.textContent;
  }
}

/**
 * Keyboard focus across a redraw of the run's parts (each poll that changed the run, "Show more",
 * "Cancel run"): what was focused, by its data-key, href or id, to focus its replacement after.
 * Without this, focus fell to the top of the page each time and the next Tab started over.
 */
interface FocusKey {
  key: string;
  /** Where focus goes when the control is gone: the step's heading for "Show more", else the h1. */
  fallback: string;
}
function whereFocus(parts: HTMLElement[]): FocusKey | null {
  const el = document.activeElement as HTMLElement | null;
  if (!el || !parts.some((p) => p.contains(el))) return null;
  const key = el.dataset.key
    ? `[data-key="${el.dataset.key}"]`
    : el.getAttribute("href")
      ? `[href="${CSS.escape(el.getAttribute("href")!)}"]`
      : el.id
        ? `#${CSS.escape(el.id)}`
        : null;
  if (!key) return null;
  const more = /^more-(\d+)$/.exec(el.dataset.key ?? "");
  return { key, fallback: more ? `#step-${more[1]}` : "main h1" };
}
function refocus(f: FocusKey): void {
  const el = document.querySelector<HTMLElement>(f.key) ?? document.querySelector<HTMLElement>(f.fallback);
  if (!el) return;
  if (!el.matches("a[href], button, input, select, textarea, [tabindex]")) el.tabIndex = -1;
  el.focus();
}

/** The formats the report endpoint offers; HTML is the heading's "HTML report" (a new tab). */
const DOWNLOADS: Record<Exclude<ReportFormat, "html">, string> = {
  json: "JSON",
  junit: "JUnit XML",
  sarif: "SARIF",
};

/**
 * A download of each report format, as the HTML report is opened: a same-origin GET, which the
 * session cookie authenticates (no token in the URL); the server's Content-Disposition names the
 * file (assay-run-{id}.json, .junit.xml, .sarif).
 */
function reportLinks(path: string): Child {
  return Object.entries(DOWNLOADS).map(([format, label], i) => [
    i ? " · " : null,
    h("a", { href: `/api/v1/${path}report/?format=${format}`, download: "" }, `${label} report`),
  ]);
}

function progress(r: Run): string {
  if (r.status === "queued") return "Queued: waiting for a worker…";
  const running = r.steps.find((s) => s.status === "running");
  const done = r.steps.filter((s) => !["pending", "running"].includes(s.status)).length;
  return `Running: ${done} of ${r.steps.length} steps done${running ? `, now “${running.name}”` : ""}…`;
}

export async function runDetailView(ctx: Ctx): Promise<Rendered> {
  const { org, id } = ctx.params as { org: string; id: string };
  const path = `orgs/${enc(org)}/runs/${enc(id)}/`;
  let run = await get<Run>(path, ctx.signal);
  let text: string | null = null;
  let contentNote: Child = null;
  if (run.submission.content_purged)
    contentNote = notice(
      "info",
      h("p", null, "The content was purged by the retention policy; the findings remain."),
    );
  else if (run.submission.size > MAX_CONTENT_BYTES)
    contentNote = h(
      "p",
      null,
      `The content is ${bytes(run.submission.size)}: too large to show here. `,
      h("a", { href: `/api/v1/${path}content/`, download: "" }, "Download it"),
    );
  else {
    try {
      text = await (await request("GET", `${path}content/`, { signal: ctx.signal })).text();
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      contentNote = errorNotice(e);
    }
  }

  const live = h("p", { class: "live", role: "status" });
  const problem = h("div");
  const pollProblem = h("div");
  const summary = h("div");
  const steps = h("div");
  const content = h("div");
  const actions = h("div", { class: "actions" });
  let view: ContentView | null = null;
  const draw = () => {
    const focus = whereFocus([summary, steps, content, actions]);
    drawParts();
    if (focus) refocus(focus);
  };
  const drawParts = () => {
    live.textContent = FINAL.has(run.status) ? `Finished: ${run.status.replace("_", " ")}.` : progress(run);
    const s = run.summary;
    mount(
      summary,
      h(
        "dl",
        { class: "meta" },
        h("dt", null, "Status"),
        h("dd", null, badge(run.status)),
        h("dt", null, "Workflow"),
        h(
          "dd",
          null,
          h("a", { href: `/app/orgs/${org}/workflows/${run.workflow.slug}/` }, run.workflow.slug),
          " · ",
          // The version this run executed, as it was (by id: still there after a slug change).
          h(
            "a",
            { href: `/app/orgs/${org}/workflows/${run.workflow.id}/versions/${run.workflow.version}/` },
            `version ${run.workflow.version}`,
          ),
        ),
        h("dt", null, "File"),
        h(
          "dd",
          null,
          run.submission.filename ?? "(unnamed)",
          ` · ${run.submission.file_type} · ${run.submission.content_type} · ${bytes(run.submission.size)}`,
        ),
        // The client's own fields, as JSON; bidirectional and invisible controls shown as escapes.
        Object.keys(run.submission.metadata ?? {}).length
          ? [
              h("dt", null, "Metadata"),
              h(
                "dd",
                null,
                h(
                  "pre",
                  { class: "code-block metadata" },
                  showHiddenControls(JSON.stringify(run.submission.metadata, null, 2)),
                ),
              ),
            ]
          : null,
        h("dt", null, "Submitted"),
        h("dd", null, time(run.created_at), run.created_by?.username ? ` by ${run.created_by.username}` : ""),
        h("dt", null, "Duration"),
        h("dd", null, duration(run.duration_ms)),
        h("dt", null, "Reports"),
        h("dd", null, reportLinks(path)),
        h("dt", null, "Findings"),
        h(
          "dd",
          null,
          findingCounts(run),
          s
            ? `, ${s.infos} info · steps: ${s.steps_passed} passed, ${s.steps_failed} failed, ${s.steps_skipped} skipped`
            : "",
        ),
      ),
      s?.truncated
        ? notice(
            "warning",
            h("p", null, "Some steps reported more findings than their limit; the list is truncated."),
          )
        : null,
      run.error ? notice("error", h("p", null, showHiddenControls(run.error))) : null,
    );
    mount(steps, run.steps.length ? run.steps.map((x) => stepSection(x, more)) : empty("No steps."));
    view = text !== null ? contentViewer(text, run.steps) : null;
    mount(content, view ? view.el : contentNote);
    const mine = run.created_by?.username === me().username;
    mount(
      actions,
      // As the API decides: its creator (whatever their role now) or an Author.
      !FINAL.has(run.status) && (mine || can(org, "author"))
        ? h(
            "button",
            { type: "button", class: "button danger", "data-key": "cancel", onclick: cancel },
            "Cancel run",
          )
        : null,
      h(
        "a",
        {
          class: "button secondary",
          href: `/api/v1/${path}report/?format=html`,
          target: "_blank",
          rel: "noopener",
        },
        "HTML report",
      ),
    );
  };
  /** The next page of a step's findings, appended to what the run answer carried. */
  const more = async (step: RunStep, section: HTMLElement, button: HTMLButtonElement) => {
    // Where focus is, taken before the button is disabled (Chrome then moves focus off it).
    const focus = whereFocus([steps]);
    button.disabled = true;
    const have = step.findings.length;
    const page = Math.floor(have / FINDINGS_PAGE) + 1;
    try {
      const r = await get<{ results: (Finding & { step_order: number; step_id: number })[] }>(
        `${path}findings/?step=${step.order}&page=${page}&page_size=${FINDINGS_PAGE}`,
        ctx.signal,
      );
      // Pages start at offset 0: skip what the step already holds.
      const skip = have - (page - 1) * FINDINGS_PAGE;
      const added: Finding[] = r.results.slice(skip).map((f) => ({
        severity: f.severity,
        code: f.code,
        message: f.message,
        path: f.path,
        line: f.line,
        column: f.column,
        rule: f.rule,
      }));
      step.findings.push(...added);
      appendFindings(step, section, added, more);
      view?.addFindings(step.name, added);
    } catch (e) {
      mount(problem, errorNotice(e));
    } finally {
      button.disabled = false;
      if (focus) refocus(focus);
    }
  };
  const cancel = async () => {
    try {
      run = await api<Run>("POST", `${path}cancel/`);
      draw();
    } catch (e) {
      mount(problem, errorNotice(e));
    }
  };
  draw();
  // A failed poll is said and tried again (poll.ts).
  void (async () => {
    let wait = 1000;
    while (!FINAL.has(run.status) && !ctx.signal.aborted) {
      await new Promise((r) => setTimeout(r, wait));
      if (ctx.signal.aborted) return;
      try {
        const before = JSON.stringify(run);
        run = await get<Run>(path, ctx.signal);
        wait = 1000;
        pollProblem.replaceChildren();
        if (JSON.stringify(run) !== before) draw();
      } catch (e) {
        if (ctx.signal.aborted) return;
        const next = afterFailedPoll(e, wait, "the run");
        pollProblem.replaceChildren(...(next.shown ? [next.shown] : []));
        if (next.stop) return;
        wait = next.wait;
      }
    }
  })();
  return {
    title: `Run ${id.slice(-8)}`,
    body: h(
      "div",
      null,
      h("p", { class: "crumbs" }, h("a", { href: `/app/orgs/${org}/runs/` }, "Runs"), " / "),
      heading(h("span", null, "Run ", h("span", { class: "mono", title: id }, id.slice(-8))), actions),
      live,
      pollProblem,
      problem,
      summary,
      h("h2", null, "Steps"),
      steps,
      h("h2", null, "Submitted content"),
      content,
    ),
  };
}
