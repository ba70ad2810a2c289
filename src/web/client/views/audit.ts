// The org's audit log (Admin): who changed what, when and from where, newest first, with the
// API's filters and its CSV / JSON Lines export (same-origin downloads: the session cookie
// authenticates a GET). Verifying the chain is `assay audit verify` (docs/audit.md).
import { showHiddenControls } from "../../../lib/text.ts";
import { ApiError, type Page, enc, get, qs } from "../api.ts";
import { type Child, field, h } from "../dom.ts";
import { refusedFilters, showErrors } from "../forms.ts";
import { type Ctx, type Rendered, navigate } from "../router.ts";
import { can } from "../session.ts";
import { emptyPage, heading, pager, table, time } from "../ui.ts";

interface Entry {
  seq: number;
  created_at: string;
  actor: {
    type: string;
    username: string | null;
    token_id: number | null;
    session_id: number | null;
    ip: string | null;
  };
  action: string;
  target: { type: string; id: string | null; name: string | null };
  changes: Record<string, unknown> | null;
}

const FILTERS = ["actor", "action", "target_type", "target_id"] as const;

function who(e: Entry): Child {
  const name = e.actor.username ?? e.actor.type;
  const via =
    e.actor.token_id !== null
      ? `token ${e.actor.token_id}`
      : e.actor.session_id !== null
        ? "web"
        : e.actor.type;
  return [name, h("div", { class: "muted" }, [via, e.actor.ip ? ` · ${e.actor.ip}` : ""].join(""))];
}

function changes(e: Entry): Child {
  if (!e.changes) return h("span", { class: "muted" }, "—");
  return h(
    "details",
    null,
    h("summary", null, "Details"),
    h("pre", { class: "code-block" }, showHiddenControls(JSON.stringify(e.changes, null, 2))),
  );
}

export async function auditView(ctx: Ctx): Promise<Rendered> {
  const org = ctx.params.org!;
  // The app's one "Not allowed" page (main.ts), with its heading for focus after navigation.
  if (!can(org, "admin"))
    throw new ApiError(403, "permission_denied", "The audit log is for the org's Admins.");
  const page = Math.max(1, Number(ctx.query.get("page")) || 1);
  const size = 50;
  const filters = Object.fromEntries(FILTERS.map((k) => [k, ctx.query.get(k)])) as Record<
    (typeof FILTERS)[number],
    string | null
  >;
  const api = `orgs/${enc(org)}/audit/`;
  // A refused filter (too long) is shown next to its field in the form, the values kept: not an
  // error page without the form.
  const [data, refused] = await refusedFilters(
    get<Page<Entry>>(`${api}${qs({ ...filters, page, page_size: size })}`, ctx.signal),
  );
  const inputs = FILTERS.map((k) =>
    h("input", { name: k, value: filters[k] ?? "", autocomplete: "off", "data-field": k }),
  );
  const form = h(
    "form",
    {
      class: "filters",
      role: "search",
      "aria-label": "Filter the audit log",
      onsubmit: (e: Event) => {
        e.preventDefault();
        navigate(
          `/app/orgs/${org}/audit/${qs(Object.fromEntries(inputs.map((i) => [i.name, i.value || null])))}`,
        );
      },
    },
    field("Actor (username)", inputs[0]!),
    field("Action (e.g. workflow.*)", inputs[1]!),
    field("Target type", inputs[2]!),
    field("Target id", inputs[3]!),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "button" }, "Apply filters"),
      h("a", { href: `/app/orgs/${org}/audit/`, class: "button secondary" }, "Clear"),
    ),
  );
  const download = (format: "csv" | "jsonl", label: string) =>
    h(
      "a",
      { class: "button secondary", href: `/api/v1/${api}${qs({ ...filters, format })}`, download: "" },
      label,
    );
  if (refused) showErrors(form, refused);
  return {
    title: "Audit log",
    body: h(
      "div",
      null,
      heading("Audit log", download("csv", "Export CSV"), download("jsonl", "Export JSON Lines")),
      h(
        "p",
        { class: "lead" },
        "Every change in this organization, written with the change itself. Entries are chained by SHA-256 (docs/audit.md).",
      ),
      form,
      !data
        ? null
        : data.results.length
          ? table(
              ["When", "Who", "Action", "Target", "Changes"],
              data.results.map((e) => [
                time(e.created_at),
                who(e),
                h("code", null, e.action),
                [e.target.type, " ", e.target.name ?? e.target.id ?? ""],
                changes(e),
              ]),
              "Audit log",
            )
          : emptyPage(data.count, "No entries match these filters."),
      data && pager(data.count, page, size, (p) => `/app/orgs/${org}/audit/${qs({ ...filters, page: p })}`),
    ),
  };
}
