// SQL for API tokens. last_used_at is written in batches by the auth layer, not per request.
import { audit } from "../audit/append.ts";
import type { Actor } from "../audit/types.ts";
import { type Db, countedPage, type Program, all, count, get, run } from "../db/program.ts";
import { now } from "../db/util.ts";

export interface TokenRecord {
  id: number;
  user_id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}
export interface TokenWithDigest extends TokenRecord {
  digest: Uint8Array;
}

const COLS = "id, user_id, name, prefix, created_at, last_used_at, expires_at, revoked_at";

export interface NewToken {
  user_id: number;
  name: string;
  prefix: string;
  digest: Uint8Array;
  expires_at: string | null;
}

/** Inserts a token; also used inside larger transactions (init). */
export function* insertToken(t: NewToken): Program<TokenRecord> {
  const row = yield* get<TokenRecord>(
    `INSERT INTO api_tokens (user_id, name, prefix, digest, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${COLS}`,
    t.user_id,
    t.name,
    t.prefix,
    t.digest,
    now(),
    t.expires_at,
  );
  return row!;
}

/** The token fields the audit log records: never the digest (nor the secret, never stored). */
function* tokenChange(
  actor: Actor,
  action: string,
  t: TokenRecord,
  before: object | null,
  after: object | null,
) {
  const owner = yield* get<{ username: string }>("SELECT username FROM users WHERE id = ?", t.user_id);
  yield* audit(actor, {
    action,
    org_id: null,
    target_type: "token",
    target_id: t.id,
    target_name: t.name,
    before: before as Record<string, unknown> | null,
    after: after as Record<string, unknown> | null,
    context: { owner: owner?.username ?? null, owner_id: t.user_id, prefix: t.prefix },
  });
}

/** A token inserted and logged; also used inside larger transactions (the first run). */
export function* createTokenLogged(t: NewToken, actor: Actor): Program<TokenRecord> {
  const r = yield* insertToken(t);
  yield* tokenChange(actor, "token.create", r, null, { name: r.name, expires_at: r.expires_at });
  return r;
}

/** Tokens of the user that still work: not revoked, not expired, created after `bornAfter`. */
const activeOf = (userId: number, bornAfter: string | null) =>
  count(
    "SELECT count(*) AS n FROM api_tokens WHERE user_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND created_at > ?",
    userId,
    now(),
    bornAfter ?? "",
  );

export function createTokenStore(db: Db) {
  const byId = (id: number) => get<TokenRecord>(`SELECT ${COLS} FROM api_tokens WHERE id = ?`, id);
  // NO KEY UPDATE: creations at once still take turns on the user's row, but the key-share lock
  // of a foreign key check (a run, a workflow version or an idempotency key naming the user) does
  // not wait for it. With FOR UPDATE, a token created while its owner saved workflows deadlocked
  // on PostgreSQL (503).
  const lock = db.dialect === "postgres" ? " FOR NO KEY UPDATE" : "";
  return {
    /** The database, whose cache generation guards verified tokens (src/db/generation.ts). */
    db,
    /**
     * Null, nothing written, when the user already holds `cap.max` active tokens: counted in the
     * inserting transaction, the user's row locked on PostgreSQL, so creations at once (on two
     * nodes) cannot each count the same room.
     */
    async create(
      t: NewToken,
      actor: Actor,
      cap?: { max: number; bornAfter: string | null },
    ): Promise<TokenRecord | null> {
      return db.tx(function* () {
        if (cap) {
          yield* get(`SELECT id FROM users WHERE id = ?${lock}`, t.user_id);
          if ((yield* activeOf(t.user_id, cap.bornAfter)) >= cap.max) return null;
        }
        return yield* createTokenLogged(t, actor);
      });
    },
    /** Candidates for a presented token (normally one row). */
    async findByPrefix(prefix: string): Promise<TokenWithDigest[]> {
      return db.exec(all<TokenWithDigest>(`SELECT ${COLS}, digest FROM api_tokens WHERE prefix = ?`, prefix));
    },
    async get(id: number): Promise<TokenRecord | null> {
      return db.exec(byId(id));
    },
    async listForUser(
      userId: number,
      limit: number,
      offset: number,
    ): Promise<{ count: number; items: TokenRecord[] }> {
      const { count: n, rows } = await countedPage<TokenRecord>(db, {
        count: "SELECT count(*) AS n FROM api_tokens WHERE user_id = CAST(? AS INTEGER)",
        countParams: [userId],
        page: `SELECT ${COLS} FROM api_tokens WHERE user_id = CAST(? AS INTEGER) ORDER BY id DESC LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        pageParams: [userId, limit, offset],
        order: "p.id DESC",
        key: "id",
      });
      return { count: n, items: rows };
    },
    /** Tokens that are neither revoked nor past their expiry. */
    /**
     * Tokens of the user that still work: not revoked, not expired, and created after
     * `bornAfter` when the instance's rotation or maximum lifetime ends older ones (null: none).
     */
    async countActive(userId: number, bornAfter: string | null = null): Promise<number> {
      return db.exec(activeOf(userId, bornAfter));
    },
    /** Revokes a token; logged when it was not revoked already (a second revoke changes nothing). */
    async revoke(id: number, actor: Actor): Promise<TokenRecord | null> {
      return db.tx(function* () {
        const changed = yield* run(
          "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
          now(),
          id,
        );
        const r = yield* byId(id);
        if (changed && r)
          yield* tokenChange(actor, "token.revoke", r, { revoked_at: null }, { revoked_at: r.revoked_at });
        return r;
      });
    },
    /**
     * Flush buffered last-use times in one transaction. Every node (and HTTP thread) flushes its
     * own: a time older than the one stored (another node's later use) is not written, and the
     * rows are taken in id order, so two nodes' flushes cannot deadlock.
     */
    async touch(uses: Map<number, string>): Promise<void> {
      const ordered = [...uses].sort(([a], [b]) => a - b);
      await db.tx(function* () {
        for (const [id, at] of ordered)
          yield* run(
            "UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
            at,
            id,
            at,
          );
      });
    },
  };
}
export type TokenStore = ReturnType<typeof createTokenStore>;
