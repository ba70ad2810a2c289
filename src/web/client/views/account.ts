// Your account: who you are, your organizations, and changing your password.
import { api } from "../api.ts";
import { field, h } from "../dom.ts";
import { clearErrors, localError, showErrors } from "../forms.ts";
import type { Rendered } from "../router.ts";
import { loadSession, me } from "../session.ts";
import { busy, heading, table, time, told } from "../ui.ts";

export async function accountView(): Promise<Rendered> {
  const user = me();
  const pw = (name: string, auto: string) =>
    h("input", {
      type: "password",
      name,
      autocomplete: auto,
      required: true,
      "data-field": name,
    });
  const current = pw("current_password", "current-password");
  const next = pw("new_password", "new-password");
  const again = pw("confirm_password", "new-password");
  const submit = h("button", { type: "submit", class: "button" }, "Change password");
  const form: HTMLFormElement = h(
    "form",
    {
      class: "card narrow",
      "aria-labelledby": "pw-title",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        clearErrors(form);
        if (next.value !== again.value) {
          showErrors(
            form,
            localError([
              { field: "confirm_password", code: "mismatch", message: "The two new passwords differ." },
            ]),
          );
          return;
        }
        try {
          await busy(submit, () =>
            api("POST", "users/me/password/", {
              body: { current_password: current.value, new_password: next.value },
            }),
          );
          // The server replaced this browser's session (new cookie): read its new CSRF token.
          await loadSession();
          form.reset();
          form.prepend(
            h(
              "div",
              { class: "form-errors" },
              told("success", "Password changed. Your other browser sessions were signed out."),
            ),
          );
        } catch (err) {
          showErrors(form, err);
        }
      },
    },
    h("h2", { id: "pw-title" }, "Change password"),
    // For password managers: which account this password belongs to.
    h("input", {
      type: "text",
      name: "username",
      autocomplete: "username",
      value: user.username,
      hidden: true,
    }),
    field("Current password", current),
    field("New password", next, "At least 8 characters."),
    field("New password again", again),
    h("div", { class: "actions" }, submit),
  );
  return {
    title: "Account",
    body: h(
      "div",
      null,
      heading(`Account: ${user.username}`),
      h(
        "dl",
        { class: "meta" },
        h("dt", null, "Name"),
        h("dd", null, user.name || "—"),
        h("dt", null, "Email"),
        h("dd", null, user.email || "—"),
        h("dt", null, "Instance administrator"),
        h("dd", null, user.is_admin ? "Yes" : "No"),
        h("dt", null, "Member since"),
        h("dd", null, time(user.created_at)),
      ),
      h("h2", null, "Organizations"),
      table(
        ["Organization", "Role", "Status"],
        user.orgs.map((o) => [
          h("a", { href: `/app/orgs/${o.org_slug}/workflows/` }, o.name),
          o.role,
          o.status,
        ]),
        "Your organizations",
      ),
      form,
    ),
  };
}
