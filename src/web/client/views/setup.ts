// The first run: while the instance has no user, this form stands where the sign-in form would
// (src/web/setup-routes.ts). It creates the first administrator with a password and the first
// organization, guarded by the one-time setup code the server printed in its log, then signs in.
import { api, setCsrf } from "../api.ts";
import { field, h } from "../dom.ts";
import { loadSession } from "../session.ts";
import { clearErrors, showErrors } from "../forms.ts";
import { busy } from "../ui.ts";

export function setupView(done: (org: string) => void): HTMLElement {
  const input = (name: string, attrs: Record<string, string | boolean> = {}) =>
    h("input", {
      name,
      id: `setup-${name}`,
      "data-field": name,
      required: true,
      autocapitalize: "none",
      spellcheck: "false",
      ...attrs,
    });
  const code = input("setup_code", { autocomplete: "off", maxlength: "100", placeholder: "ABCD-EFGH" });
  const username = input("username", { autocomplete: "username", maxlength: "64" });
  // No minlength/maxlength where the server counts characters (code points; a password's least
  // length in its NFKC form) and a browser UTF-16 code units: its message next to the field says.
  const password = input("password", { type: "password", autocomplete: "new-password" });
  const orgSlug = input("org_slug", { maxlength: "63", pattern: "[a-z][a-z0-9\\-]{0,62}" });
  const orgName = input("org_name", { required: false });
  const submit = h("button", { type: "submit", class: "button" }, "Create and sign in");
  // The server's errors[] go next to the fields they name (aria-invalid, aria-describedby), the
  // summary above them; they were a list at the top, tied to no field.
  const fields = h(
    "div",
    null,
    field("Setup code", code),
    field("Administrator username", username),
    field("Password (8 characters or more)", password),
    field("Organization slug (lowercase letters, digits, -)", orgSlug),
    field("Organization name (optional)", orgName),
  );
  const form = h(
    "form",
    {
      class: "card",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        clearErrors(fields);
        try {
          await busy(submit, async () => {
            const r = await api<{ csrf_token: string; org_slug: string }>("POST", "setup/", {
              quiet401: true,
              body: {
                setup_code: code.value.trim(),
                username: username.value.trim(),
                password: password.value,
                org_slug: orgSlug.value.trim(),
                ...(orgName.value.trim() ? { org_name: orgName.value.trim() } : {}),
              },
            });
            setCsrf(r.csrf_token);
            await loadSession();
            done(r.org_slug);
          });
        } catch (err) {
          showErrors(fields, err);
        }
      },
    },
    h("h1", { tabindex: "-1" }, "Set up Assay"),
    h(
      "p",
      null,
      "This instance has no user yet. Create the first administrator and organization. The setup code is in the log of the running server (printed when it started).",
    ),
    fields,
    h("div", { class: "actions" }, submit),
  );
  return h(
    "main",
    { id: "main", class: "login", tabindex: "-1" },
    h("p", { class: "brand big" }, h("span", { "aria-hidden": "true" }, "◆"), " Assay"),
    form,
  );
}
