-- As ../0005_cache_generation.sql: every write to the tables behind the in-memory caches bumps
-- one counter inside the writing transaction (src/db/generation.ts). Statement-level triggers:
-- one bump per statement, whatever the number of rows.
CREATE TABLE cache_generation (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  value BIGINT NOT NULL
);
INSERT INTO cache_generation (id, value) VALUES (1, 0);

CREATE FUNCTION assay_bump_cache_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE cache_generation SET value = value + 1 WHERE id = 1;
  RETURN NULL;
END;
$$;

CREATE TRIGGER users_gen AFTER INSERT OR UPDATE OR DELETE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION assay_bump_cache_generation();
CREATE TRIGGER orgs_gen AFTER INSERT OR UPDATE OR DELETE ON orgs
  FOR EACH STATEMENT EXECUTE FUNCTION assay_bump_cache_generation();
CREATE TRIGGER memberships_gen AFTER INSERT OR UPDATE OR DELETE ON memberships
  FOR EACH STATEMENT EXECUTE FUNCTION assay_bump_cache_generation();
CREATE TRIGGER settings_gen AFTER INSERT OR UPDATE OR DELETE ON settings
  FOR EACH STATEMENT EXECUTE FUNCTION assay_bump_cache_generation();
CREATE TRIGGER workflows_gen AFTER INSERT OR UPDATE OR DELETE ON workflows
  FOR EACH STATEMENT EXECUTE FUNCTION assay_bump_cache_generation();
-- Only the columns a verified token depends on: the batched last_used_at flush must not empty
-- the caches.
CREATE TRIGGER api_tokens_gen AFTER INSERT OR DELETE
  OR UPDATE OF id, user_id, name, prefix, digest, created_at, expires_at, revoked_at ON api_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION assay_bump_cache_generation();
CREATE TRIGGER steps_gen AFTER INSERT OR DELETE ON steps
  FOR EACH STATEMENT EXECUTE FUNCTION assay_bump_cache_generation();
