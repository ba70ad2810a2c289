// Webhook rules: URL shape and SSRF check, event and workflow filters, the per-org limit, the
// secret shown once, rotation, ping and redelivery. Routes call this; it never sees a request.
import type { Actor } from "../audit/types.ts";
import { ReferenceGone } from "../db/program.ts";
import { type ErrorItem, conflict, invalid, notFound } from "../errors.ts";
import type { WorkflowStore } from "../workflows/store.ts";
import type { OutboxStore } from "./outbox-store.ts";
import type { Delivery } from "./types.ts";
import { pingBody } from "./payload.ts";
import { newSecret } from "./signing.ts";
import { resolveTarget } from "./ssrf.ts";
import { urlSyntaxProblem } from "./url-syntax.ts";
import {
  UnknownWorkflowSlugs,
  type Webhook,
  type WebhookChanges,
  type WebhookStore,
  logWebhook,
} from "./store.ts";

export const MAX_WEBHOOKS_PER_ORG = 20;
export { MAX_URL_LENGTH } from "./url-syntax.ts";
/** How long the secret replaced by a rotation keeps signing alongside the new one. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;
const DEFAULT_EVENTS = ["run.completed"];

/** One 400 item per slug of the filter (by its index in the request) that names no workflow. */
const unknownItems = (slugs: readonly string[], unknown: readonly string[]): ErrorItem[] =>
  [...slugs.entries()]
    .filter(([, slug]) => unknown.includes(slug))
    .map(([i, slug]) => ({
      field: `workflow_slugs[${i}]`,
      code: "unknown_workflow",
      message: `No workflow with the slug "${slug}" in this organization.`,
    }));

export interface WebhookInput {
  url?: string;
  events?: string[];
  workflow_slugs?: string[];
  is_active?: boolean;
}

export interface WebhookServiceDeps {
  store: WebhookStore;
  outbox: OutboxStore;
  workflows: WorkflowStore;
  allowPrivate: boolean;
  /** Tells the dispatcher that a delivery is due now. */
  wake: () => void;
}

const unique = <T>(xs: T[]) => [...new Set(xs)];

/** Counts a ping or redelivery against the webhook's budget; throws 429 once it is spent. */
export type SpendSend = (webhookId: number) => void | Promise<void>;

// Conflicts with the webhook's state, not field validation: `errors` stays empty (spec, Errors),
// the reason is in `detail`.
const stillPending = (nextAttemptAt: string | null) =>
  conflict(
    `The delivery is still pending; it is retried on its own schedule${nextAttemptAt ? ` (next attempt at ${nextAttemptAt})` : ""}.`,
  );

