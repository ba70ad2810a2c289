-- JSON Schemas an organization stores so that workflow steps can $ref them by URI (issue 4).
-- A step saved with a $ref keeps a snapshot of what it references: editing a stored schema
-- changes only workflows saved afterwards.

CREATE TABLE org_schemas (
  id         INTEGER PRIMARY KEY,
  org_id     INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  uri        TEXT NOT NULL,
  schema     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (org_id, uri)
) STRICT;
