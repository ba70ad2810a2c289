-- Findings live apart from the run row (issue #19). runs.steps held every finding of every step:
-- listing runs parsed them all on the HTTP thread (50 runs of 100,000 findings: 3 s a page, the
-- server frozen meanwhile). Now runs.steps holds step summaries only — each step's `findings` is
-- always [] there, and `findings_count` says how many it has — and the findings are stored here in
-- chunks of 200 per step, in order: a page of findings, or the first findings of a run, reads a
-- few chunks and never the whole run.
CREATE TABLE run_findings (
  run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  -- Position of the step in runs.steps (0-based), not its id: the order findings are read in.
  step_index INTEGER NOT NULL,
  -- Findings [chunk * 200, chunk * 200 + 200) of that step.
  chunk      INTEGER NOT NULL,
  -- A JSON array of finding objects.
  findings   TEXT NOT NULL,
  PRIMARY KEY (run_id, step_index, chunk)
) STRICT;

-- Existing runs: their findings move here, 200 to a chunk, in their order.
INSERT INTO run_findings (run_id, step_index, chunk, findings)
SELECT r.id, CAST(st.key AS INTEGER), f.key / 200, json_group_array(json(f.value) ORDER BY f.key)
  FROM runs r, json_each(r.steps) st, json_each(st.value, '$.findings') f
 GROUP BY r.id, st.key, f.key / 200;

-- …and their step summaries keep a count instead.
UPDATE runs SET steps = (
  SELECT json_group_array(
           json_set(st.value, '$.findings', json('[]'),
                    '$.findings_count', coalesce(json_array_length(st.value, '$.findings'), 0))
           ORDER BY st.key)
    FROM json_each(runs.steps) st
) WHERE json_array_length(steps) > 0;

-- Large submitted content is stored in slices (issue #19, same cause): a 24 MB submission was one
-- INSERT on the only writer, the HTTP thread, which held every other request for a quarter of a
-- second or more. Content over 1 MiB is written 256 KiB at a time, each slice in its own short
-- transaction, before the submission and run rows; submissions.content stays NULL for it and
-- content_chunks says how many slices it has. Slices are keyed by their run's id (known before
-- either row exists); slices a crash left without a run are deleted at the next start.
ALTER TABLE submissions ADD COLUMN content_chunks INTEGER NOT NULL DEFAULT 0;
CREATE TABLE content_chunks (
  run_id TEXT NOT NULL,
  seq    INTEGER NOT NULL,
  bytes  BLOB NOT NULL,
  PRIMARY KEY (run_id, seq)
) STRICT;
