// Settings → API tokens: list, create (the value is shown once, with a copy button), revoke.
import { type Page, api, get } from "../api.ts";
import { field, h, mount, option } from "../dom.ts";
import { showErrors } from "../forms.ts";
import type { Ctx, Rendered } from "../router.ts";
import type { Token } from "../types.ts";
import {
  badge,
  busy,
  confirmDialog,
  emptyPage,
  errorNotice,
  heading,
  notice,
  pager,
  table,
  time,
  told,
} from "../ui.ts";

const EXPIRY = [
  ["", "Instance default"],
  ["7", "7 days"],
  ["30", "30 days"],
  ["90", "90 days"],
  ["365", "1 year"],
  ["custom", "Custom…"],
] as const;

function statusOf(t: Token) {
  if (t.revoked_at) return badge("revoked");
  if (t.expires_at && Date.parse(t.expires_at) <= Date.now()) return badge("expired");
  return badge("active");
}

/** Copies text; falls back to selecting it where the Clipboard API is unavailable (plain HTTP). */
export function copyButton(input: HTMLInputElement, label = "Copy"): HTMLElement {
  const said = h("span", { class: "copy-status", role: "status" });
  const btn = h(
    "button",
    {
      type: "button",
      class: "button secondary",
      onclick: async () => {
        input.select();
        try {
          await navigator.clipboard.writeText(input.value);
        } catch {
          document.execCommand("copy");
        }
        said.textContent = "Copied to the clipboard.";
      },
    },
    label,
  );
  return h("span", { class: "copy" }, btn, said);
}

function revealed(t: Token): HTMLElement {
  const value = h("input", {
    class: "secret mono",
    readonly: true,
    value: t.token,
    "aria-label": `Value of the new token ${t.name}`,
    // The warning is read with the field that takes focus: the box alone, inserted with its
    // text, was not reliably announced.
    "aria-describedby": "new-token-warning",
    spellcheck: "false",
    onfocus: (e: Event) => (e.target as HTMLInputElement).select(),
  });
  return h(
    "section",
    { class: "reveal", "aria-labelledby": "new-token-title" },
    h("h2", { id: "new-token-title" }, `New token: ${t.name}`),
    notice(
      "warning",
      h(
        "p",
        { id: "new-token-warning" },
        h("strong", null, "Copy this token now. You will not see it again."),
        " Only a hash of it is stored.",
      ),
    ),
    h("div", { class: "inline" }, value, copyButton(value)),
    h("p", { class: "hint" }, "Send it as ", h("code", null, "Authorization: Bearer <token>"), "."),
  );
}

function createDialog(onCreated: (t: Token) => void): HTMLDialogElement {
  const name = h("input", {
    name: "name",
    required: true,
    "data-field": "name",
    autocomplete: "off",
  });
  const expiry = h(
    "select",
    { name: "expiry", "data-field": "expires_in_days" },
    EXPIRY.map(([v, l]) => option(v, l)),
  );
  const days = h("input", {
    type: "number",
    min: "1",
    max: "36500",
    name: "days",
    "data-field": "expires_in_days",
  });
  const custom = field("Expires after (days)", days);
  custom.hidden = true;
  expiry.addEventListener("change", () => {
    custom.hidden = expiry.value !== "custom";
  });
  const submit = h("button", { type: "submit", class: "button" }, "Create token");
  const dlg = h("dialog", { "aria-labelledby": "create-token-title" });
  const form: HTMLFormElement = h(
    "form",
    {
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const raw = expiry.value === "custom" ? days.value : expiry.value;
        const body: Record<string, unknown> = { name: name.value.trim() };
        if (raw) body.expires_in_days = Number(raw);
        try {
          const t = await busy(submit, () => api<Token>("POST", "users/me/tokens/", { body }));
          dlg.close();
          onCreated(t);
        } catch (err) {
          showErrors(form, err);
        }
      },
    },
    h("h2", { id: "create-token-title" }, "Create an API token"),
    field("Name", name, "What uses it, e.g. “CI pipeline”."),
    field(
      "Expiry",
      expiry,
      "Without an expiry a token works until revoked, unless an administrator set a policy.",
    ),
    custom,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "button secondary", onclick: () => dlg.close() }, "Cancel"),
      submit,
    ),
  );
  dlg.append(form);
  dlg.addEventListener("close", () => dlg.remove());
  return dlg;
}

export async function tokensView(ctx: Ctx): Promise<Rendered> {
  const list = h("div");
  const top = h("div");
  // A page at a time with Previous/Next: one request of 200 hid every token past the 200th.
  const n = Math.max(1, Number(ctx.query.get("page")) || 1);
  const size = 50;
  const refresh = async () => {
    const page = await get<Page<Token>>(`users/me/tokens/?page=${n}&page_size=${size}`, ctx.signal);
    mount(
      list,
      page.results.length
        ? table(
            ["Name", "Prefix", "Created", "Last used", "Expires", "Status", ""],
            page.results.map((t) => [
              t.name,
              h("code", null, `${t.prefix}…`),
              time(t.created_at),
              time(t.last_used_at, "Never"),
              time(t.expires_at, "Never"),
              statusOf(t),
              t.revoked_at ? "" : revokeButton(t),
            ]),
            "Your API tokens",
          )
        : emptyPage(page.count, "You have no API tokens yet."),
      pager(page.count, n, size, (p) => `/app/settings/tokens/?page=${p}`),
    );
  };
  const revokeButton = (t: Token) =>
    h(
      "button",
      {
        type: "button",
        class: "button small danger",
        "aria-label": `Revoke token ${t.name}`,
        onclick: async () => {
          const ok = await confirmDialog({
            title: `Revoke “${t.name}”?`,
            message: h(
              "p",
              null,
              "Anything using this token is refused from its next request. This cannot be undone.",
            ),
            confirm: "Revoke token",
            danger: true,
          });
          if (!ok) return;
          try {
            await api("DELETE", `users/me/tokens/${t.id}/`);
            mount(top, told("success", `Token “${t.name}” revoked.`));
            await refresh();
            // The redrawn row has no Revoke button, the one focus went back to: the page's
            // heading takes it rather than the document's body (the top of the page for Tab).
            if (!document.activeElement || document.activeElement === document.body)
              (document.querySelector("main h1") as HTMLElement | null)?.focus();
          } catch (e) {
            mount(top, errorNotice(e));
          }
        },
      },
      "Revoke",
    );
  const create = h(
    "button",
    {
      type: "button",
      class: "button",
      onclick: () => {
        const dlg = createDialog(async (t) => {
          mount(top, revealed(t));
          await refresh();
          (top.querySelector("input") as HTMLInputElement | null)?.focus();
        });
        document.body.append(dlg);
        dlg.showModal();
      },
    },
    "Create token",
  );
  await refresh();
  return {
    title: "API tokens",
    body: h(
      "div",
      null,
      heading("API tokens", create),
      h(
        "p",
        { class: "lead" },
        "Tokens let scripts and CI pipelines use the API as you, with your roles in each organization.",
      ),
      top,
      list,
    ),
  };
}
