// SQL for web sessions. The cookie holds a random secret; only its SHA-256 digest is stored, so
// a copy of the database does not hold usable sessions.
import { type Db, type Program, get, run } from "../db/program.ts";
import { now } from "../db/util.ts";

export interface SessionRow {
  id: number;
  user_id: number;
  csrf: string;
  created_at: string;
  expires_at: string;
}

const COLS = "id, user_id, csrf, created_at, expires_at";

/** Expired sessions one sign-in removes at most. */
export const SESSION_PURGE_BATCH = 100;

// A subquery: SQLite's DELETE takes no LIMIT unless compiled with it, PostgreSQL's none at all.
export const PURGE_EXPIRED =
  "DELETE FROM web_sessions WHERE id IN (SELECT id FROM web_sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT CAST(? AS INTEGER))";

export interface NewSession {
  user_id: number;
  digest: Uint8Array;
  csrf: string;
  expires_at: string;
}

/** Inserts a session; composed into the sign-in transaction (src/web/sessions.ts). */
export function* insertSession(s: NewSession): Program<SessionRow> {
  const row = yield* get<SessionRow>(
    `INSERT INTO web_sessions (user_id, digest, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING ${COLS}`,
    s.user_id,
    s.digest,
    s.csrf,
    now(),
    s.expires_at,
  );
  return row!;
}

export const deleteSession = (id: number) => run("DELETE FROM web_sessions WHERE id = ?", id);

/** After a password change: every other session of the user ends. */
export const deleteOtherSessions = (userId: number, keepId: number | null) =>
  run(
    "DELETE FROM web_sessions WHERE user_id = ? AND id <> coalesce(CAST(? AS INTEGER), -1)",
    userId,
    keepId,
  );

export function createSessionStore(db: Db) {
  return {
    /** Hot path (every request of the web app). */
    async findByDigest(digest: Uint8Array): Promise<SessionRow | null> {
      return db.exec(get<SessionRow>(`SELECT ${COLS} FROM web_sessions WHERE digest = ?`, digest));
    },
    async get(id: number): Promise<SessionRow | null> {
      return db.exec(get<SessionRow>(`SELECT ${COLS} FROM web_sessions WHERE id = ?`, id));
    },

    /**
     * Removes up to SESSION_PURGE_BATCH expired sessions, oldest first (a seek into
     * web_sessions_expires, migration 20): one sign-in's cost stays bounded however many
     * sessions expired meanwhile, and since a sign-in adds one session the backlog only shrinks.
     * Returns how many were removed.
     */
    async purgeExpired(limit = SESSION_PURGE_BATCH): Promise<number> {
      return db.exec(run(PURGE_EXPIRED, now(), limit));
    },
  };
}
export type SessionStore = ReturnType<typeof createSessionStore>;
