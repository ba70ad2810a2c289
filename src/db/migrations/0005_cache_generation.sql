-- A generation number for the server's in-memory caches of users, tokens, org access, token
-- policies and workflows (src/db/generation.ts). Every write to those tables bumps it inside
-- the writing transaction, so a cache that compares it before each use is exact even when the
-- write came from another process (the `assay` CLI opens this file while the server runs).

CREATE TABLE cache_generation (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  value INTEGER NOT NULL
) STRICT;
INSERT INTO cache_generation (id, value) VALUES (1, 0);

CREATE TRIGGER users_gen_insert AFTER INSERT ON users BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER users_gen_update AFTER UPDATE ON users BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER users_gen_delete AFTER DELETE ON users BEGIN UPDATE cache_generation SET value = value + 1; END;

CREATE TRIGGER orgs_gen_insert AFTER INSERT ON orgs BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER orgs_gen_update AFTER UPDATE ON orgs BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER orgs_gen_delete AFTER DELETE ON orgs BEGIN UPDATE cache_generation SET value = value + 1; END;

CREATE TRIGGER memberships_gen_insert AFTER INSERT ON memberships BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER memberships_gen_update AFTER UPDATE ON memberships BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER memberships_gen_delete AFTER DELETE ON memberships BEGIN UPDATE cache_generation SET value = value + 1; END;

CREATE TRIGGER settings_gen_insert AFTER INSERT ON settings BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER settings_gen_update AFTER UPDATE ON settings BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER settings_gen_delete AFTER DELETE ON settings BEGIN UPDATE cache_generation SET value = value + 1; END;

CREATE TRIGGER workflows_gen_insert AFTER INSERT ON workflows BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER workflows_gen_update AFTER UPDATE ON workflows BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER workflows_gen_delete AFTER DELETE ON workflows BEGIN UPDATE cache_generation SET value = value + 1; END;

-- Only the columns a verified token depends on: the batched last_used_at flush (every 30 s)
-- must not empty the caches.
CREATE TRIGGER api_tokens_gen_insert AFTER INSERT ON api_tokens BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER api_tokens_gen_update AFTER UPDATE OF id, user_id, name, prefix, digest, created_at, expires_at, revoked_at ON api_tokens BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER api_tokens_gen_delete AFTER DELETE ON api_tokens BEGIN UPDATE cache_generation SET value = value + 1; END;

-- A cached workflow carries its step count.
CREATE TRIGGER steps_gen_insert AFTER INSERT ON steps BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER steps_gen_delete AFTER DELETE ON steps BEGIN UPDATE cache_generation SET value = value + 1; END;
