// The runs of an org, newest first, with filters (workflow, status, date range). Runs still
// going are refreshed until they finish.
import { filterTime } from "../../../lib/filter-time.ts";
import { type Page, enc, get, qs } from "../api.ts";
import { type Child, field, h, mount, option } from "../dom.ts";
import { type Ctx, type Rendered, navigate } from "../router.ts";
import { refusedFilters, showErrors } from "../forms.ts";
import { afterFailedPoll } from "../poll.ts";
import { FINAL, type Run, type Workflow } from "../types.ts";
import { badge, duration, emptyPage, heading, pager, table, time } from "../ui.ts";

const STATUSES = ["queued", "running", "succeeded", "failed", "error", "canceled", "timed_out"];
export const RUN_HEAD = ["Run", "Workflow", "Status", "Findings", "File", "By", "Created", "Duration"];

export function findingCounts(r: Run): Child {
  if (!r.summary) return h("span", { class: "muted" }, "—");
  const { errors, warnings } = r.summary;
  return `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}`;
}

export function runRows(org: string, runs: Run[]): Child[][] {
  return runs.map((r) => [
    h(
      "a",
      // Named by what it shows ("Run 2e86fc3e", as the run's page is titled), so that a speech
      // user can say the text they see (WCAG 2.5.3); the whole id is in the title.
      { href: `/app/orgs/${org}/runs/${r.id}/`, class: "mono", title: r.id },
      h("span", { class: "sr-only" }, "Run "),
      r.id.slice(-8),
    ),
    h("a", { href: `/app/orgs/${org}/workflows/${r.workflow.slug}/` }, r.workflow.slug),
    badge(r.status),
    findingCounts(r),
    [
      r.submission.filename ?? h("span", { class: "muted" }, "(unnamed)"),
      " ",
      h("span", { class: "tag" }, r.submission.file_type),
    ],
    r.created_by?.username ?? "—",
    time(r.created_at),
    duration(r.duration_ms),
  ]);
}

const FOCUSABLE = "a[href], button, input, select, textarea";
/** Where focus is in `box`: the focused control's href, or else its index among the controls. */
function focusKey(box: HTMLElement): string | number {
  const el = document.activeElement as HTMLElement;
  return el.getAttribute("href") ?? [...box.querySelectorAll(FOCUSABLE)].indexOf(el);
}
function refocus(box: HTMLElement, key: string | number): void {
  const all = [...box.querySelectorAll<HTMLElement>(FOCUSABLE)];
  const el = typeof key === "string" ? all.find((x) => x.getAttribute("href") === key) : all[key];
  el?.focus();
}

/**
 * A time filter from the address → the value of a datetime-local input (local time, minutes), read
 * as the API reads it (a time without an offset is UTC there; `new Date` read it in the browser's
 * zone, so in Berlin the field showed 10:00 over a list filtered from 11:00, and Apply moved the
 * filter an hour). A value the API refuses is empty here, its refusal shown by the field.
 */
