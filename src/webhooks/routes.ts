// Webhook API (CONTRACT §3, §7): endpoints, their delivery log, redelivery, ping and secret
// rotation. Every route is Admin of the org; another org's webhook is 404.
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import type { Principal, authPlugin } from "../http/auth.ts";
import { EnvelopeOf, PageQuery, envelope, parsePage } from "../http/pagination.ts";
import { describe, header } from "../http/openapi/components.ts";
import { AUTHED, errorResponses } from "../http/schemas.ts";
import { publicOrigin, publicUrl } from "../http/url.ts";
import { requireOrgRole } from "../orgs/access.ts";
import {
  DeliveryOut,
  DeliveryParams,
  WebhookIn,
  WebhookOut,
  WebhookParams,
  WebhookPatch,
  WebhookWithSecret,
} from "./model.ts";
import { presentDelivery, presentWebhook } from "./present.ts";

const OrgParams = t.Object({ org_slug: t.String() });
const ListQuery = t.Object(PageQuery, { additionalProperties: true });
// A 202 points at its status monitor (RFC 9110 §15.3.3): the delivery, which GET follows.
const queued = { responses: { 202: { headers: { Location: header("Location") } } } };
const SEND_LIMIT =
  "Pings and redeliveries of one webhook share a budget (20 a minute by default, all its admins together): over it, 429 rate_limited with Retry-After.";

/** Counts a ping or redelivery against the webhook's budget (src/http/limits.ts, webhookSend). */
export type WebhookSendLimit = (
  webhookId: number,
  request: Request,
  headers: Record<string, unknown>,
) => void | Promise<void>;

