// Org members and their roles. Everyone in the org can see the list; only an Admin is offered
// adding, changing roles and removing (the server keeps the last admin).
import { type Page, api, enc, get } from "../api.ts";
import { field, h, mount, option } from "../dom.ts";
import { showErrors } from "../forms.ts";
import { type Ctx, type Rendered, reload } from "../router.ts";
import { can, me, refreshMe } from "../session.ts";
import { type Member, ROLES } from "../types.ts";
import { busy, confirmDialog, errorNotice, flash, heading, notice, pager, table, time } from "../ui.ts";

const ROLE_HELP =
  "Viewer reads; Executor also starts runs; Author also edits workflows; Admin also manages members and webhooks.";

export async function membersView(ctx: Ctx): Promise<Rendered> {
  const org = ctx.params.org!;
  // A page at a time with Previous/Next: one request of 200 hid every member past the 200th.
  const page = Math.max(1, Number(ctx.query.get("page")) || 1);
  const size = 50;
  const data = await get<Page<Member>>(
    `orgs/${enc(org)}/members/?page=${page}&page_size=${size}`,
    ctx.signal,
  );
  const admin = can(org, "admin");
  const status = h("div");
  const base = `orgs/${enc(org)}/members/`;
  const after = async (text: string, username: string) => {
    if (username === me().username) await refreshMe();
    flash("success", text);
    reload();
  };

  const roleCell = (m: Member) => {
    if (!admin) return m.role;
    const sel = h(
      "select",
      { "aria-label": `Role of ${m.username}`, value: m.role },
      ROLES.map((r) => option(r, r)),
    );
    // An explicit button: choosing in the list (arrow keys included) changes nothing yet.
    const save = h(
      "button",
      {
        type: "button",
        class: "button small secondary",
        hidden: true,
        "aria-label": `Save the role of ${m.username}`,
        onclick: async () => {
          try {
            await api("PATCH", `${base}${enc(m.username)}/`, { body: { role: sel.value } });
            await after(`${m.username} is now ${sel.value}.`, m.username);
          } catch (e) {
            sel.value = m.role;
            save.hidden = true;
            mount(status, errorNotice(e));
          }
        },
      },
      "Save",
    );
    sel.addEventListener("change", () => {
      save.hidden = sel.value === m.role;
    });
    return h("div", { class: "inline" }, sel, save);
  };
  const removeButton = (m: Member) =>
    h(
      "button",
      {
        type: "button",
        class: "button small danger",
        "aria-label": `Remove ${m.username}`,
        onclick: async () => {
          const ok = await confirmDialog({
            title: `Remove ${m.username}?`,
            message: h(
              "p",
              null,
              `${m.username} loses access to ${org} at once. Their API tokens stay valid for other organizations.`,
            ),
            confirm: "Remove member",
            danger: true,
          });
          if (!ok) return;
          try {
            await api("DELETE", `${base}${enc(m.username)}/`);
            await after(`${m.username} was removed.`, m.username);
          } catch (e) {
            mount(status, errorNotice(e));
          }
        },
      },
      "Remove",
    );

  let addForm: HTMLFormElement | null = null;
  if (admin) {
    const username = h("input", {
      name: "username",
      required: true,
      maxlength: "64",
      autocomplete: "off",
      "data-field": "username",
    });
    const role = h(
      "select",
      { name: "role", "data-field": "role", value: "viewer" },
      ROLES.map((r) => option(r, r)),
    );
    const submit = h("button", { type: "submit", class: "button" }, "Add member");
    const form: HTMLFormElement = h(
      "form",
      {
        class: "card inline-form",
        "aria-labelledby": "add-member-title",
        onsubmit: async (e: Event) => {
          e.preventDefault();
          try {
            await busy(submit, () =>
              api("POST", base, { body: { username: username.value.trim(), role: role.value } }),
            );
            await after(`${username.value.trim()} was added as ${role.value}.`, username.value.trim());
          } catch (err) {
            showErrors(form, err);
          }
        },
      },
      h("h2", { id: "add-member-title" }, "Add a member"),
      h(
        "div",
        { class: "grid2" },
        field("Username", username, "An existing user of this instance."),
        field("Role", role),
      ),
      h("div", { class: "actions" }, submit),
    );
    addForm = form;
  }

  return {
    title: "Members",
    body: h(
      "div",
      null,
      heading("Members"),
      h("p", { class: "lead" }, ROLE_HELP),
      status,
      admin ? null : notice("info", h("p", null, "Only an admin of this organization can change members.")),
      table(
        admin
          ? ["Username", "Name", "Role", "Member since", ""]
          : ["Username", "Name", "Role", "Member since"],
        data.results.map((m) => {
          const row = [m.username, m.name || "—", roleCell(m), time(m.created_at)];
          return admin ? [...row, removeButton(m)] : row;
        }),
        "Members",
      ),
      pager(data.count, page, size, (p) => `/app/orgs/${org}/members/?page=${p}`),
      addForm,
    ),
  };
}
