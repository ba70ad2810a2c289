// SQL for API tokens. last_used_at is written in batches by the auth layer, not per request.
import type { Database } from "bun:sqlite";
import { generationOf } from "../db/generation.ts";
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

export function createTokenStore(db: Database) {
  const byPrefix = db.prepare<TokenWithDigest, [string]>(
    `SELECT ${COLS}, digest FROM api_tokens WHERE prefix = ?`,
  );
  return {
    /** The cache generation of this database (src/db/generation.ts), for verified tokens. */
    generation: generationOf(db),
    async create(t: {
      user_id: number;
      name: string;
      prefix: string;
      digest: Uint8Array;
      expires_at: string | null;
    }): Promise<TokenRecord> {
      return db
        .query<TokenRecord, [number, string, string, Uint8Array, string, string | null]>(
          `INSERT INTO api_tokens (user_id, name, prefix, digest, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${COLS}`,
        )
        .get(t.user_id, t.name, t.prefix, t.digest, now(), t.expires_at)!;
    },
    /** Candidates for a presented token (normally one row). Hot path: prepared once. */
    async findByPrefix(prefix: string): Promise<TokenWithDigest[]> {
      return byPrefix.all(prefix);
    },
    async get(id: number): Promise<TokenRecord | null> {
      return db.query<TokenRecord, [number]>(`SELECT ${COLS} FROM api_tokens WHERE id = ?`).get(id);
    },
    async listForUser(
      userId: number,
      limit: number,
      offset: number,
    ): Promise<{ count: number; items: TokenRecord[] }> {
      const count = (
        db.query("SELECT count(*) AS n FROM api_tokens WHERE user_id = ?").get(userId) as { n: number }
      ).n;
      const items = db
        .query<TokenRecord, [number, number, number]>(
          `SELECT ${COLS} FROM api_tokens WHERE user_id = CAST(? AS INTEGER) ORDER BY id DESC LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        )
        .all(userId, limit, offset);
      return { count, items };
    },
    /** Tokens that are neither revoked nor past their expiry. */
    async countActive(userId: number): Promise<number> {
      return (
        db
          .query(
            "SELECT count(*) AS n FROM api_tokens WHERE user_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)",
          )
          .get(userId, now()) as { n: number }
      ).n;
    },
    async revoke(id: number): Promise<TokenRecord | null> {
      db.query("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(now(), id);
      return this.get(id);
    },
    /** Flush buffered last-use times in one transaction. */
    async touch(uses: Map<number, string>): Promise<void> {
      const st = db.prepare("UPDATE api_tokens SET last_used_at = ? WHERE id = ?");
      db.transaction(() => {
        for (const [id, at] of uses) st.run(at, id);
      })();
    },
  };
}
export type TokenStore = ReturnType<typeof createTokenStore>;
