-- Ids of deleted rows are never handed out again (as PostgreSQL's identities never go back):
-- users, api_tokens, web_sessions, steps, org_schemas, webhooks and webhook_attempts are rebuilt
-- with `id INTEGER PRIMARY KEY AUTOINCREMENT` by src/db/rebuild.ts after this file runs (the
-- table list is in src/db/migrate.ts). Nothing else changes.
SELECT 1;
