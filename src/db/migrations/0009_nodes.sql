-- Several nodes on one database (docs/scaling.md). A run being executed is claimed by a node
-- (node_id) until lease_until, renewed while it runs; a node that dies stops renewing, and when
-- the lease has run out another node requeues the run (the attempt counts). Webhook deliveries
-- name the node holding them. Rate limits shared by the nodes keep their state here (GCRA: the
-- theoretical arrival time per key, epoch ms).
ALTER TABLE runs ADD COLUMN node_id TEXT;
ALTER TABLE runs ADD COLUMN lease_until TEXT;
CREATE INDEX runs_lease ON runs (lease_until) WHERE status = 'running';
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by TEXT;

-- (On SQLite one server holds the limits in memory: the table exists for one schema, unused.)
CREATE TABLE rate_limits (
  key TEXT PRIMARY KEY,
  tat REAL NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TABLE rate_events (
  key TEXT NOT NULL,
  at  REAL NOT NULL
) STRICT;
CREATE INDEX rate_events_key ON rate_events (key, at);