export function webhookRoutes(
  deps: Deps,
  auth: ReturnType<typeof authPlugin>,
  limit: WebhookSendLimit = () => {},
) {
  const { orgs, config, webhooks } = deps;
  const admin = async (p: Parameters<typeof requireOrgRole>[1], slug: string) =>
    (await requireOrgRole(orgs, p, slug, "admin")).org;
  const detail = { tags: ["Webhooks"] };
  const deliveryUrl = (request: Request, org: string, d: { webhook_id: number; id: string }) =>
    `${publicOrigin(config.base_url, request)}/api/v1/orgs/${org}/webhooks/${d.webhook_id}/deliveries/${encodeURIComponent(d.id)}/`;
  return new Elysia({ prefix: "/api/v1/orgs/:org_slug/webhooks" })
    .use(auth)
    .get(
      "/",
      async ({ params, query, request, principal }) => {
        const org = await admin(principal, params.org_slug);
        const p = parsePage(query);
        const { count, items } = await webhooks.list(org.id, p.limit, p.offset);
        return envelope(publicUrl(config.base_url, request), p, count, items.map(presentWebhook));
      },
      {
        auth: "admin",
        params: OrgParams,
        query: ListQuery,
        response: { 200: EnvelopeOf(WebhookOut), ...errorResponses(...AUTHED) },
        detail: { ...detail, operationId: "listWebhooks", summary: "List webhooks" },
      },
    )
    .post(
      "/",
      async ({ params, body, request, principal, actor, set }) => {
        const org = await admin(principal, params.org_slug);
        const { webhook, secret } = await webhooks.create(org.id, body, actor);
        set.status = 201;
        set.headers.location = `${publicOrigin(config.base_url, request)}/api/v1/orgs/${org.slug}/webhooks/${webhook.id}/`;
        return { ...presentWebhook(webhook), secret };
      },
      {
        auth: "admin",
        // An org at its most webhooks: the 409 first (§13.2.1).
        preconditions: async (c: { params: { org_slug: string }; principal: Principal }) =>
          webhooks.roomFor((await admin(c.principal, c.params.org_slug)).id),
        params: OrgParams,
        body: WebhookIn,
        response: { 201: WebhookWithSecret, ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "createWebhook",
          summary: "Create a webhook (its whsec_ secret is shown once)",
        },
      },
    )
    .get(
      "/:id/",
      async ({ params, principal }) => {
        const org = await admin(principal, params.org_slug);
        return presentWebhook(await webhooks.load(org.id, params.id));
      },
      {
        auth: "admin",
        preconditions: "read",
        params: WebhookParams,
        response: { 200: WebhookOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: {
          ...detail,
          operationId: "getWebhook",
          summary: "Webhook detail (disabled_reason says why Assay deactivated it)",
        },
      },
    )
    .patch(
      "/:id/",
      async ({ params, body, principal, actor }) => {
        const org = await admin(principal, params.org_slug);
        return presentWebhook(await webhooks.update(org.id, params.id, body, actor));
      },
      {
        auth: "admin",
        preconditions: async (c: { params: { org_slug: string; id: string }; principal: Principal }) =>
          webhooks.load((await admin(c.principal, c.params.org_slug)).id, c.params.id),
        params: WebhookParams,
        body: WebhookPatch,
        response: { 200: WebhookOut, ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "updateWebhook",
          summary: "Change url, events, workflow_slugs or is_active",
        },
      },
    )
    .delete(
      "/:id/",
      async ({ params, principal, actor, set }) => {
        const org = await admin(principal, params.org_slug);
        await webhooks.remove(org.id, params.id, actor);
        set.status = 204;
      },
      {
        auth: "admin",
        preconditions: async (c: { params: { org_slug: string; id: string }; principal: Principal }) =>
          webhooks.load((await admin(c.principal, c.params.org_slug)).id, c.params.id),
        params: WebhookParams,
        response: { 204: t.Void(), ...errorResponses(...AUTHED) },
        detail: { ...detail, operationId: "deleteWebhook", summary: "Delete a webhook and its delivery log" },
      },
    )
    .post(
      "/:id/rotate-secret/",
      async ({ params, principal, actor }) => {
        const org = await admin(principal, params.org_slug);
        const { webhook, secret } = await webhooks.rotateSecret(org.id, params.id, actor);
        return { ...presentWebhook(webhook), secret };
      },
      {
        auth: "admin",
        preconditions: async (c: { params: { org_slug: string; id: string }; principal: Principal }) =>
          webhooks.load((await admin(c.principal, c.params.org_slug)).id, c.params.id),
        params: WebhookParams,
        response: { 200: WebhookWithSecret, ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "rotateWebhookSecret",
          summary: "New signing secret (shown once); the old one also signs for 24 h",
        },
      },
    )
    .post(
      "/:id/ping/",
      async ({ params, principal, actor, request, set }) => {
        const org = await admin(principal, params.org_slug);
        const delivery = await webhooks.ping(org.id, params.id, actor, (w) => limit(w, request, set.headers));
        set.status = 202;
        set.headers.location = deliveryUrl(request, org.slug, delivery);
        return presentDelivery(delivery);
      },
      {
        auth: "admin",
        // An inactive webhook: the 409 first (§13.2.1).
        preconditions: async (c: { params: { org_slug: string; id: string }; principal: Principal }) =>
          webhooks.pingable((await admin(c.principal, c.params.org_slug)).id, c.params.id),
        params: WebhookParams,
        response: { 202: DeliveryOut, ...errorResponses(...AUTHED, 409) },
        detail: describe({
          ...detail,
          description: SEND_LIMIT,
          operationId: "pingWebhook",
          summary: "Queue a ping event; follow it in the delivery log",
          ...queued,
        }),
      },
    )
    .get(
      "/:id/deliveries/",
      async ({ params, query, request, principal }) => {
        const org = await admin(principal, params.org_slug);
        const p = parsePage(query);
        const { count, items } = await webhooks.deliveries(org.id, params.id, p.limit, p.offset);
        return envelope(publicUrl(config.base_url, request), p, count, items.map(presentDelivery));
      },
      {
        auth: "admin",
        params: WebhookParams,
        query: ListQuery,
        response: { 200: EnvelopeOf(DeliveryOut), ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "listDeliveries",
          summary: "Delivery log, newest first, with every attempt",
        },
      },
    )
    .get(
      "/:id/deliveries/:delivery_id/",
      async ({ params, principal }) => {
        const org = await admin(principal, params.org_slug);
        return presentDelivery(await webhooks.delivery(org.id, params.id, params.delivery_id));
      },
      {
        auth: "admin",
        preconditions: "read",
        params: DeliveryParams,
        response: { 200: DeliveryOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: { ...detail, operationId: "getDelivery", summary: "One delivery with its attempts" },
      },
    )
    .post(
      "/:id/deliveries/:delivery_id/redeliver/",
      async ({ params, principal, actor, request, set }) => {
        const org = await admin(principal, params.org_slug);
        const again = await webhooks.redeliver(org.id, params.id, params.delivery_id, actor, (w) =>
          limit(w, request, set.headers),
        );
        set.status = 202;
        set.headers.location = deliveryUrl(request, org.slug, again);
        return presentDelivery(again);
      },
      {
        auth: "admin",
        preconditions: async (c: {
          params: { org_slug: string; id: string; delivery_id: string };
          principal: Principal;
        }) =>
          // An inactive webhook, a delivery still pending: the 409 first (§13.2.1).
          webhooks.redeliverable(
            (await admin(c.principal, c.params.org_slug)).id,
            c.params.id,
            c.params.delivery_id,
          ),
        params: DeliveryParams,
        response: { 202: DeliveryOut, ...errorResponses(...AUTHED, 409) },
        detail: describe({
          ...detail,
          description: SEND_LIMIT,
          operationId: "redeliverDelivery",
          summary: "Send a finished delivery again (same webhook-id, fresh retries)",
          ...queued,
        }),
      },
    );
}
