// Retention: submission content older than its workflow's retention_days (or the instance
// default) is purged; the run, its findings and the content's sha256 stay. The sweep works in
// small batches, each its own short transaction, yielding between batches so requests are not
// blocked behind one long write. It reads the runs a range of their key at a time for the same
// reason: on SQLite the candidate query runs on the thread that serves requests, and over the
// whole table (1,000,000 runs) it held that thread 430–670 ms at every hourly sweep (2026-11-29).
import { purgeAudit } from "../audit/retention.ts";
import { JOBS, runExclusive } from "../db/exclusive.ts";
import type { AnyDb } from "../db/open.ts";
import { all, run } from "../db/program.ts";
import type { Logger } from "../lib/log.ts";

export const RETENTION_BATCH = 500;
/** Runs one candidate query reads (a range of their primary key): ~4 ms on SQLite (2026-11-29). */
export const RETENTION_SCAN = 5_000;
const DAY_MS = 86_400_000;
/** The first sweep after a start: soon, but out of the way of the start's own work (recovery). */
export const FIRST_SWEEP_AFTER_MS = 2_000;

// Content over 1 MiB is not in submissions.content but in slices keyed by the run
// (src/runs/content-store.ts): content_chunks > 0.
const CANDIDATES = `SELECT s.id, r.id AS run_id, s.content_chunks AS slices FROM submissions s
  JOIN runs r ON r.submission_id = s.id
  JOIN workflows w ON w.id = r.workflow_id
  WHERE (s.content IS NOT NULL OR s.content_chunks > 0) AND r.status NOT IN ('queued', 'running') AND`;

interface Candidate {
  id: number;
  run_id: string;
  slices: number;
}
const OLDER = "AND s.created_at < CAST(? AS TEXT) LIMIT CAST(? AS INTEGER)";
/** The runs' key range a candidate query reads: after `from`, up to `to` (the last range: no end). */
export const IN_RANGE = "r.id > CAST(? AS TEXT) AND r.id <= CAST(? AS TEXT) AND";
const FROM_ON = "r.id > CAST(? AS TEXT) AND";
/** The end of the range of `scan` runs after `from` (by the key's order), null past the last. */
/** The candidate statements of a range and of the last range, as pick() builds them (for tests). */
export const CANDIDATES_SQL = {
  ranged: `${CANDIDATES} ${IN_RANGE} w.retention_days IS NULL ${OLDER}`,
  last: `${CANDIDATES} ${FROM_ON} w.retention_days IS NULL ${OLDER}`,
};
const RANGE_END =
  "SELECT id FROM runs WHERE id > CAST(? AS TEXT) ORDER BY id LIMIT 1 OFFSET CAST(? AS INTEGER)";

/**
 * `auditDays`: the audit log's retention (the instance setting, read at each sweep); its purge
 * runs in the same sweep (src/audit/retention.ts), so one node at a time does it.
 */
export function createRetention(
  db: AnyDb,
  log: Logger,
  defaultDays: number,
  auditDays: () => Promise<number | null> = async () => null,
  scan = RETENTION_SCAN,
) {
  let timer: ReturnType<typeof setInterval> | null = null;
  let first: ReturnType<typeof setTimeout> | null = null;

  /**
   * Candidates: content still present, run final, older than the applicable retention. The
   * cutoff is computed here per retention period present (no dialect date arithmetic in SQL):
   * one query per distinct retention_days among the org's workflows, and one for the default.
   */
  function* pick(now: Date, from: string, to: string | null) {
    const range = to === null ? FROM_ON : IN_RANGE;
    const bounds = to === null ? [from] : [from, to];
    const periods = yield* all<{ days: number | null }>(
      "SELECT DISTINCT retention_days AS days FROM workflows",
    );
    const ids: Candidate[] = [];
    for (const { days } of periods) {
      const effective = days ?? defaultDays;
      if (effective <= 0) continue;
      const cutoff = new Date(now.getTime() - effective * DAY_MS).toISOString();
      const limit = RETENTION_BATCH - ids.length;
      const rows =
        days === null
          ? yield* all<Candidate>(
              `${CANDIDATES} ${range} w.retention_days IS NULL ${OLDER}`,
              ...bounds,
              cutoff,
              limit,
            )
          : yield* all<Candidate>(
              `${CANDIDATES} ${range} w.retention_days = CAST(? AS INTEGER) ${OLDER}`,
              ...bounds,
              days,
              cutoff,
              limit,
            );
      for (const r of rows) ids.push({ ...r, slices: Number(r.slices) });
      if (ids.length >= RETENTION_BATCH) break;
    }
    return ids;
  }

  /** Purges the candidates of the runs after `from` up to `to`, in batches; returns how many. */
  async function sweepRange(now: Date, from: string, to: string | null): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = await db.exec(pick(now, from, to));
      if (!ids.length) break;
      const ts = new Date().toISOString();
      await db.tx(function* () {
        for (const { id } of ids)
          yield* run(
            "UPDATE submissions SET content = NULL, content_chunks = 0, purged_at = ? WHERE id = ?",
            ts,
            id,
          );
      });
      // Freeing a slice reads its overflow pages: one slice per transaction, requests served in
      // between. A crash midway leaves slices of a purged submission; the next start deletes them.
      for (const { run_id, slices } of ids)
        for (let seq = 0; seq < slices; seq++) {
          await db.exec(run("DELETE FROM content_chunks WHERE run_id = ? AND seq = ?", run_id, seq));
          await Bun.sleep(0);
        }
      total += ids.length;
      if (ids.length < RETENTION_BATCH) break;
      await Bun.sleep(0); // let queued requests run between batches
    }
    return total;
  }

  async function sweep(now = new Date()): Promise<number> {
    let total = 0;
    // The runs in ranges of `scan` by their key, each range read and purged before the next is
    // found; requests are served between ranges. A run written meanwhile falls in a later range
    // or is young: either way nothing is read twice or skipped that the sweep should purge.
    for (let from = ""; ; ) {
      const end = await db.exec(all<{ id: string }>(RANGE_END, from, scan - 1));
      const to = end[0]?.id ?? null;
      total += await sweepRange(now, from, to);
      if (to === null) break;
      from = to;
      await Bun.sleep(0);
    }
    if (total) log.info("retention purged submission content", { submissions: total });
    const entries = await purgeAudit(db, await auditDays(), now);
    if (entries) log.info("retention purged audit entries", { entries });
    return total;
  }

  return {
    sweep,
    /**
     * A sweep `firstAfterMs` after the start, then every `intervalMs`: with the interval alone, a
     * server restarted more often than that (a deploy, a crash loop) never swept.
     */
    start(intervalMs = DAY_MS / 24, firstAfterMs = FIRST_SWEEP_AFTER_MS) {
      // Every node has these timers; one sweeps at a time (src/db/exclusive.ts).
      const tick = () =>
        void runExclusive(db, JOBS.retention, () => sweep()).catch((e) =>
          log.error("retention sweep failed", { error: String(e) }),
        );
      first = setTimeout(tick, firstAfterMs);
      first.unref?.();
      timer = setInterval(tick, intervalMs);
      timer.unref?.();
    },
    stop() {
      if (first) clearTimeout(first);
      if (timer) clearInterval(timer);
    },
  };
}
export type Retention = ReturnType<typeof createRetention>;
