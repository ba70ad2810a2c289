-- The stored-schema documents a step config pins (json_schema `resources`, XSD `documents`),
-- stored once each by the SHA-256 of their JSON text (src/workflows/pinned-documents.ts). After
-- this table is made, the migration's second part (0021_pinned_documents.ts) rewrites every
-- step_configs row to name its pinned documents by digest; the row keeps its key, the digest of
-- the whole config, so the snapshots that name it read it as before.
CREATE TABLE pinned_documents (
  sha256     TEXT PRIMARY KEY,
  body       TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
