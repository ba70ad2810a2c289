// Workflows of an org: the list, and one workflow with its steps, recent runs and the actions the
// user's role allows (run, edit, activate/deactivate, delete).
import { showHiddenControls } from "../../../lib/text.ts";
import { type Page, api, enc, get } from "../api.ts";
import { h } from "../dom.ts";
import { type Ctx, type Rendered, navigate, reload } from "../router.ts";
import { can } from "../session.ts";
import type { Run, Validator, Workflow } from "../types.ts";
import {
  badge,
  confirmDialog,
  empty,
  emptyPage,
  errorNotice,
  flash,
  heading,
  notice,
  pager,
  table,
  time,
} from "../ui.ts";
import { runRows, RUN_HEAD } from "./runs.ts";

let catalogue: Promise<Validator[]> | null = null;
/** The validator catalogue, fetched once per page load. */
export function validators(): Promise<Validator[]> {
  catalogue ??= get<Page<Validator>>("validators/").then((p) => p.results);
  catalogue.catch(() => {
    catalogue = null;
  });
  return catalogue;
}

export async function workflowListView(ctx: Ctx): Promise<Rendered> {
  const org = ctx.params.org!;
  const page = Math.max(1, Number(ctx.query.get("page")) || 1);
  const size = 50;
  const data = await get<Page<Workflow>>(
    `orgs/${enc(org)}/workflows/?page=${page}&page_size=${size}`,
    ctx.signal,
  );
  const base = `/app/orgs/${org}/workflows/`;
  const create = can(org, "author")
    ? h("a", { class: "button", href: `/app/orgs/${org}/new-workflow` }, "New workflow")
    : null;
  return {
    title: "Workflows",
    body: h(
      "div",
      null,
      heading("Workflows", create),
      data.results.length
        ? table(
            ["Name", "Slug", "Status", "File types", "Steps", "Version", "Updated"],
            data.results.map((w) => [
              h("a", { href: `${base}${w.slug}/` }, w.name),
              h("code", null, w.slug),
              badge(w.status),
              w.allowed_file_types.join(", "),
              String(w.step_count ?? 0),
              String(w.version),
              time(w.updated_at),
            ]),
            "Workflows",
          )
        : emptyPage(
            data.count,
            can(org, "author") ? "No workflows yet. Create the first one." : "No workflows yet.",
          ),
      pager(data.count, page, size, (p) => `${base}?page=${p}`),
    ),
  };
}

function configPreview(config: Record<string, unknown>) {
  const keys = Object.keys(config);
  if (!keys.length) return h("span", { class: "muted" }, "No settings");
  return h(
    "details",
    null,
    h("summary", null, "Configuration"),
    h("pre", { class: "code-block" }, showHiddenControls(JSON.stringify(config, null, 2))),
  );
}

export async function workflowDetailView(ctx: Ctx): Promise<Rendered> {
  const { org, wf } = ctx.params as { org: string; wf: string };
  const [w, cat, runs] = await Promise.all([
    get<Workflow>(`orgs/${enc(org)}/workflows/${enc(wf)}/`, ctx.signal),
    validators(),
    get<Page<Run>>(`orgs/${enc(org)}/runs/?workflow=${enc(wf)}&page_size=10`, ctx.signal),
  ]);
  const base = `/app/orgs/${org}/workflows/${w.slug}/`;
  const name = (slug: string) => cat.find((v) => v.slug === slug)?.name ?? slug;
  const status = h("div");
  const setStatus = async (next: "active" | "inactive") => {
    try {
      await api("PATCH", `orgs/${enc(org)}/workflows/${enc(w.slug)}/`, { body: { status: next } });
      flash(
        "success",
        next === "active"
          ? "Workflow activated: it accepts runs again."
          : "Workflow deactivated: new runs are refused.",
      );
      reload();
    } catch (e) {
      status.replaceChildren(errorNotice(e));
    }
  };
  const remove = async () => {
    const ok = await confirmDialog({
      title: `Delete “${w.name}”?`,
      message: h(
        "p",
        null,
        "The workflow disappears and its slug becomes free. Its runs and their results stay readable.",
      ),
      confirm: "Delete workflow",
      danger: true,
    });
    if (!ok) return;
    try {
      await api("DELETE", `orgs/${enc(org)}/workflows/${enc(w.slug)}/`);
      flash("success", `Workflow “${w.name}” deleted.`);
      navigate(`/app/orgs/${org}/workflows/`);
    } catch (e) {
      status.replaceChildren(errorNotice(e));
    }
  };
  const author = can(org, "author");
  const actions = [
    can(org, "executor") && w.status === "active"
      ? h("a", { class: "button", href: `${base}run` }, "Run")
      : null,
    author ? h("a", { class: "button secondary", href: `${base}edit` }, "Edit") : null,
    author
      ? w.status === "active"
        ? h(
            "button",
            { type: "button", class: "button secondary", onclick: () => setStatus("inactive") },
            "Deactivate",
          )
        : h("button", { type: "button", class: "button", onclick: () => setStatus("active") }, "Activate")
      : null,
    author ? h("button", { type: "button", class: "button danger", onclick: remove }, "Delete") : null,
  ];
  const steps = w.steps ?? [];
  return {
    title: w.name,
    body: h(
      "div",
      null,
      h("p", { class: "crumbs" }, h("a", { href: `/app/orgs/${org}/workflows/` }, "Workflows"), " / "),
      heading(w.name, ...actions),
      status,
      w.status === "inactive"
        ? notice(
            "warning",
            h(
              "p",
              null,
              "This workflow is inactive: run requests are refused (409 workflow_inactive).",
              author ? " Activate it to accept runs again." : "",
            ),
          )
        : null,
      w.description ? h("p", { class: "lead" }, w.description) : null,
      h(
        "dl",
        { class: "meta" },
        h("dt", null, "Status"),
        h("dd", null, badge(w.status)),
        h("dt", null, "Slug"),
        h("dd", null, h("code", null, w.slug), " (id ", String(w.id), ")"),
        h("dt", null, "File types"),
        h("dd", null, w.allowed_file_types.join(", ")),
        h("dt", null, "Fail fast"),
        h(
          "dd",
          null,
          w.fail_fast ? "Yes: later steps are skipped after a failed one" : "No: every step runs",
        ),
        h("dt", null, "Version"),
        h("dd", null, String(w.version), " · ", h("a", { href: `${base}versions/` }, "History")),
        h("dt", null, "Updated"),
        h("dd", null, time(w.updated_at)),
      ),
      h("h2", null, `Steps (${steps.length})`),
      steps.length
        ? h(
            "ol",
            { class: "steps" },
            steps.map((s) =>
              h(
                "li",
                null,
                h(
                  "div",
                  { class: "step-head" },
                  h("strong", null, `${s.order}. ${s.name}`),
                  " · ",
                  name(s.validator),
                  s.is_active ? null : [" ", badge("inactive", "inactive step")],
                ),
                configPreview(s.config),
              ),
            ),
          )
        : notice("warning", h("p", null, "This workflow has no steps, so it cannot accept runs yet.")),
      h("h2", null, "Recent runs"),
      runs.results.length
        ? [
            table(RUN_HEAD, runRows(org, runs.results), "Recent runs"),
            h(
              "p",
              null,
              h("a", { href: `/app/orgs/${org}/runs/?workflow=${w.slug}` }, `All runs of ${w.name} →`),
            ),
          ]
        : empty("No runs yet."),
    ),
  };
}
