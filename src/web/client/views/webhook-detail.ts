// One webhook (Admin): its settings, ping, secret rotation, delete, and the delivery log with
// every attempt and redelivery.
import { type Page, api, enc, get } from "../api.ts";
import { h, mount } from "../dom.ts";
import { showErrors } from "../forms.ts";
import { type Ctx, type Rendered, navigate, reload } from "../router.ts";
import {
  badge,
  busy,
  confirmDialog,
  duration,
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
import { type Webhook, guard, secretBox, webhookFields } from "./webhooks.ts";
import { showHiddenControls } from "../../../lib/text.ts";

interface Attempt {
  attempted_at: string;
  http_status: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
}
interface Delivery {
  id: string;
  event: string;
  run_id: string | null;
  status: string;
  created_at: string;
  next_attempt_at: string | null;
  attempts: Attempt[];
}

function deliveryRows(org: string, hookId: number, list: Delivery[], status: HTMLElement) {
  return list.map((d) => {
    // Attempts come oldest first (the API lists them in order): the row shows the latest.
    const last = d.attempts.at(-1);
    const redeliver =
      d.status === "pending"
        ? null
        : h(
            "button",
            {
              type: "button",
              class: "button small secondary",
              onclick: async () => {
                try {
                  await api("POST", `orgs/${enc(org)}/webhooks/${hookId}/deliveries/${enc(d.id)}/redeliver/`);
                  flash("success", "Redelivery queued.");
                  reload();
                } catch (e) {
                  mount(status, errorNotice(e));
                }
              },
            },
            "Redeliver",
          );
    const attempts = d.attempts.length
      ? h(
          "details",
          null,
          h("summary", null, `${d.attempts.length} attempt${d.attempts.length === 1 ? "" : "s"}`),
          h(
            "ul",
            { class: "attempts" },
            d.attempts.map((a) =>
              h(
                "li",
                null,
                time(a.attempted_at),
                ` · ${a.http_status ?? "no answer"} · ${duration(a.duration_ms)}`,
                // The receiver's words: bidirectional controls shown as \uNNNN, not obeyed.
                a.error ? ` · ${showHiddenControls(a.error)}` : "",
                a.response_excerpt
                  ? h("pre", { class: "code-block" }, showHiddenControls(a.response_excerpt))
                  : null,
              ),
            ),
          ),
        )
      : "None yet";
    return [
      d.event,
      d.run_id
        ? h("a", { href: `/app/orgs/${org}/runs/${d.run_id}/`, class: "mono" }, d.run_id.slice(-8))
        : "—",
      badge(d.status === "succeeded" ? "succeeded" : d.status === "failed" ? "failed" : "pending", d.status),
      last?.http_status ?? "—",
      time(d.created_at),
      attempts,
      redeliver,
    ];
  });
}

export async function webhookDetailView(ctx: Ctx): Promise<Rendered> {
  const { org, id } = ctx.params as { org: string; id: string };
  guard(org);
  const base = `orgs/${enc(org)}/webhooks/${enc(id)}/`;
  // A page at a time with Previous/Next: a webhook fires on every run, and one page of 50 hid
  // every older delivery (no way to read or redeliver it here).
  const page = Math.max(1, Number(ctx.query.get("page")) || 1);
  const size = 50;
  const [w, deliveries] = await Promise.all([
    get<Webhook>(base, ctx.signal),
    get<Page<Delivery>>(`${base}deliveries/?page=${page}&page_size=${size}`, ctx.signal),
  ]);
  const status = h("div");
  const f = webhookFields(w);
  const submit = h("button", { type: "submit", class: "button" }, "Save");
  const form: HTMLFormElement = h(
    "form",
    {
      class: "card",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          await busy(submit, () => api("PATCH", base, { body: f.value() }));
          flash("success", "Webhook saved.");
          reload();
        } catch (err) {
          showErrors(form, err);
        }
      },
    },
    h("h2", null, "Settings"),
    f.els,
    h("div", { class: "actions" }, submit),
  );
  const run = (label: string, work: () => Promise<void>, danger = false) =>
    h(
      "button",
      {
        type: "button",
        class: `button ${danger ? "danger" : "secondary"}`,
        onclick: () => work().catch((e) => mount(status, errorNotice(e))),
      },
      label,
    );
  const ping = run("Send ping", async () => {
    await api("POST", `${base}ping/`);
    flash("success", "Ping queued: it appears in the delivery log.");
    reload();
  });
  const rotate = run("Rotate secret", async () => {
    if (
      !(await confirmDialog({
        title: "Rotate the signing secret?",
        message: h("p", null, "A new secret signs from now on; the old one also signs for 24 hours."),
        confirm: "Rotate",
      }))
    )
      return;
    const r = await api<Webhook>("POST", `${base}rotate-secret/`);
    mount(status, secretBox(r.secret ?? ""));
    // As after creating a webhook: focus on the new secret, read with its warning.
    (status.querySelector("input.secret") as HTMLInputElement | null)?.focus();
  });
  const remove = run(
    "Delete",
    async () => {
      if (
        !(await confirmDialog({
          title: "Delete this webhook?",
          message: h("p", null, "Its delivery log is deleted too."),
          confirm: "Delete webhook",
          danger: true,
        }))
      )
        return;
      await api("DELETE", base);
      flash("success", "Webhook deleted.");
      navigate(`/app/orgs/${org}/webhooks/`);
    },
    true,
  );
  return {
    title: "Webhook",
    body: h(
      "div",
      null,
      h("p", { class: "crumbs" }, h("a", { href: `/app/orgs/${org}/webhooks/` }, "Webhooks"), " / "),
      heading(h("span", { class: "mono break" }, w.url), ping, rotate, remove),
      status,
      w.disabled_reason
        ? notice("warning", h("p", null, `Deactivated by Assay: ${w.disabled_reason}`))
        : null,
      form,
      h("h2", null, "Delivery log"),
      deliveries.results.length
        ? table(
            ["Event", "Run", "Status", "HTTP", "Created", "Attempts", ""],
            deliveryRows(org, w.id, deliveries.results, status),
            "Deliveries",
          )
        : deliveries.count > 0
          ? emptyPage(deliveries.count, "")
          : empty("No deliveries yet. Send a ping to test the endpoint."),
      pager(deliveries.count, page, size, (p) => `/app/orgs/${org}/webhooks/${w.id}/?page=${p}`),
    ),
  };
}
