-- As ../0003_run_list_indexes.sql.
CREATE INDEX runs_org_workflow_status_created ON runs (org_id, workflow_id, status, created_at DESC, id DESC);
