// JSON shapes of a webhook (CONTRACT §2, Webhook) and of a delivery. Secrets never appear here:
// the routes add `secret` to the two answers that show it once.
import type { Delivery } from "./types.ts";
import type { Webhook } from "./store.ts";

export const presentWebhook = (w: Webhook) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  workflow_slugs: w.workflow_slugs,
  is_active: w.is_active,
  disabled_reason: w.disabled_reason,
  disabled_at: w.disabled_at,
  previous_secret_expires_at:
    w.previous_secret_expires_at && w.previous_secret_expires_at > new Date().toISOString()
      ? w.previous_secret_expires_at
      : null,
  created_at: w.created_at,
  updated_at: w.updated_at,
});

export const presentDelivery = (d: Delivery) => ({
  id: d.id,
  webhook_id: d.webhook_id,
  event: d.event,
  run_id: d.run_id,
  status: d.status,
  created_at: d.created_at,
  next_attempt_at: d.status === "pending" ? d.next_attempt_at : null,
  finished_at: d.finished_at,
  attempts: d.attempts,
});
