-- As ../0009_nodes.sql: run claims with leases, the node holding a delivery, shared rate limits.
ALTER TABLE runs ADD COLUMN node_id TEXT COLLATE "C";
ALTER TABLE runs ADD COLUMN lease_until TEXT COLLATE "C";
CREATE INDEX runs_lease ON runs (lease_until) WHERE status = 'running';
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by TEXT COLLATE "C";

CREATE TABLE rate_limits (
  key TEXT COLLATE "C" PRIMARY KEY,
  tat BIGINT NOT NULL
);
