// Instance administration (instance admins only): users, organizations, token policies.
import { ApiError, type Page, api, enc, get } from "../api.ts";
import { type Child, checkbox, field, h } from "../dom.ts";
import { showErrors } from "../forms.ts";
import { type Ctx, type Rendered, reload } from "../router.ts";
import { me } from "../session.ts";
import type { Org, User } from "../types.ts";
import { badge, busy, confirmDialog, errorNotice, flash, heading, pager, table, time } from "../ui.ts";

function tabs(path: string): HTMLElement {
  const tab = (href: string, label: string) =>
    h("li", null, h("a", { href, "aria-current": path === href ? "page" : null }, label));
  return h(
    "nav",
    { class: "tabs", "aria-label": "Administration" },
    h(
      "ul",
      null,
      tab("/app/admin/", "Users"),
      tab("/app/admin/orgs/", "Organizations"),
      tab("/app/admin/settings/", "Token policy"),
    ),
  );
}

// One page of a list at a time, with Previous/Next, as the other lists: the API gives at most 200
// items a request, and a page that asked for 200 hid every row past the 200th.
const SIZE = 50;
const pageNumber = (ctx: Ctx) => Math.max(1, Number(ctx.query.get("page")) || 1);

function guard() {
  if (!me().is_admin)
    throw new ApiError(403, "permission_denied", "This page needs an instance administrator.");
}

const page = (title: string, path: string, status: HTMLElement, ...body: Child[]): Rendered => ({
  title,
  body: h("div", null, heading("Administration"), tabs(path), status, ...body),
});

/** A confirmed action that reloads the page with a message, or shows the error. */
function action(
  status: HTMLElement,
  label: string,
  confirm: { title: string; text: string } | null,
  run: () => Promise<unknown>,
  done: string,
  danger = false,
) {
  return h(
    "button",
    {
      type: "button",
      class: `button small ${danger ? "danger" : "secondary"}`,
      onclick: async () => {
        if (
          confirm &&
          !(await confirmDialog({
            title: confirm.title,
            message: h("p", null, confirm.text),
            confirm: label,
            danger,
          }))
        )
          return;
        try {
          await run();
          flash("success", done);
          reload();
        } catch (e) {
          status.replaceChildren(errorNotice(e));
        }
      },
    },
    label,
  );
}

function createForm(
  title: string,
  fields: Child[],
  submitLabel: string,
  send: () => Promise<unknown>,
  done: () => string,
): HTMLFormElement {
  const submit = h("button", { type: "submit", class: "button" }, submitLabel);
  const form: HTMLFormElement = h(
    "form",
    {
      class: "card",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          await busy(submit, send);
          flash("success", done());
          reload();
        } catch (err) {
          showErrors(form, err);
        }
      },
    },
    h("h2", null, title),
    h("div", { class: "grid3" }, fields),
    h("div", { class: "actions" }, submit),
  );
  return form;
}

export async function adminUsersView(ctx: Ctx): Promise<Rendered> {
  guard();
  const n = pageNumber(ctx);
  const data = await get<Page<User>>(`admin/users/?page=${n}&page_size=${SIZE}`, ctx.signal);
  const status = h("div");
  const input = (name: string, attrs: Record<string, unknown> = {}) =>
    h("input", { name, "data-field": name, autocomplete: "off", ...attrs });
  const username = input("username", { required: true, maxlength: "64" });
  const password = input("password", { type: "password", autocomplete: "new-password" });
  const name = input("name");
  // Not type="email": browsers refuse addresses the server accepts (a non-ASCII local part such
  // as `josé@…`, RFC 6531); the server's own check answers next to the field (emailProblem).
  const email = input("email", { type: "text", inputmode: "email", spellcheck: "false" });
  const isAdmin = checkbox("Instance administrator", { "data-field": "is_admin" });
  const form = createForm(
    "Create a user",
    [
      field("Username", username),
      field("Password", password, "Empty: the user signs in with API tokens only."),
      field("Name", name),
      field("Email", email),
      isAdmin,
    ],
    "Create user",
    () => {
      const body: Record<string, unknown> = {
        username: username.value.trim(),
        is_admin: (isAdmin.querySelector("input") as HTMLInputElement).checked,
      };
      if (password.value) body.password = password.value;
      if (name.value.trim()) body.name = name.value.trim();
      if (email.value.trim()) body.email = email.value.trim();
      return api("POST", "admin/users/", { body });
    },
    () => `User ${username.value.trim()} created.`,
  );
  return page(
    "Users",
    "/app/admin/",
    status,
    table(
      ["Username", "Name", "Email", "Admin", "Created", ""],
      data.results.map((u) => [
        u.username,
        u.name || "—",
        u.email || "—",
        u.is_admin ? "Yes" : "No",
        time(u.created_at),
        u.id === me().id
          ? ""
          : action(
              status,
              "Delete",
              {
                title: `Delete user ${u.username}?`,
                text: "Their tokens and sessions stop working at once; their runs stay.",
              },
              () => api("DELETE", `admin/users/${enc(u.username)}/`),
              `User ${u.username} deleted.`,
              true,
            ),
      ]),
      "Users",
    ),
    pager(data.count, n, SIZE, (p) => `/app/admin/?page=${p}`),
    form,
  );
}

