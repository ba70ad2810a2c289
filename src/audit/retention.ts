// The audit log's retention (instance setting `audit_retention_days`; null keeps everything).
// Entries are removed from the start of the chain only, in batches, each batch in one
// transaction that also moves the chain's floor (audit_head.floor_*: the last removed entry's
// seq and hash) and appends an `audit.purge` entry naming it, so `assay audit verify` can tell
// a purge from a deletion (docs/audit.md).
import { type Db, type Program, count, forUpdate, get, run } from "../db/program.ts";
import { SYSTEM } from "./actor.ts";
import { audit } from "./append.ts";

export const AUDIT_PURGE_BATCH = 1000;
const DAY_MS = 86_400_000;

function* purgeBatch(db: Db, throughSeq: number, days: number): Program<number> {
  const h = yield* get<{ floor_seq: number }>(
    `SELECT floor_seq FROM audit_head WHERE id = 1${forUpdate(db.dialect)}`,
  );
  if (!h) return 0;
  const upTo = Math.min(throughSeq, Number(h.floor_seq) + AUDIT_PURGE_BATCH);
  const last = yield* get<{ seq: number; hash: string }>(
    "SELECT seq, hash FROM audit_log WHERE seq <= ? ORDER BY seq DESC LIMIT 1",
    upTo,
  );
  if (!last || Number(last.seq) <= Number(h.floor_seq)) return 0;
  const seq = Number(last.seq);
  const removed = yield* run("DELETE FROM audit_log WHERE seq <= ?", seq);
  yield* run("UPDATE audit_head SET floor_seq = ?, floor_hash = ? WHERE id = 1", seq, last.hash);
  yield* audit(SYSTEM, {
    action: "audit.purge",
    org_id: null,
    target_type: "audit_log",
    target_id: null,
    after: { through_seq: seq, through_hash: last.hash, removed },
    context: { retention_days: days },
  });
  return removed;
}

/** Removes entries older than `days` before `now`; returns how many. */
export async function purgeAudit(db: Db, days: number | null, now = new Date()): Promise<number> {
  if (days == null || days <= 0) return 0;
  const cutoff = new Date(now.getTime() - days * DAY_MS).toISOString();
  // The newest entry older than the cutoff: everything up to it goes (entries are in time order).
  const through = await db.exec(
    count("SELECT coalesce(max(seq), 0) AS n FROM audit_log WHERE created_at < CAST(? AS TEXT)", cutoff),
  );
  let total = 0;
  for (;;) {
    const removed = await db.tx(() => purgeBatch(db, through, days));
    total += removed;
    if (removed === 0) return total;
    await Bun.sleep(0); // requests run between batches
  }
}
