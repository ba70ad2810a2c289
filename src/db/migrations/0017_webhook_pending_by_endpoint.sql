-- The dispatcher claims each endpoint's oldest due deliveries in turn and counts what each one has
-- in flight (src/webhooks/claim.ts): both are seeks into these indexes, one endpoint at a time, so
-- one endpoint's backlog (or its retries scheduled for later) is never scanned to reach another's.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_claimed ON webhook_deliveries (webhook_id, next_attempt_at) WHERE claimed_at IS NOT NULL;
