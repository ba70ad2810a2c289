// The sign-in page: username and password; the session cookie is set by the server.
import { ApiError } from "../api.ts";
import { field, h } from "../dom.ts";
import { signIn } from "../session.ts";
import { busy, errorNotice, notice } from "../ui.ts";

export function loginView(message: HTMLElement | null, done: () => void): HTMLElement {
  const username = h("input", {
    name: "username",
    autocomplete: "username",
    required: true,
    maxlength: "200",
    autocapitalize: "none",
    spellcheck: "false",
  });
  const password = h("input", {
    name: "password",
    type: "password",
    autocomplete: "current-password",
    required: true,
  });
  const submit = h("button", { type: "submit", class: "button" }, "Sign in");
  const status = h("div", { class: "form-status" });
  const form = h(
    "form",
    {
      class: "card",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        status.replaceChildren();
        try {
          await busy(submit, () => signIn(username.value.trim(), password.value));
          done();
        } catch (err) {
          if (err instanceof ApiError && err.status === 429)
            status.append(notice("error", h("p", null, err.message)));
          else status.append(errorNotice(err));
          password.value = "";
          password.focus();
        }
      },
    },
    h("h1", { tabindex: "-1" }, "Sign in to Assay"),
    message,
    status,
    field("Username", username),
    field("Password", password),
    h("div", { class: "actions" }, submit),
  );
  return h(
    "main",
    { id: "main", class: "login", tabindex: "-1" },
    h("p", { class: "brand big" }, h("span", { "aria-hidden": "true" }, "◆"), " Assay"),
    form,
    h(
      "p",
      { class: "muted small" },
      "Validation workflows over a REST API. ",
      h("a", { href: "/api/docs" }, "API documentation"),
    ),
  );
}