export function createWebhookService(d: WebhookServiceDeps) {
  async function urlProblems(raw: string): Promise<ErrorItem[]> {
    const item = (code: string, message: string) => [{ field: "url", code, message }];
    const syntax = urlSyntaxProblem(raw);
    if (syntax) return item(syntax.code, syntax.message);
    const r = await resolveTarget(new URL(raw), d.allowPrivate);
    return r.ok ? [] : item(r.code, r.message);
  }

  /**
   * `kept`: the webhook's filter as stored. A slug already in it is not checked again: its
   * workflow may have been deleted since (the slug stays, naming nothing, docs/webhooks.md), and a
   * save that sends the filter back unchanged (the web app's form always does) is not refused for
   * it.
   */
  async function slugProblems(orgId: number, slugs: string[], kept: readonly string[]): Promise<ErrorItem[]> {
    const unknown: string[] = [];
    for (const slug of slugs) {
      if (kept.includes(slug)) continue;
      const w = await d.workflows.find(orgId, slug);
      if (w?.slug !== slug) unknown.push(slug);
    }
    return unknownItems(slugs, unknown);
  }

  /**
   * The store checks the filter again in its transaction, where a rename that ended after the
   * check above is seen (docs/webhooks.md): the same 400 as if it had ended before.
   */
  async function checkedAgain<T>(slugs: readonly string[] | undefined, write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (e) {
      if (e instanceof UnknownWorkflowSlugs && slugs)
        throw invalid("The webhook is invalid.", unknownItems(slugs, e.slugs));
      throw e;
    }
  }

  /** Checks what the input names; throws one 400 with every problem. */
  async function check(
    orgId: number,
    input: WebhookInput,
    kept: readonly string[] = [],
  ): Promise<WebhookChanges> {
    const errors = [
      ...(input.url !== undefined ? await urlProblems(input.url) : []),
      ...(input.workflow_slugs ? await slugProblems(orgId, input.workflow_slugs, kept) : []),
    ];
    if (errors.length) throw invalid("The webhook is invalid.", errors);
    return {
      url: input.url,
      events: input.events && unique(input.events),
      workflow_slugs: input.workflow_slugs && unique(input.workflow_slugs),
      is_active: input.is_active,
    };
  }

  async function load(orgId: number, id: string): Promise<Webhook> {
    const w = /^\d{1,15}$/.test(id) ? await d.store.get(orgId, Number(id)) : null;
    if (!w) throw notFound("Webhook");
    return w;
  }

  const requireActive = (w: Webhook) => {
    if (!w.is_active)
      throw conflict(
        `The webhook is inactive${w.disabled_reason ? ` (${w.disabled_reason})` : ""}; activate it first (PATCH is_active: true).`,
      );
  };

  const full = () => conflict(`An organization can have at most ${MAX_WEBHOOKS_PER_ORG} webhooks.`);
  // The 409s that the org's or the webhook's state gives a request, whatever its content: also the
  // answer a request with a false If-Match / If-None-Match gets first (RFC 9110 §13.2.1; the
  // routes' `preconditions`, src/http/preconditions.ts).
  /** 409 once the org has its most webhooks. */
  async function roomFor(orgId: number): Promise<void> {
    if ((await d.store.count(orgId)) >= MAX_WEBHOOKS_PER_ORG) throw full();
  }
  /** The webhook a ping goes to: 404, or 409 while it is inactive. */
  async function pingable(orgId: number, id: string): Promise<Webhook> {
    const w = await load(orgId, id);
    requireActive(w);
    return w;
  }
  /** The webhook and delivery a redelivery sends again: 404, or 409 (inactive, still pending). */
  async function redeliverable(orgId: number, id: string, deliveryId: string) {
    const w = await load(orgId, id);
    const found = deliveryId.length <= 64 ? await d.outbox.get(w.id, deliveryId) : null;
    if (!found) throw notFound("Delivery");
    requireActive(w);
    // A refusal costs nothing: a redelivery that would be a 409 is not counted.
    if (found.status === "pending") throw stillPending(found.next_attempt_at);
    return { w, found };
  }

  return {
    load,
    list: (orgId: number, limit: number, offset: number) => d.store.list(orgId, limit, offset),
    roomFor,
    pingable,
    redeliverable,
    async create(orgId: number, input: WebhookInput & { url: string }, actor: Actor) {
      await roomFor(orgId);
      const c = await check(orgId, input);
      const secret = newSecret();
      const webhook = await checkedAgain(
        input.workflow_slugs,
        d.store.create(
          orgId,
          {
            url: input.url,
            events: c.events ?? DEFAULT_EVENTS,
            workflow_slugs: c.workflow_slugs ?? [],
            is_active: c.is_active ?? true,
            secret,
          },
          MAX_WEBHOOKS_PER_ORG,
          actor,
        ),
      );
      if (!webhook) throw full(); // another request took the last place meanwhile
      return { webhook, secret };
    },
    async update(orgId: number, id: string, input: WebhookInput, actor: Actor): Promise<Webhook> {
      const w = await load(orgId, id);
      const changes = await check(orgId, input, w.workflow_slugs);
      const updated = await checkedAgain(input.workflow_slugs, d.store.update(orgId, w.id, changes, actor));
      if (!updated) throw notFound("Webhook");
      if (input.is_active) d.wake(); // deliveries paused while inactive are due again
      return updated;
    },
    async remove(orgId: number, id: string, actor: Actor): Promise<void> {
      const w = await load(orgId, id);
      if (!(await d.store.remove(orgId, w.id, actor))) throw notFound("Webhook");
    },
    async rotateSecret(orgId: number, id: string, actor: Actor) {
      const w = await load(orgId, id);
      const secret = newSecret();
      const until = new Date(Date.now() + PREVIOUS_SECRET_TTL_MS).toISOString();
      const webhook = await d.store.rotateSecret(orgId, w.id, secret, until, actor);
      if (!webhook) throw notFound("Webhook");
      return { webhook, secret };
    },
    async ping(orgId: number, id: string, actor: Actor, spend: SpendSend = () => {}): Promise<Delivery> {
      const w = await pingable(orgId, id);
      await spend(w.id);
      const delivery = await d.outbox
        .enqueue(w.id, "ping", pingBody(w.id, w.url), (queued) =>
          logWebhook(actor, "webhook.ping", w, null, { delivery_id: queued.id }),
        )
        .catch((e) => {
          // Deleted since it was loaded (its row's foreign key): the 404 the ping sent again gets.
          throw e instanceof ReferenceGone ? notFound("Webhook") : e;
        });
      d.wake();
      return delivery;
    },
    async deliveries(orgId: number, id: string, limit: number, offset: number) {
      const w = await load(orgId, id);
      return d.outbox.list(w.id, limit, offset);
    },
    async delivery(orgId: number, id: string, deliveryId: string): Promise<Delivery> {
      const w = await load(orgId, id);
      const found = deliveryId.length <= 64 ? await d.outbox.get(w.id, deliveryId) : null;
      if (!found) throw notFound("Delivery");
      return found;
    },
    async redeliver(
      orgId: number,
      id: string,
      deliveryId: string,
      actor: Actor,
      spend: SpendSend = () => {},
    ): Promise<Delivery> {
      const { w, found } = await redeliverable(orgId, id, deliveryId);
      await spend(w.id);
      const again = await d.outbox.redeliver(w.id, deliveryId, (was) =>
        // The delivery's id beside the change: inside before and after it was equal on both
        // sides, so the diff left it out and the entry named no delivery (until 2026-11-29).
        logWebhook(
          actor,
          "webhook.redeliver",
          w,
          { status: was.status },
          { status: "pending" },
          { delivery_id: was.id },
        ),
      );
      if (!again) throw stillPending(found.next_attempt_at); // it went back meanwhile
      d.wake();
      return again;
    },
  };
}
export type WebhookService = ReturnType<typeof createWebhookService>;
