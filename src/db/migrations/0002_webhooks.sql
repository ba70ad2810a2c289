-- Webhooks (CONTRACT §7): org endpoints, a durable outbox of deliveries, and the attempt log.

CREATE TABLE webhooks (
  id                         INTEGER PRIMARY KEY,
  org_id                     INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  url                        TEXT NOT NULL,
  events                     TEXT NOT NULL,
  workflow_slugs             TEXT NOT NULL DEFAULT '[]',
  is_active                  INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
  -- The signing secret must be usable to sign, so it is stored as is (unlike API tokens).
  secret                     TEXT NOT NULL,
  previous_secret            TEXT,
  previous_secret_expires_at TEXT,
  disabled_reason            TEXT,
  disabled_at                TEXT,
  -- Consecutive deliveries that ended failed, and when the first of them was created.
  failed_streak              INTEGER NOT NULL DEFAULT 0,
  failing_since              TEXT,
  created_at                 TEXT NOT NULL,
  updated_at                 TEXT NOT NULL
) STRICT;
CREATE INDEX webhooks_org ON webhooks (org_id, id);

-- The outbox. Run events are inserted in the same transaction as the run's final status; the
-- body is built at the first attempt and then kept, so every retry sends the same bytes.
CREATE TABLE webhook_deliveries (
  id              TEXT PRIMARY KEY, -- msg_…: also the webhook-id header, stable across retries
  webhook_id      INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event           TEXT NOT NULL,
  run_id          TEXT,
  payload         TEXT,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  tries           INTEGER NOT NULL DEFAULT 0, -- attempts in the current round (redeliver resets)
  next_attempt_at TEXT,
  claimed_at      TEXT, -- an attempt is in flight; cleared at start after a crash
  created_at      TEXT NOT NULL,
  finished_at     TEXT
) STRICT, WITHOUT ROWID;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE status <> 'pending';

CREATE TABLE webhook_attempts (
  id               INTEGER PRIMARY KEY,
  delivery_id      TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at     TEXT NOT NULL,
  http_status      INTEGER,
  duration_ms      INTEGER NOT NULL,
  error            TEXT,
  response_excerpt TEXT
) STRICT;
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);