function toLocalInput(value: string | null): string {
  const ms = value ? filterTime(value) : null;
  if (ms === null) return "";
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * Every workflow of the org, for the filter's list: page after page until `next` is null. One
 * request of 200 left the 201st workflow out of the list, and its runs could not be filtered for.
 * A select rather than a free-text slug: a slug the user mistypes would match nothing silently.
 */
async function allWorkflows(org: string, signal: AbortSignal): Promise<Workflow[]> {
  const out: Workflow[] = [];
  for (let page = 1; ; page++) {
    const p = await get<Page<Workflow>>(`orgs/${enc(org)}/workflows/?page=${page}&page_size=200`, signal);
    out.push(...p.results);
    if (!p.next || !p.results.length) return out;
  }
}

export async function runListView(ctx: Ctx): Promise<Rendered> {
  const org = ctx.params.org!;
  const q = ctx.query;
  const page = Math.max(1, Number(q.get("page")) || 1);
  const size = 50;
  const filters = {
    workflow: q.get("workflow"),
    status: q.get("status"),
    created_after: q.get("created_after"),
    created_before: q.get("created_before"),
  };
  const url = (p: number) => `orgs/${enc(org)}/runs/${qs({ ...filters, page: p, page_size: size })}`;
  // A refused filter (a hand-edited address) is shown next to its field in the form: not an error
  // page without the form.
  const [[data, refused], wfs] = await Promise.all([
    refusedFilters(get<Page<Run>>(url(page), ctx.signal)),
    allWorkflows(org, ctx.signal),
  ]);

  const wf = h(
    "select",
    { name: "workflow", "data-field": "workflow", value: filters.workflow ?? "" },
    option("", "All workflows"),
    wfs.map((w) => option(w.slug, w.name)),
  );
  const st = h(
    "select",
    { name: "status", "data-field": "status", value: filters.status ?? "" },
    option("", "Any status"),
    STATUSES.map((s) => option(s, s.replace("_", " "))),
  );
  const after = h("input", {
    type: "datetime-local",
    name: "created_after",
    "data-field": "created_after",
    value: toLocalInput(filters.created_after),
  });
  const before = h("input", {
    type: "datetime-local",
    name: "created_before",
    "data-field": "created_before",
    value: toLocalInput(filters.created_before),
  });
  const iso = (v: string) => (v ? new Date(v).toISOString() : null);
  const form = h(
    "form",
    {
      class: "filters",
      role: "search",
      "aria-label": "Filter runs",
      onsubmit: (e: Event) => {
        e.preventDefault();
        navigate(
          `/app/orgs/${org}/runs/${qs({ workflow: wf.value, status: st.value, created_after: iso(after.value), created_before: iso(before.value) })}`,
        );
      },
    },
    field("Workflow", wf),
    field("Status", st),
    field("Created after", after),
    field("Created before", before),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "button" }, "Apply filters"),
      h("a", { href: `/app/orgs/${org}/runs/`, class: "button secondary" }, "Clear"),
    ),
  );

  const list = h("div");
  const pollProblem = h("div");
  // What a refresh changed, said politely: the table itself is not a live region (each refresh
  // would read the whole of it out), and a run that finishes is announced as one short line.
  const announce = h("p", { class: "sr-only", role: "status" });
  const show = (d: Page<Run>) =>
    mount(
      list,
      d.results.length
        ? table(RUN_HEAD, runRows(org, d.results), "Runs")
        : emptyPage(d.count, "No runs match these filters."),
      pager(d.count, page, size, (p) => `/app/orgs/${org}/runs/${qs({ ...filters, page: p })}`),
    );
  if (refused) showErrors(form, refused);
  if (data) show(data);
  // Runs still going: refresh the page of results until they are all final.
  // A failed refresh is said and tried again (poll.ts).
  void (async () => {
    let last = data;
    let wait = 2000;
    while (last && !ctx.signal.aborted && last.results.some((r) => !FINAL.has(r.status))) {
      await new Promise((r) => setTimeout(r, wait));
      if (ctx.signal.aborted) return;
      try {
        const before = JSON.stringify(last);
        last = await get<Page<Run>>(url(page), ctx.signal);
        wait = 2000;
        pollProblem.replaceChildren();
        // Re-rendered only on a change, so keyboard focus in the table is not lost for nothing.
        if (JSON.stringify(last) !== before) {
          const was = new Map(JSON.parse(before).results.map((r: Run) => [r.id, r.status]));
          const changed = last.results.filter((r) => was.has(r.id) && was.get(r.id) !== r.status);
          // Keyboard focus in the list stays on the same link or button across the re-render
          // (it fell back to the top of the page, and the next Tab started over).
          const focused = list.contains(document.activeElement) ? focusKey(list) : null;
          show(last);
          if (focused) refocus(list, focused);
          if (changed.length)
            announce.textContent = changed
              .map((r) => `Run ${r.id.slice(-8)}: ${r.status.replace("_", " ")}.`)
              .join(" ");
        }
      } catch (e) {
        if (ctx.signal.aborted) return;
        const next = afterFailedPoll(e, wait, "the list");
        pollProblem.replaceChildren(...(next.shown ? [next.shown] : []));
        if (next.stop) return;
        wait = next.wait;
      }
    }
  })();
  return { title: "Runs", body: h("div", null, heading("Runs"), form, announce, pollProblem, list) };
}
