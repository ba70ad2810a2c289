-- Every run insert updated four list indexes; two are enough. A list without a status filter now
-- reads the (…, status, created_at, id) index once per status and merges the ordered streams
-- (one UNION ALL arm per status, src/runs/store.ts), so the two indexes without status only cost
-- writes: 15 µs less per run under the sync benchmark (docs/benchmarks.md).
DROP INDEX runs_org_created;
DROP INDEX runs_org_workflow_created;
