-- As ../0010_ascending_indexes.sql: a B-tree index grown at its left end (the newest entries of
-- a descending index) splits its pages in half; PostgreSQL scans an ascending one backwards, and
-- its plans for the run lists were the same before and after (EXPLAIN on 20,000 runs).
DROP INDEX runs_org_status_created;
DROP INDEX runs_org_workflow_status_created;
CREATE INDEX runs_org_status_created ON runs (org_id, status, created_at, id);
CREATE INDEX runs_org_workflow_status_created ON runs (org_id, workflow_id, status, created_at, id);
DROP INDEX webhook_deliveries_webhook;
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id);