export async function adminOrgsView(ctx: Ctx): Promise<Rendered> {
  guard();
  const n = pageNumber(ctx);
  const data = await get<Page<Org>>(`admin/orgs/?page=${n}&page_size=${SIZE}`, ctx.signal);
  const status = h("div");
  const slug = h("input", {
    name: "org_slug",
    required: true,
    maxlength: "63",
    class: "mono",
    "data-field": "org_slug",
  });
  const name = h("input", { name: "name", "data-field": "name" });
  // The org's first Admin (the API defaults to the caller when empty).
  const admin = h("input", { name: "admin", maxlength: "64", "data-field": "admin", placeholder: "you" });
  const form = createForm(
    "Create an organization",
    [field("Slug", slug), field("Name", name), field("First admin (username)", admin)],
    "Create organization",
    () =>
      api("POST", "admin/orgs/", {
        body: {
          org_slug: slug.value.trim(),
          ...(name.value.trim() ? { name: name.value.trim() } : {}),
          ...(admin.value.trim() ? { admin: admin.value.trim() } : {}),
        },
      }),
    () => `Organization ${slug.value.trim()} created with ${admin.value.trim() || "you"} as its admin.`,
  );
  const row = (o: Org) => {
    const s = enc(o.org_slug);
    const state = o.deleted_at ? badge("canceled", "deleted") : badge(o.status);
    const acts =
      o.deleted_at || o.status === "suspended"
        ? [
            action(
              status,
              "Restore",
              null,
              () => api("POST", `admin/orgs/${s}/restore/`),
              `${o.org_slug} restored.`,
            ),
          ]
        : [
            action(
              status,
              "Suspend",
              { title: `Suspend ${o.org_slug}?`, text: "Its members get 403 until it is restored." },
              () => api("POST", `admin/orgs/${s}/suspend/`),
              `${o.org_slug} suspended.`,
            ),
            action(
              status,
              "Delete",
              {
                title: `Delete ${o.org_slug}?`,
                text: "A soft delete: members lose access; an administrator can restore it.",
              },
              () => api("DELETE", `admin/orgs/${s}/`),
              `${o.org_slug} deleted.`,
              true,
            ),
          ];
    return [
      h("code", null, o.org_slug),
      o.name,
      state,
      time(o.created_at),
      h("div", { class: "actions" }, acts),
    ];
  };
  return page(
    "Organizations",
    "/app/admin/orgs/",
    status,
    table(["Slug", "Name", "Status", "Created", ""], data.results.map(row), "Organizations"),
    pager(data.count, n, SIZE, (p) => `/app/admin/orgs/?page=${p}`),
    form,
  );
}

interface Policy {
  token_default_ttl_days: number | null;
  token_max_ttl_days: number | null;
  token_rotation_days: number | null;
}

export async function adminSettingsView(ctx: Ctx): Promise<Rendered> {
  guard();
  const cur = await get<Policy>("admin/settings/", ctx.signal);
  const status = h("div");
  const num = (k: keyof Policy) =>
    h("input", {
      type: "number",
      min: "1",
      max: "36500",
      name: k,
      "data-field": k,
      value: cur[k] == null ? "" : String(cur[k]),
    });
  const inputs = {
    token_default_ttl_days: num("token_default_ttl_days"),
    token_max_ttl_days: num("token_max_ttl_days"),
    token_rotation_days: num("token_rotation_days"),
  };
  const form = createForm(
    "API token policy",
    [
      field(
        "Default lifetime (days)",
        inputs.token_default_ttl_days,
        "For tokens created without an expiry. Empty: never expire.",
      ),
      field(
        "Maximum lifetime (days)",
        inputs.token_max_ttl_days,
        "Longer requests are refused; older tokens stop working.",
      ),
      field(
        "Rotation period (days)",
        inputs.token_rotation_days,
        "Older tokens must be replaced; a warning header comes first.",
      ),
    ],
    "Save policy",
    () =>
      api("PATCH", "admin/settings/", {
        body: Object.fromEntries(
          Object.entries(inputs).map(([k, el]) => [k, el.value === "" ? null : Number(el.value)]),
        ),
      }),
    () => "Token policy saved.",
  );
  return page("Token policy", "/app/admin/settings/", status, form);
}
