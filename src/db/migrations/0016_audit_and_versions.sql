-- Accountability (issue 24): an append-only audit log with a hash chain, and workflow versions
-- that say who made them and hold the whole definition (settings too), so they can be shown,
-- compared, restored and run.

-- One entry per state-changing request, written in the transaction of the change. `seq` is the
-- position in the chain (assigned from audit_head, never reused); no foreign keys: entries
-- outlive the users, tokens and orgs they name. `changes` is canonical JSON (src/audit/chain.ts);
-- `hash` = SHA-256 of the entry's canonical serialization, which includes `prev_hash`.
CREATE TABLE audit_log (
  seq            INTEGER PRIMARY KEY,
  created_at     TEXT NOT NULL,
  org_id         INTEGER,
  actor_type     TEXT NOT NULL CHECK (actor_type IN ('user', 'cli', 'system', 'anonymous')),
  actor_user_id  INTEGER,
  actor_username TEXT,
  token_id       INTEGER,
  session_id     INTEGER,
  client_ip      TEXT,
  action         TEXT NOT NULL,
  target_type    TEXT NOT NULL,
  target_id      TEXT,
  target_name    TEXT,
  changes        TEXT,
  prev_hash      TEXT NOT NULL,
  hash           TEXT NOT NULL
) STRICT;
CREATE INDEX audit_log_org ON audit_log (org_id, seq);
CREATE INDEX audit_log_created ON audit_log (created_at);
CREATE INDEX audit_log_actor ON audit_log (actor_username, seq);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, seq);

-- The head of the chain: one row, created by the first entry. Every append updates it in the
-- writing transaction, which serializes appenders (a row lock on PostgreSQL, the write lock on
-- SQLite) and keeps the chain linear. `floor_*` name the last entry the retention purge removed.
CREATE TABLE audit_head (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  seq        INTEGER NOT NULL,
  hash       TEXT NOT NULL,
  floor_seq  INTEGER NOT NULL DEFAULT 0,
  floor_hash TEXT NOT NULL DEFAULT '0000000000000000000000000000000000000000000000000000000000000000'
) STRICT;

ALTER TABLE workflow_versions ADD COLUMN created_by INTEGER REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE workflow_versions ADD COLUMN created_by_name TEXT;
ALTER TABLE workflow_versions ADD COLUMN restored_from INTEGER;
ALTER TABLE workflow_versions ADD COLUMN step_count INTEGER;

-- Snapshots before this migration held steps, file types and fail_fast only. The current version
-- of each workflow gets the settings it was saved with (every change of them made a new version,
-- so the workflow's row holds exactly those); older versions stay without them (shown as null).
UPDATE workflow_versions SET definition = (
  SELECT '{"name":' || json_quote(w.name) || ',"description":' || json_quote(w.description)
    || ',"status":' || json_quote(w.status) || ',"retention_days":' || json_quote(w.retention_days)
    || ',' || substr(workflow_versions.definition, 2)
  FROM workflows w WHERE w.id = workflow_versions.workflow_id
)
WHERE EXISTS (
  SELECT 1 FROM workflows w WHERE w.id = workflow_versions.workflow_id AND w.version = workflow_versions.version
);
UPDATE workflow_versions SET step_count = json_array_length(definition, '$.steps');
