// `assay audit verify`: walks the chain from its oldest entry to the head and reports the first
// broken link. What a pass proves, and what it does not, is in docs/audit.md.
//
// The whole walk reads one snapshot (a read transaction; REPEATABLE READ on PostgreSQL): read in
// chunks outside one, an entry appended between the head's read and the last chunk's, or a purge
// between two chunks, was reported as a broken chain.
import { type Db, type Program, all, get, run } from "../db/program.ts";
import { parseJson } from "../db/util.ts";
import { GENESIS, hashOf } from "./chain.ts";
import { toRow } from "./store.ts";
import type { AuditRow } from "./types.ts";

export interface Broken {
  seq: number;
  reason: string;
}
export interface VerifyResult {
  ok: boolean;
  /** Entries whose hash was recomputed. */
  checked: number;
  first: number | null;
  head: { seq: number; hash: string } | null;
  broken: Broken | null;
  /** With an anchor: checked, or purged meanwhile (older than the retention: not checkable). */
  anchor: "matched" | "purged" | null;
}

const CHUNK = 1000;

export interface VerifyOptions {
  /** Entries read per statement. */
  chunk?: number;
  /** Called after each chunk is read, inside the snapshot (tests append or purge here). */
  afterChunk?: () => void;
}

interface HeadRow {
  seq: number;
  hash: string;
  floor_seq: number;
  floor_hash: string;
}

/** `anchor`: an entry's seq and hash recorded elsewhere earlier (the exported head). */
export function verifyChain(
  db: Db,
  anchor?: { seq: number; hash: string },
  opts: VerifyOptions = {},
): Promise<VerifyResult> {
  return db.tx(() => walk(db, anchor, opts));
}

function* walk(
  db: Db,
  anchor: { seq: number; hash: string } | undefined,
  opts: VerifyOptions,
): Program<VerifyResult> {
  const chunk = opts.chunk ?? CHUNK;
  // First in the transaction, as PostgreSQL requires; SQLite's deferred BEGIN takes its snapshot
  // at the first read, which is the head's.
  if (db.dialect === "postgres") yield* run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
  const h = yield* get<HeadRow>("SELECT seq, hash, floor_seq, floor_hash FROM audit_head WHERE id = 1");
  const head = h ? { seq: Number(h.seq), hash: h.hash } : null;
  const floorSeq = h ? Number(h.floor_seq) : 0;
  let expectSeq = floorSeq + 1;
  let expectPrev = h ? h.floor_hash : GENESIS;
  let checked = 0;
  let first: number | null = null;
  let last: AuditRow | null = null;
  let lastPurge: AuditRow | null = null;
  let anchorSeen = false;
  const result = (broken: Broken | null): VerifyResult => ({
    ok: !broken,
    checked,
    first,
    head,
    broken,
    anchor: !anchor || broken ? null : anchorSeen ? "matched" : "purged",
  });

  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    // From the very start: an entry below the floor (the purge removed those) is itself a finding.
    const rows = (yield* all<AuditRow>(
      "SELECT * FROM audit_log WHERE seq > ? ORDER BY seq LIMIT CAST(? AS INTEGER)",
      after,
      chunk,
    )).map(toRow);
    opts.afterChunk?.();
    for (const e of rows) {
      first ??= e.seq;
      if (e.seq < expectSeq)
        return result({
          seq: e.seq,
          reason: `entry ${e.seq} lies before the chain's start (${expectSeq}): it was inserted, or the purge record was changed`,
        });
      if (e.seq > expectSeq)
        return result({
          seq: expectSeq,
          reason:
            e.seq === expectSeq + 1
              ? `entry ${expectSeq} is missing (deleted)`
              : `entries ${expectSeq} to ${e.seq - 1} are missing (deleted)`,
        });
      // Past the head read in this snapshot: no appender wrote it (appenders move the head in the
      // same transaction), so it was inserted; reported as such, not as entries removed.
      if (head && e.seq > head.seq)
        return result({
          seq: e.seq,
          reason: `entry ${e.seq} follows the head (entry ${head.seq}): it was inserted, or the head was changed`,
        });
      const { hash, ...content } = e;
      if (hashOf(content) !== hash)
        return result({ seq: e.seq, reason: `entry ${e.seq} does not match its hash: it was changed` });
      if (e.prev_hash !== expectPrev)
        return result({
          seq: e.seq,
          reason:
            e.seq === floorSeq + 1
              ? `entry ${e.seq} does not follow the purged part of the log (floor ${floorSeq}): the purge record or the entry was changed`
              : `entry ${e.seq} does not follow entry ${e.seq - 1} (prev_hash differs): entry ${e.seq - 1} was changed or replaced`,
        });
      if (anchor && e.seq === anchor.seq) {
        anchorSeen = true;
        if (e.hash !== anchor.hash)
          return result({
            seq: e.seq,
            reason: `entry ${e.seq} is not the one recorded elsewhere (hash ${e.hash.slice(0, 12)}…, expected ${anchor.hash.slice(0, 12)}…): the log was rewritten from here or before`,
          });
      }
      if (e.action === "audit.purge") lastPurge = e;
      checked++;
      expectPrev = e.hash;
      expectSeq = e.seq + 1;
      last = e;
    }
    if (rows.length < chunk) break;
    after = rows.at(-1)!.seq;
  }

  if (head && (!last || last.seq !== head.seq || last.hash !== head.hash))
    return result({
      seq: last ? last.seq + 1 : expectSeq,
      reason: last
        ? `the log ends at entry ${last.seq} but its head names entry ${head.seq}: entries were removed from the end, or the head was changed`
        : `the log is empty but its head names entry ${head.seq}: entries were removed`,
    });
  if (!head && last)
    return result({ seq: last.seq, reason: "the log has entries but no head: the head was removed" });
  if (!head && !last) {
    // An empty log is fine on an instance with nothing made since the log began (an upgrade from a
    // release before it); a user or org created since wrote an entry, so the log was emptied.
    const since = yield* get<{ applied_at: string }>(
      "SELECT applied_at FROM assay_schema_migrations WHERE version = 16",
    );
    const made = since
      ? yield* get<{ n: number }>(
          "SELECT (SELECT count(*) FROM users WHERE created_at >= ?) + (SELECT count(*) FROM orgs WHERE created_at >= ?) AS n",
          since.applied_at,
          since.applied_at,
        )
      : null;
    if (made && Number(made.n) > 0)
      return result({
        seq: 1,
        reason: `the log is empty, but ${Number(made.n)} users and organizations were created since it began (${since!.applied_at}), each with an entry: the log and its head were removed`,
      });
  }
  if (floorSeq > 0) {
    const through = lastPurge
      ? parseJson<{ after?: { through_seq?: number; through_hash?: string } }>(lastPurge.changes, {}).after
      : null;
    if (!through || through.through_seq !== floorSeq || through.through_hash !== h!.floor_hash)
      return result({
        seq: floorSeq + 1,
        reason: `the log starts after entry ${floorSeq}, but no purge entry records that: entries were removed from the start`,
      });
  }
  if (anchor && !anchorSeen) {
    if (anchor.seq > (last?.seq ?? floorSeq))
      return result({
        seq: anchor.seq,
        reason: `entry ${anchor.seq}, recorded elsewhere, is not in the log any more: entries were removed from the end`,
      });
    if (anchor.seq === floorSeq && anchor.hash !== h!.floor_hash)
      return result({
        seq: anchor.seq,
        reason: `entry ${anchor.seq} (purged) had another hash than the one recorded elsewhere`,
      });
    if (anchor.seq === floorSeq) anchorSeen = true;
  }
  return result(null);
}
