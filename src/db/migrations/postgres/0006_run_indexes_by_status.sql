-- As ../0006_run_indexes_by_status.sql.
DROP INDEX runs_org_created;
DROP INDEX runs_org_workflow_created;
