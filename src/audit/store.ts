// Reading the audit log: filtered pages (newest first), export in chunks, the head. Writing is
// append.ts (inside each change's transaction) and retention.ts (the purge).
import { type Db, countedPage, type Param, all, get } from "../db/program.ts";
import type { AuditRow } from "./types.ts";

export interface AuditFilters {
  /** Entries of this org only (an org Admin's view); undefined: every entry (instance admins). */
  orgId?: number;
  actor?: string;
  /** Exact action, or a prefix ending in `.` or `.*` (`workflow.*`: every workflow action). */
  action?: string;
  targetType?: string;
  targetId?: string;
  createdAfter?: string;
  createdBefore?: string;
}

export interface AuditItem extends AuditRow {
  org_slug: string | null;
}

/** The smallest string above every string that starts with `prefix` (byte order: COLLATE "C"). */
const upperBound = (prefix: string) =>
  prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);

function where(f: AuditFilters): { sql: string; params: Param[] } {
  const terms: string[] = [];
  const params: Param[] = [];
  const add = (sql: string, ...p: Param[]) => {
    terms.push(sql);
    params.push(...p);
  };
  if (f.orgId !== undefined) add("a.org_id = CAST(? AS INTEGER)", f.orgId);
  if (f.actor !== undefined) add("a.actor_username = CAST(? AS TEXT)", f.actor);
  if (f.action !== undefined) {
    const prefix = f.action.endsWith(".*") ? f.action.slice(0, -1) : f.action.endsWith(".") ? f.action : null;
    if (prefix) add("a.action >= CAST(? AS TEXT) AND a.action < CAST(? AS TEXT)", prefix, upperBound(prefix));
    else add("a.action = CAST(? AS TEXT)", f.action);
  }
  if (f.targetType !== undefined) add("a.target_type = CAST(? AS TEXT)", f.targetType);
  if (f.targetId !== undefined) add("a.target_id = CAST(? AS TEXT)", f.targetId);
  if (f.createdAfter !== undefined) add("a.created_at >= CAST(? AS TEXT)", f.createdAfter);
  if (f.createdBefore !== undefined) add("a.created_at < CAST(? AS TEXT)", f.createdBefore);
  return { sql: terms.length ? `WHERE ${terms.join(" AND ")}` : "", params };
}

const SELECT = "SELECT a.*, o.slug AS org_slug FROM audit_log a LEFT JOIN orgs o ON o.id = a.org_id";

/** Numbers as numbers on both dialects (the hash is over their JSON). */
export function toRow<T extends AuditRow>(r: T): T {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    ...r,
    seq: Number(r.seq),
    org_id: n(r.org_id),
    actor_user_id: n(r.actor_user_id),
    token_id: n(r.token_id),
    session_id: n(r.session_id),
  };
}

export function createAuditStore(db: Db) {
  return {
    async list(
      f: AuditFilters,
      limit: number,
      offset: number,
    ): Promise<{ count: number; items: AuditItem[] }> {
      const w = where(f);
      const { count: n, rows } = await countedPage<AuditItem>(db, {
        count: `SELECT count(*) AS n FROM audit_log a ${w.sql}`,
        countParams: w.params,
        page: `${SELECT} ${w.sql} ORDER BY a.seq DESC LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        pageParams: [...w.params, limit, offset],
        order: "p.seq DESC",
        key: "seq",
      });
      return { count: n, items: rows.map(toRow) };
    },
    /** Every matching entry, newest first, `chunk` at a time (keyset on seq: no offset scans). */
    async *each(f: AuditFilters, chunk = 500): AsyncGenerator<AuditItem[]> {
      const w = where(f);
      let before: number | null = null;
      for (;;) {
        const keyset = before === null ? "" : `${w.sql ? " AND" : "WHERE"} a.seq < ?`;
        const params: Param[] = before === null ? [...w.params] : [...w.params, before];
        const rows: AuditItem[] = (
          await db.exec(
            all<AuditItem>(
              `${SELECT} ${w.sql}${keyset} ORDER BY a.seq DESC LIMIT CAST(? AS INTEGER)`,
              ...params,
              chunk,
            ),
          )
        ).map(toRow);
        if (!rows.length) return;
        yield rows;
        if (rows.length < chunk) return;
        before = rows.at(-1)!.seq;
      }
    },
    /** The chain's head (the newest entry's seq and hash, and its time); null before the first entry. */
    async head(): Promise<{ seq: number; hash: string; created_at: string | null } | null> {
      const r = await db.exec(
        get<{ seq: number; hash: string; created_at: string | null }>(
          "SELECT h.seq, h.hash, a.created_at FROM audit_head h LEFT JOIN audit_log a ON a.seq = h.seq WHERE h.id = 1",
        ),
      );
      return r ? { seq: Number(r.seq), hash: r.hash, created_at: r.created_at } : null;
    },
  };
}
export type AuditStore = ReturnType<typeof createAuditStore>;
