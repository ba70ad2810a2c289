-- As ../0016_audit_and_versions.sql: the audit log with its hash chain, and workflow versions
-- with their author and whole definition.
CREATE TABLE audit_log (
  seq            BIGINT PRIMARY KEY,
  created_at     TEXT COLLATE "C" NOT NULL,
  org_id         BIGINT,
  actor_type     TEXT COLLATE "C" NOT NULL CHECK (actor_type IN ('user', 'cli', 'system', 'anonymous')),
  actor_user_id  BIGINT,
  actor_username TEXT COLLATE "C",
  token_id       BIGINT,
  session_id     BIGINT,
  client_ip      TEXT COLLATE "C",
  action         TEXT COLLATE "C" NOT NULL,
  target_type    TEXT COLLATE "C" NOT NULL,
  target_id      TEXT COLLATE "C",
  target_name    TEXT COLLATE "C",
  changes        TEXT COLLATE "C",
  prev_hash      TEXT COLLATE "C" NOT NULL,
  hash           TEXT COLLATE "C" NOT NULL
);
CREATE INDEX audit_log_org ON audit_log (org_id, seq);
CREATE INDEX audit_log_created ON audit_log (created_at);
CREATE INDEX audit_log_actor ON audit_log (actor_username, seq);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, seq);

-- Appenders lock this row (INSERT … ON CONFLICT DO UPDATE) until they commit: one chain, linear.
CREATE TABLE audit_head (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  seq        BIGINT NOT NULL,
  hash       TEXT COLLATE "C" NOT NULL,
  floor_seq  BIGINT NOT NULL DEFAULT 0,
  floor_hash TEXT COLLATE "C" NOT NULL DEFAULT '0000000000000000000000000000000000000000000000000000000000000000'
);

ALTER TABLE workflow_versions ADD COLUMN created_by BIGINT REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE workflow_versions ADD COLUMN created_by_name TEXT COLLATE "C";
ALTER TABLE workflow_versions ADD COLUMN restored_from INTEGER;
ALTER TABLE workflow_versions ADD COLUMN step_count INTEGER;

-- Text surgery rather than jsonb: jsonb refuses a "\u0000" escape that a stored config may hold.
UPDATE workflow_versions v SET definition = '{"name":' || to_json(w.name)::text
    || ',"description":' || to_json(w.description)::text
    || ',"status":' || to_json(w.status)::text
    || ',"retention_days":' || coalesce(to_json(w.retention_days)::text, 'null')
    || ',' || substr(v.definition, 2)
  FROM workflows w WHERE w.id = v.workflow_id AND w.version = v.version;
UPDATE workflow_versions SET step_count = json_array_length((definition::json) -> 'steps');
