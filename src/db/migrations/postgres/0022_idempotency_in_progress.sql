-- A SQLite server's start frees the Idempotency-Keys its previous life left in progress
-- (src/runs/idempotency.ts, releaseAbandoned) before it listens: a seek into this index instead of
-- a read of every key of the last 24 hours. Partial: a key is in it only from its claim to its
-- answer, so it holds the requests in flight, not the window. PostgreSQL never runs that release
-- (several nodes share the keys) but carries the same schema. An index only: an older node works
-- as before.
CREATE INDEX idempotency_keys_in_progress ON idempotency_keys (user_id, key) WHERE state = 'in_progress';
