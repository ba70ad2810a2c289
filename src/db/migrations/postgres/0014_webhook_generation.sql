-- As ../0014_webhook_generation.sql: a write that can change which webhooks an org's runs notify
-- bumps the cache generation (statement-level, like migration 5). Not the delivery path's
-- failed_streak / failing_since updates, nor a secret rotation.
CREATE TRIGGER webhooks_gen AFTER INSERT OR DELETE
  OR UPDATE OF id, org_id, events, workflow_slugs, is_active ON webhooks
  FOR EACH STATEMENT EXECUTE FUNCTION assay_bump_cache_generation();
