-- As ../0009_nodes.sql: run claims with leases, the node holding a delivery, shared rate limits.
ALTER TABLE runs ADD COLUMN node_id TEXT COLLATE "C";
ALTER TABLE runs ADD COLUMN lease_until TEXT COLLATE "C";
CREATE INDEX runs_lease ON runs (lease_until) WHERE status = 'running';
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by TEXT COLLATE "C";

-- GCRA state per key: the theoretical arrival time of the next request (epoch ms).
CREATE TABLE rate_limits (
  key TEXT COLLATE "C" PRIMARY KEY,
  tat DOUBLE PRECISION NOT NULL
);

-- One request against several budgets at once (a token's and its user's), all or nothing, in one
-- round trip: each key's TAT is read locked (in key order: no deadlocks between nodes), the
-- request is allowed only if every budget allows it, and only then are the TATs advanced.
-- Returns, per key in the order given, whether that budget allowed it and its TAT as it stands
-- after the call (advanced when allowed).
CREATE FUNCTION assay_rate_take(p_keys TEXT[], p_now DOUBLE PRECISION, p_interval DOUBLE PRECISION[], p_tolerance DOUBLE PRECISION[])
RETURNS TABLE (k TEXT, allowed BOOLEAN, tat DOUBLE PRECISION)
LANGUAGE plpgsql AS $$
DECLARE
  i INTEGER;
  cur DOUBLE PRECISION[];
  nxt DOUBLE PRECISION[];
  ok BOOLEAN[];
  all_ok BOOLEAN := TRUE;
BEGIN
  INSERT INTO rate_limits (key, tat)
    SELECT x, p_now FROM unnest(p_keys) AS x ORDER BY x
    ON CONFLICT (key) DO NOTHING;
  PERFORM 1 FROM rate_limits WHERE key = ANY (p_keys) ORDER BY key FOR UPDATE;
  FOR i IN 1 .. array_length(p_keys, 1) LOOP
    cur[i] := greatest((SELECT r.tat FROM rate_limits r WHERE r.key = p_keys[i]), p_now);
    nxt[i] := cur[i] + p_interval[i];
    ok[i] := nxt[i] - p_now <= p_tolerance[i] + 1e-6;
    all_ok := all_ok AND ok[i];
  END LOOP;
  FOR i IN 1 .. array_length(p_keys, 1) LOOP
    IF all_ok THEN
      UPDATE rate_limits SET tat = nxt[i] WHERE key = p_keys[i];
    END IF;
    k := p_keys[i];
    allowed := ok[i];
    tat := CASE WHEN all_ok THEN nxt[i] ELSE cur[i] END;
    RETURN NEXT;
  END LOOP;
END;
$$;
