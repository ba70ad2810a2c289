// SQL for web sessions. The cookie holds a random secret; only its SHA-256 digest is stored, so
// a copy of the database does not hold usable sessions.
import type { Database } from "bun:sqlite";
import { now } from "../db/util.ts";

export interface SessionRow {
  id: number;
  user_id: number;
  csrf: string;
  created_at: string;
  expires_at: string;
}

const COLS = "id, user_id, csrf, created_at, expires_at";

export function createSessionStore(db: Database) {
  // Hot path (every request of the web app): prepared once.
  const byDigest = db.prepare<SessionRow, [Uint8Array]>(`SELECT ${COLS} FROM web_sessions WHERE digest = ?`);
  return {
    async create(s: {
      user_id: number;
      digest: Uint8Array;
      csrf: string;
      expires_at: string;
    }): Promise<SessionRow> {
      return db
        .query<SessionRow, [number, Uint8Array, string, string, string]>(
          `INSERT INTO web_sessions (user_id, digest, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING ${COLS}`,
        )
        .get(s.user_id, s.digest, s.csrf, now(), s.expires_at)!;
    },
    async findByDigest(digest: Uint8Array): Promise<SessionRow | null> {
      return byDigest.get(digest);
    },
    async get(id: number): Promise<SessionRow | null> {
      return db.query<SessionRow, [number]>(`SELECT ${COLS} FROM web_sessions WHERE id = ?`).get(id);
    },
    async delete(id: number): Promise<void> {
      db.query("DELETE FROM web_sessions WHERE id = ?").run(id);
    },
    /** After a password change: every other session of the user ends. */
    async deleteOthers(userId: number, keepId: number | null): Promise<void> {
      db.query("DELETE FROM web_sessions WHERE user_id = ? AND id IS NOT ?").run(userId, keepId);
    },
    async purgeExpired(): Promise<void> {
      db.query("DELETE FROM web_sessions WHERE expires_at <= ?").run(now());
    },
  };
}
export type SessionStore = ReturnType<typeof createSessionStore>;
