-- The webhooks a run's final transaction enqueues deliveries for are kept in memory
-- (src/webhooks/subscriptions.ts) under the cache generation of migration 5: every write that can
-- change which webhooks an org's runs notify bumps it. Only the columns the subscription depends
-- on: the delivery path updates failed_streak / failing_since on every attempt, and a secret
-- rotation changes nothing a run needs; neither must empty the caches. Orgs (status, deletion)
-- and workflows (slug) bump it already.
CREATE TRIGGER webhooks_gen_insert AFTER INSERT ON webhooks BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER webhooks_gen_update AFTER UPDATE OF id, org_id, events, workflow_slugs, is_active ON webhooks BEGIN UPDATE cache_generation SET value = value + 1; END;
CREATE TRIGGER webhooks_gen_delete AFTER DELETE ON webhooks BEGIN UPDATE cache_generation SET value = value + 1; END;
