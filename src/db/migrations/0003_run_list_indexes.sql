-- The run list filtered by workflow AND status was 590–715 ms on 1,000,000 runs (each of the two
-- single-filter indexes leaves the other filter to a scan); this index makes it 13 ms
-- (scripts/list-bench.ts, docs/limits.md).
CREATE INDEX runs_org_workflow_status_created ON runs (org_id, workflow_id, status, created_at DESC, id DESC);
