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

-- Sign-in attempts (a sliding window: at most `limit` attempts in any window per key), shared by
-- the nodes: one row per counted attempt.
CREATE TABLE rate_events (
  key TEXT COLLATE "C" NOT NULL,
  at  DOUBLE PRECISION NOT NULL
);
CREATE INDEX rate_events_key ON rate_events (key, at);

-- One attempt against several windows at once, all or nothing: each key locked (advisory, in key
-- order), its attempts in the window counted; if every key is below its limit one attempt is
-- recorded per key. Returns per key whether it allowed the attempt and the oldest attempt in the
-- window (when it is full: the time the next attempt becomes possible is that plus the window).
CREATE FUNCTION assay_window_take(p_keys TEXT[], p_now DOUBLE PRECISION, p_limit INTEGER[], p_window DOUBLE PRECISION)
RETURNS TABLE (k TEXT, allowed BOOLEAN, oldest DOUBLE PRECISION)
LANGUAGE plpgsql AS $$
DECLARE
  i INTEGER;
  n INTEGER[];
  o DOUBLE PRECISION[];
  all_ok BOOLEAN := TRUE;
  key TEXT;
  cnt INTEGER;
  old DOUBLE PRECISION;
BEGIN
  FOR key IN SELECT x FROM unnest(p_keys) AS x ORDER BY x LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('assay_window:' || key, 0));
  END LOOP;
  DELETE FROM rate_events WHERE rate_events.key = ANY (p_keys) AND at <= p_now - p_window;
  FOR i IN 1 .. array_length(p_keys, 1) LOOP
    SELECT count(*), min(at) INTO cnt, old FROM rate_events WHERE rate_events.key = p_keys[i];
    n[i] := cnt;
    o[i] := old;
    all_ok := all_ok AND n[i] < p_limit[i];
  END LOOP;
  FOR i IN 1 .. array_length(p_keys, 1) LOOP
    IF all_ok THEN
      INSERT INTO rate_events (key, at) VALUES (p_keys[i], p_now);
    END IF;
    k := p_keys[i];
    allowed := n[i] < p_limit[i];
    oldest := o[i];
    RETURN NEXT;
  END LOOP;
END;
$$;
