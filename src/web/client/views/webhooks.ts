// Org webhooks (Admin): the list, and a new endpoint with its signing secret (shown once).
// Shared with the detail page: the form fields and the secret box.
import { ApiError, type Page, api, enc, get } from "../api.ts";
import { checkbox, field, h, mount } from "../dom.ts";
import { clearErrors, showErrors } from "../forms.ts";
import type { Ctx, Rendered } from "../router.ts";
import { can } from "../session.ts";
import { badge, busy, empty, heading, notice, table, time } from "../ui.ts";
import { copyButton } from "./tokens.ts";

const EVENTS = ["run.completed", "run.succeeded", "run.failed", "run.error"];

export interface Webhook {
  id: number;
  url: string;
  events: string[];
  workflow_slugs: string[];
  is_active: boolean;
  disabled_reason: string | null;
  created_at: string;
  secret?: string;
}

export function guard(org: string) {
  if (!can(org, "admin"))
    throw new ApiError(403, "permission_denied", "Webhooks are managed by admins of the organization.");
}

export function secretBox(secret: string): HTMLElement {
  const input = h("input", {
    class: "secret mono",
    readonly: true,
    value: secret,
    "aria-label": "Signing secret",
    "aria-describedby": "new-secret-warning",
  });
  return h(
    "section",
    { class: "reveal" },
    notice(
      "warning",
      h(
        "p",
        { id: "new-secret-warning" },
        h("strong", null, "Copy the signing secret now. You will not see it again."),
        " Receivers use it to check the webhook-signature header.",
      ),
    ),
    h("div", { class: "inline" }, input, copyButton(input)),
  );
}

/** The editable fields of a webhook; data-field names match the API's errors. */
export function webhookFields(w: Partial<Webhook>) {
  const url = h("input", {
    type: "url",
    required: true,
    "data-field": "url",
    value: w.url ?? "",
    placeholder: "https://ci.example.com/hooks/assay",
  });
  const events = EVENTS.map((e) =>
    h("input", {
      type: "checkbox",
      id: `ev-${e}`,
      value: e,
      checked: (w.events ?? ["run.completed"]).includes(e),
    }),
  );
  const slugs = h("input", {
    "data-field": "workflow_slugs",
    value: (w.workflow_slugs ?? []).join(", "),
    class: "mono",
  });
  const active = checkbox("Active", { checked: w.is_active ?? true, "data-field": "is_active" });
  const els = [
    field("Payload URL", url),
    h(
      "fieldset",
      { class: "inline-checks", "data-field": "events" },
      h("legend", null, "Events"),
      events.map((c) => h("span", { class: "check" }, c, h("label", { for: c.id }, c.value))),
    ),
    field("Only these workflows (slugs, comma-separated)", slugs, "Empty: every workflow."),
    active,
  ];
  const value = () => ({
    url: url.value.trim(),
    events: events.filter((c) => c.checked).map((c) => c.value),
    workflow_slugs: slugs.value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    is_active: (active.querySelector("input") as HTMLInputElement).checked,
  });
  return { els, value };
}

/** The org's webhooks as a table (or the empty state). */
function webhookTable(org: string, results: Webhook[]): HTMLElement {
  return results.length
    ? table(
        ["URL", "Events", "Workflows", "Status", "Created"],
        results.map((w) => [
          h("a", { href: `/app/orgs/${org}/webhooks/${w.id}/`, class: "mono" }, w.url),
          w.events.join(", "),
          w.workflow_slugs.length ? w.workflow_slugs.join(", ") : "All",
          w.is_active
            ? badge("active")
            : [
                badge("inactive"),
                w.disabled_reason ? h("span", { class: "hint" }, ` ${w.disabled_reason}`) : null,
              ],
          time(w.created_at),
        ]),
        "Webhooks",
      )
    : empty("No webhooks yet.");
}

export async function webhookListView(ctx: Ctx): Promise<Rendered> {
  const org = ctx.params.org!;
  guard(org);
  // One page holds them all: an org has at most 20 webhooks (MAX_WEBHOOKS_PER_ORG), so no pager.
  const data = await get<Page<Webhook>>(`orgs/${enc(org)}/webhooks/?page_size=200`, ctx.signal);
  const top = h("div");
  const list = h("div", null, webhookTable(org, data.results));
  const f = webhookFields({});
  const submit = h("button", { type: "submit", class: "button" }, "Add webhook");
  const form: HTMLFormElement = h(
    "form",
    {
      class: "card",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          const w = await busy(submit, () =>
            api<Webhook>("POST", `orgs/${enc(org)}/webhooks/`, { body: f.value() }),
          );
          mount(
            top,
            h("h2", null, `Webhook created: ${w.url}`),
            secretBox(w.secret ?? ""),
            h("p", null, h("a", { href: `/app/orgs/${org}/webhooks/${w.id}/` }, "Open it to send a ping →")),
          );
          form.reset();
          // The emptied form would still show a refusal of an earlier attempt next to its fields.
          clearErrors(form);
          (top.querySelector("input") as HTMLInputElement | null)?.focus();
          // The list with the new one; not a reload of the page, which would drop the secret.
          const now = await get<Page<Webhook>>(`orgs/${enc(org)}/webhooks/?page_size=200`);
          mount(list, webhookTable(org, now.results));
        } catch (err) {
          showErrors(form, err);
        }
      },
    },
    h("h2", null, "Add a webhook"),
    f.els,
    h("div", { class: "actions" }, submit),
  );
  return {
    title: "Webhooks",
    body: h(
      "div",
      null,
      heading("Webhooks"),
      h(
        "p",
        { class: "lead" },
        "Assay POSTs a signed event (Standard Webhooks) when a run finishes, and retries for about a day.",
      ),
      top,
      list,
      form,
    ),
  };
}
