-- The list indexes in ascending order (issue #26). Their newest entries, the ones every run insert
-- adds, sat at the *left* end of a descending index, and a B-tree that grows at its left end
-- splits its pages in half: the two run list indexes held 26 entries a leaf page instead of 47,
-- and a group commit of 12 sync runs dirtied 5 pages of each instead of 3.4 (24 WAL frames a
-- commit, 8,238 bytes a run → 21 frames, 7,236 bytes; scripts/bench/write-cost.ts,
-- docs/benchmarks.md). SQLite reads an ascending index backwards for the lists' newest-first
-- order, without a sort (test/list-performance.test.ts checks the plans); PostgreSQL's plans for
-- the lists were the same before and after (EXPLAIN on 20,000 runs).
DROP INDEX runs_org_status_created;
DROP INDEX runs_org_workflow_status_created;
CREATE INDEX runs_org_status_created ON runs (org_id, status, created_at, id);
CREATE INDEX runs_org_workflow_status_created ON runs (org_id, workflow_id, status, created_at, id);
-- A webhook's deliveries, listed newest first, grow the same way.
DROP INDEX webhook_deliveries_webhook;
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id);
