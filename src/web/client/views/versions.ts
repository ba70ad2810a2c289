// A workflow's history: every version (who saved it, when, restored from which), one version's
// whole definition with what changed against another, and restore (Author). Runs link here: the
// page of the version a run executed (by workflow id, so the link survives a slug change).
import { showHiddenControls } from "../../../lib/text.ts";
import { type Page, api, enc, get } from "../api.ts";
import { type Child, h } from "../dom.ts";
import { type Ctx, type Rendered, navigate } from "../router.ts";
import { can } from "../session.ts";
import type { Step } from "../types.ts";
import {
  badge,
  busy,
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

interface VersionMeta {
  version: number;
  created_at: string;
  created_by: { id: number | null; username: string | null } | null;
  restored_from: number | null;
  is_current: boolean;
  step_count?: number | null;
}
interface Version extends VersionMeta {
  workflow: { id: number; slug: string };
  settings_recorded: boolean;
  slug: string;
  name: string | null;
  description: string | null;
  status: string | null;
  retention_days: number | null;
  allowed_file_types: string[];
  fail_fast: boolean;
  steps: Step[];
}
interface Change {
  path: string;
  op: "added" | "removed" | "changed";
  before?: unknown;
  after?: unknown;
  step: { id: number; name: string } | null;
}
interface Diff {
  from: { version: number };
  to: { version: number };
  changes: Change[];
  truncated: boolean;
  unrecorded: string[];
}

const who = (v: VersionMeta) => v.created_by?.username ?? "—";
const value = (v: unknown): Child =>
  v === undefined
    ? h("span", { class: "muted" }, "—")
    : h("code", { class: "diff-value" }, showHiddenControls(JSON.stringify(v)));
const pagePath = (org: string, wf: string | number, n?: number) =>
  `/app/orgs/${org}/workflows/${wf}/versions/${n === undefined ? "" : `${n}/`}`;

/** Restores version n after a confirmation; goes to the new version's page. */
async function restore(org: string, wfId: number, n: number, button: HTMLButtonElement, status: HTMLElement) {
  const ok = await confirmDialog({
    title: `Restore version ${n}?`,
    message: h(
      "p",
      null,
      `A new version is saved with version ${n}'s settings and steps. The slug and the active/inactive state stay as they are; the history keeps every version.`,
    ),
    confirm: "Restore",
  });
  if (!ok) return;
  try {
    const v = await busy(button, () =>
      api<Version>("POST", `orgs/${enc(org)}/workflows/${wfId}/versions/${n}/restore/`),
    );
    flash("success", `Version ${n} restored as version ${v.version}.`);
    navigate(pagePath(org, wfId, v.version));
  } catch (e) {
    status.replaceChildren(errorNotice(e));
  }
}

export async function versionListView(ctx: Ctx): Promise<Rendered> {
  const { org, wf } = ctx.params as { org: string; wf: string };
  const page = Math.max(1, Number(ctx.query.get("page")) || 1);
  const size = 50;
  const data = await get<Page<VersionMeta> & { results: VersionMeta[] }>(
    `orgs/${enc(org)}/workflows/${enc(wf)}/versions/?page=${page}&page_size=${size}`,
    ctx.signal,
  );
  const w = await get<{ id: number; slug: string; name: string }>(
    `orgs/${enc(org)}/workflows/${enc(wf)}/`,
    ctx.signal,
  );
  const rows = data.results.map((v) => [
    h("a", { href: pagePath(org, w.id, v.version) }, `Version ${v.version}`),
    time(v.created_at),
    who(v),
    v.restored_from === null ? "" : `Restored from ${v.restored_from}`,
    String(v.step_count ?? "—"),
    v.is_current ? badge("active", "current") : "",
    v.version > 1
      ? h("a", { href: `${pagePath(org, w.id, v.version)}#changes` }, `Changes from ${v.version - 1}`)
      : "",
  ]);
  return {
    title: `History of ${w.name}`,
    body: h(
      "div",
      null,
      h(
        "p",
        { class: "crumbs" },
        h("a", { href: `/app/orgs/${org}/workflows/` }, "Workflows"),
        " / ",
        h("a", { href: `/app/orgs/${org}/workflows/${w.slug}/` }, w.name),
        " / ",
      ),
      heading(`History of ${w.name}`),
      h("p", { class: "lead" }, "Every save makes a version. Runs name the version they ran."),
      rows.length
        ? table(
            [
              "Version",
              "Saved",
              "By",
              { hidden: "Restored from" },
              "Steps",
              { hidden: "Current" },
              "Compare",
            ],
            rows,
            "Versions",
          )
        : emptyPage(data.count, "No versions."),
      pager(data.count, page, size, (p) => `${pagePath(org, wf)}?page=${p}`),
    ),
  };
}

function diffTable(d: Diff): Child {
  if (!d.changes.length)
    return notice("info", h("p", null, `Version ${d.to.version} equals version ${d.from.version}.`));
  return [
    table(
      ["Field", "Change", `Version ${d.from.version}`, `Version ${d.to.version}`],
      d.changes.map((c) => [
        [
          h("code", null, c.path),
          c.step ? h("div", { class: "muted" }, `step “${c.step.name}” (id ${c.step.id})`) : null,
        ],
        h("span", { class: `diff-op diff-${c.op}` }, c.op),
        value(c.before),
        value(c.after),
      ]),
      `Changes from version ${d.from.version} to ${d.to.version}`,
    ),
    d.truncated
      ? notice(
          "warning",
          h(
            "p",
            null,
            "Not every change is shown: the list stops after 1000, or once their paths reach 1 MiB.",
          ),
        )
      : null,
    d.unrecorded.length
      ? notice(
          "info",
          h(
            "p",
            null,
            `Not recorded for the older version (saved before settings were kept): ${d.unrecorded.join(", ")}.`,
          ),
        )
      : null,
  ];
}

export async function versionDetailView(ctx: Ctx): Promise<Rendered> {
  const { org, wf, n } = ctx.params as { org: string; wf: string; n: string };
  const base = `orgs/${enc(org)}/workflows/${enc(wf)}/versions/${enc(n)}/`;
  const v = await get<Version>(base, ctx.signal);
  const against = ctx.query.get("against") ?? (v.version > 1 ? String(v.version - 1) : null);
  const diff = against ? await get<Diff>(`${base}diff/?against=${enc(against)}`, ctx.signal) : null;
  const status = h("div");
  const restoreButton =
    can(org, "author") && !v.is_current
      ? h("button", { type: "button", class: "button secondary" }, `Restore version ${v.version}`)
      : null;
  if (restoreButton)
    restoreButton.onclick = () => void restore(org, v.workflow.id, v.version, restoreButton, status);
  const title = `${v.name ?? v.slug} · version ${v.version}`;
  return {
    title,
    body: h(
      "div",
      null,
      h(
        "p",
        { class: "crumbs" },
        h("a", { href: `/app/orgs/${org}/workflows/` }, "Workflows"),
        " / ",
        h("a", { href: `/app/orgs/${org}/workflows/${v.workflow.slug}/` }, v.workflow.slug),
        " / ",
        h("a", { href: pagePath(org, v.workflow.id) }, "History"),
        " / ",
      ),
      heading(`Version ${v.version}`, v.is_current ? badge("active", "current") : null, restoreButton),
      status,
      h(
        "dl",
        { class: "meta" },
        h("dt", null, "Saved"),
        h("dd", null, time(v.created_at), " by ", who(v)),
        v.restored_from === null
          ? null
          : [h("dt", null, "Restored from"), h("dd", null, `version ${v.restored_from}`)],
        h("dt", null, "Name"),
        h("dd", null, v.name ?? h("span", { class: "muted" }, "not recorded")),
        h("dt", null, "Slug"),
        h("dd", null, h("code", null, v.slug)),
        h("dt", null, "File types"),
        h("dd", null, v.allowed_file_types.join(", ")),
        h("dt", null, "Fail fast"),
        h("dd", null, v.fail_fast ? "Yes" : "No"),
      ),
      h("h2", { id: "changes" }, diff ? `Changes from version ${diff.from.version}` : "Changes"),
      diff ? diffTable(diff) : empty("The first version: nothing before it to compare with."),
      h("h2", null, `Steps (${v.steps.length})`),
      v.steps.length
        ? h(
            "ol",
            { class: "steps" },
            v.steps.map((s) =>
              h(
                "li",
                null,
                h(
                  "div",
                  { class: "step-head" },
                  h("strong", null, `${s.order}. ${s.name}`),
                  " · ",
                  s.validator,
                  s.is_active ? null : [" ", badge("inactive", "inactive step")],
                ),
                h(
                  "details",
                  null,
                  h("summary", null, "Configuration"),
                  h("pre", { class: "code-block" }, showHiddenControls(JSON.stringify(s.config, null, 2))),
                ),
              ),
            ),
          )
        : empty("No steps."),
    ),
  };
}
