-- Assay schema v1. STRICT tables; timestamps are ISO-8601 UTC text (sortable); JSON in TEXT.

CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  username      TEXT NOT NULL UNIQUE,
  name          TEXT NOT NULL DEFAULT '',
  email         TEXT NOT NULL DEFAULT '',
  password_hash TEXT,
  is_admin      INTEGER NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
  created_at    TEXT NOT NULL
) STRICT;

CREATE TABLE orgs (
  id         INTEGER PRIMARY KEY,
  slug       TEXT NOT NULL UNIQUE,
  name       TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  created_at TEXT NOT NULL,
  deleted_at TEXT
) STRICT;

CREATE TABLE memberships (
  org_id     INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role       TEXT NOT NULL CHECK (role IN ('viewer', 'executor', 'author', 'admin')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (org_id, user_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE api_tokens (
  id           INTEGER PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  prefix       TEXT NOT NULL,
  digest       BLOB NOT NULL,
  created_at   TEXT NOT NULL,
  last_used_at TEXT,
  expires_at   TEXT,
  revoked_at   TEXT
) STRICT;
CREATE INDEX api_tokens_prefix ON api_tokens (prefix);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

CREATE TABLE web_sessions (
  id         INTEGER PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  digest     BLOB NOT NULL UNIQUE,
  csrf       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
) STRICT;

CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE workflows (
  id                 INTEGER PRIMARY KEY,
  org_id             INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  slug               TEXT NOT NULL,
  name               TEXT NOT NULL,
  description        TEXT NOT NULL DEFAULT '',
  status             TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  allowed_file_types TEXT NOT NULL,
  fail_fast          INTEGER NOT NULL DEFAULT 1 CHECK (fail_fast IN (0, 1)),
  retention_days     INTEGER,
  version            INTEGER NOT NULL DEFAULT 1,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL,
  deleted_at         TEXT
) STRICT;
-- A deleted workflow frees its slug; its runs stay readable.
CREATE UNIQUE INDEX workflows_org_slug ON workflows (org_id, slug) WHERE deleted_at IS NULL;

CREATE TABLE steps (
  id          INTEGER PRIMARY KEY,
  workflow_id INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  name        TEXT NOT NULL,
  validator   TEXT NOT NULL,
  config      TEXT NOT NULL,
  is_active   INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
) STRICT;
CREATE INDEX steps_workflow ON steps (workflow_id, position);

-- The definition a run executes: written on every version bump, so a queued run (or one
-- recovered after a crash) runs exactly the steps it was submitted against.
CREATE TABLE workflow_versions (
  workflow_id INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
  version     INTEGER NOT NULL,
  definition  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (workflow_id, version)
) STRICT, WITHOUT ROWID;

CREATE TABLE submissions (
  id           INTEGER PRIMARY KEY,
  org_id       INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  filename     TEXT,
  content_type TEXT NOT NULL,
  charset      TEXT NOT NULL DEFAULT 'utf-8',
  file_type    TEXT NOT NULL,
  size         INTEGER NOT NULL,
  sha256       TEXT NOT NULL,
  metadata     TEXT NOT NULL DEFAULT '{}',
  content      BLOB,
  created_at   TEXT NOT NULL,
  purged_at    TEXT
) STRICT;

CREATE TABLE runs (
  id               TEXT PRIMARY KEY,
  org_id           INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  workflow_id      INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
  workflow_version INTEGER NOT NULL,
  submission_id    INTEGER NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  status           TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'error', 'canceled', 'timed_out')),
  summary          TEXT,
  steps            TEXT NOT NULL,
  error            TEXT,
  attempts         INTEGER NOT NULL DEFAULT 0,
  created_by       INTEGER REFERENCES users (id) ON DELETE SET NULL,
  created_by_name  TEXT,
  created_at       TEXT NOT NULL,
  started_at       TEXT,
  finished_at      TEXT,
  duration_ms      INTEGER
) STRICT, WITHOUT ROWID;
-- The list endpoint filters by org (+ workflow, status, created range), newest first.
CREATE INDEX runs_org_created ON runs (org_id, created_at DESC, id DESC);
CREATE INDEX runs_org_workflow_created ON runs (org_id, workflow_id, created_at DESC, id DESC);
CREATE INDEX runs_org_status_created ON runs (org_id, status, created_at DESC, id DESC);
-- The runs table is the queue: the executor takes the oldest queued runs, and on start
-- re-queues runs a crash left running. Partial indexes keep both O(pending).
CREATE INDEX runs_queued ON runs (created_at, id) WHERE status = 'queued';
CREATE INDEX runs_running ON runs (id) WHERE status = 'running';

CREATE TABLE idempotency_keys (
  user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  key          TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('in_progress', 'done')),
  status       INTEGER,
  headers      TEXT,
  body         TEXT,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (user_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
