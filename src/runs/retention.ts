// Retention: submission content older than its workflow's retention_days (or the instance
// default) is purged; the run, its findings and the content's sha256 stay. The sweep works in
// small batches, each its own short transaction, yielding between batches so requests are not
// blocked behind one long write.
import type { Database } from "bun:sqlite";
import type { Logger } from "../lib/log.ts";

export const RETENTION_BATCH = 500;
const DAY_MS = 86_400_000;

export function createRetention(db: Database, log: Logger, defaultDays: number) {
  // Candidates: content still present, run final, older than the applicable retention.
  const pick = db.prepare<{ id: number; run_id: string; slices: number }, [number, string, number]>(`
    SELECT s.id, r.id AS run_id, s.content_chunks AS slices FROM submissions s
    JOIN runs r ON r.submission_id = s.id
    JOIN workflows w ON w.id = r.workflow_id
    WHERE (s.content IS NOT NULL OR s.content_chunks > 0)
      AND r.status NOT IN ('queued', 'running')
      AND coalesce(w.retention_days, CAST(? AS INTEGER)) > 0
      AND s.created_at < strftime('%Y-%m-%dT%H:%M:%fZ', CAST(? AS TEXT), '-' || coalesce(w.retention_days, CAST(? AS INTEGER)) || ' days')
    LIMIT ${RETENTION_BATCH}`);
  const purge = db.prepare(
    "UPDATE submissions SET content = NULL, content_chunks = 0, purged_at = ? WHERE id = ?",
  );
  // Content over 1 MiB is stored in slices keyed by the run (src/runs/content-store.ts). Freeing a
  // 1 MiB slice reads its overflow pages: one slice per transaction, requests served in between.
  // A crash midway leaves slices of a purged submission, which the next start deletes.
  const purgeSlice = db.prepare("DELETE FROM content_chunks WHERE run_id = ? AND seq = ?");
  let timer: ReturnType<typeof setInterval> | null = null;

  async function sweep(now = new Date()): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = pick.all(defaultDays, now.toISOString(), defaultDays);
      if (!ids.length) break;
      const ts = new Date().toISOString();
      db.transaction(() => {
        for (const { id } of ids) purge.run(ts, id);
      })();
      for (const { run_id, slices } of ids)
        for (let seq = 0; seq < slices; seq++) {
          purgeSlice.run(run_id, seq);
          await Bun.sleep(0);
        }
      total += ids.length;
      if (ids.length < RETENTION_BATCH) break;
      await Bun.sleep(0); // let queued requests run between batches
    }
    if (total) log.info("retention purged submission content", { submissions: total });
    return total;
  }

  return {
    sweep,
    start(intervalMs = DAY_MS / 24) {
      timer = setInterval(
        () => void sweep().catch((e) => log.error("retention sweep failed", { error: String(e) })),
        intervalMs,
      );
      timer.unref?.();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
export type Retention = ReturnType<typeof createRetention>;
