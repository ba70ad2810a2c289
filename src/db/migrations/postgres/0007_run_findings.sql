-- As ../0007_run_findings.sql: findings stored apart from the run row, 200 to a chunk per step;
-- runs.steps keeps step summaries (`findings` empty, `findings_count`); large submitted content
-- stored in slices keyed by the run. Existing runs are converted with the same result.
CREATE TABLE run_findings (
  run_id     TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_index INTEGER NOT NULL,
  chunk      INTEGER NOT NULL,
  findings   TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (run_id, step_index, chunk)
);

INSERT INTO run_findings (run_id, step_index, chunk, findings)
SELECT r.id, (st.i - 1)::INTEGER, ((f.j - 1) / 200)::INTEGER, jsonb_agg(f.value ORDER BY f.j)::TEXT
  FROM runs r
  CROSS JOIN LATERAL jsonb_array_elements(r.steps::jsonb) WITH ORDINALITY AS st(value, i)
  CROSS JOIN LATERAL jsonb_array_elements(coalesce(st.value -> 'findings', '[]'::jsonb)) WITH ORDINALITY AS f(value, j)
 GROUP BY r.id, st.i, (f.j - 1) / 200;

UPDATE runs SET steps = (
  SELECT coalesce(jsonb_agg(
           st.value || jsonb_build_object(
             'findings', '[]'::jsonb,
             'findings_count', coalesce(jsonb_array_length(st.value -> 'findings'), 0))
           ORDER BY st.i), '[]'::jsonb)::TEXT
    FROM jsonb_array_elements(runs.steps::jsonb) WITH ORDINALITY AS st(value, i)
) WHERE jsonb_array_length(steps::jsonb) > 0;

ALTER TABLE submissions ADD COLUMN content_chunks INTEGER NOT NULL DEFAULT 0;
CREATE TABLE content_chunks (
  run_id TEXT COLLATE "C" NOT NULL,
  seq    INTEGER NOT NULL,
  bytes  BYTEA NOT NULL,
  PRIMARY KEY (run_id, seq)
);
