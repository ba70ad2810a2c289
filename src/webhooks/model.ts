// Request and response schemas of the webhook API (CONTRACT §2 Webhook, §3, §7): the single
// source for validation, types and OpenAPI. Semantic checks (URL, SSRF, slugs) live in service.ts.
import { t } from "elysia";
import { documentedWith, named } from "../http/openapi/named.ts";
import { Int, OneOf } from "../http/schemas.ts";
import { DELIVERY_STATUSES } from "./types.ts";

import { MAX_URL_LENGTH, urlSyntaxProblem } from "./url-syntax.ts";

export { MAX_URL_LENGTH };

/** Events a webhook can subscribe to. `ping` is sent only on request, whatever the list says. */
export const EVENTS = ["run.completed", "run.succeeded", "run.failed", "run.error", "ping"] as const;
export type WebhookEvent = (typeof EVENTS)[number];

const Event = t.Union(
  EVENTS.map((e) => t.Literal(e)),
  { error: `must be one of ${EVENTS.join(", ")}` },
);
const fields = {
  // The length is the service's check (it reports every URL problem as one errors[] item), with
  // the rest of its checks that need no network (url-syntax.ts).
  url: documentedWith(
    t.String({ error: "must be a string", description: "http(s) URL" }),
    { maxLength: MAX_URL_LENGTH },
    urlSyntaxProblem,
  ),
  events: t.Array(Event, {
    minItems: 1,
    maxItems: EVENTS.length,
    error: "must be a non-empty array of events",
    description: `Default ["run.completed"]`,
  }),
  workflow_slugs: t.Array(t.String({ maxLength: 63, error: "must be a workflow slug" }), {
    maxItems: 100,
    error: "must be an array of at most 100 workflow slugs",
    description: "Only runs of these workflows; empty: all",
  }),
  is_active: t.Boolean({ error: "must be true or false" }),
};

export const WebhookIn = named(
  "WebhookInput",
  t.Object(
    {
      url: fields.url,
      events: t.Optional(fields.events),
      workflow_slugs: t.Optional(fields.workflow_slugs),
      is_active: t.Optional(fields.is_active),
    },
    { additionalProperties: false },
  ),
);
export const WebhookPatch = named(
  "WebhookPatch",
  t.Partial(t.Object(fields), { additionalProperties: false }),
);

const common = {
  id: Int(),
  url: t.String(),
  events: t.Array(OneOf(EVENTS)),
  workflow_slugs: t.Array(t.String()),
  is_active: t.Boolean(),
  disabled_reason: t.Nullable(
    t.String({ description: "Why Assay deactivated the endpoint (repeated failures); null otherwise" }),
  ),
  disabled_at: t.Nullable(t.String()),
  previous_secret_expires_at: t.Nullable(
    t.String({ description: "Until then the secret replaced by a rotation also signs" }),
  ),
  created_at: t.String(),
  updated_at: t.String(),
};
export const WebhookOut = named("Webhook", t.Object(common));
export const WebhookWithSecret = named(
  "WebhookWithSecret",
  t.Object({
    ...common,
    secret: t.String({ description: "whsec_…: shown once" }),
  }),
);

export const AttemptOut = named(
  "DeliveryAttempt",
  t.Object({
    attempted_at: t.String(),
    http_status: t.Nullable(Int()),
    duration_ms: Int(),
    error: t.Nullable(t.String()),
    response_excerpt: t.Nullable(t.String()),
  }),
);
export const DeliveryOut = named(
  "Delivery",
  t.Object({
    id: t.String({ description: "msg_…: the webhook-id header" }),
    webhook_id: Int(),
    event: OneOf(EVENTS),
    run_id: t.Nullable(t.String()),
    status: OneOf(DELIVERY_STATUSES),
    created_at: t.String(),
    next_attempt_at: t.Nullable(t.String()),
    finished_at: t.Nullable(t.String()),
    attempts: t.Array(AttemptOut),
  }),
);

export const WebhookParams = t.Object({ org_slug: t.String(), id: t.String() });
export const DeliveryParams = t.Object({ org_slug: t.String(), id: t.String(), delivery_id: t.String() });
