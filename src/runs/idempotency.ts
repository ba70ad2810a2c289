// Idempotency-Key on run creation (CONTRACT §4): the same key and the same request within 24 h
// replays the first answer; the same key with another request is 422; while the first request
// is still being answered, 409. Keys are scoped to the user. Only 201/202 answers are recorded:
// a refused request stores nothing, so a corrected retry with the same key goes through.
import type { Database } from "bun:sqlite";
import { AppError } from "../errors.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Begin = { state: "new" } | { state: "replay"; answer: StoredAnswer };

export function createIdempotencyStore(db: Database) {
  const sel = db.prepare<
    {
      request_hash: string;
      state: string;
      status: number | null;
      headers: string | null;
      body: string | null;
      created_at: string;
    },
    [number, string]
  >(
    "SELECT request_hash, state, status, headers, body, created_at FROM idempotency_keys WHERE user_id = ? AND key = ?",
  );
  let lastPurge = 0;
  return {
    async begin(userId: number, key: string, hash: string): Promise<Begin> {
      return db.transaction((): Begin => {
        const nowMs = Date.now();
        if (nowMs - lastPurge > 60_000) {
          lastPurge = nowMs;
          db.query("DELETE FROM idempotency_keys WHERE created_at < ?").run(
            new Date(nowMs - IDEMPOTENCY_TTL_MS).toISOString(),
          );
        }
        const row = sel.get(userId, key);
        if (row && Date.parse(row.created_at) > nowMs - IDEMPOTENCY_TTL_MS) {
          if (row.request_hash !== hash)
            throw new AppError(
              422,
              "idempotency_key_reused",
              "This Idempotency-Key was used with a different request.",
            );
          if (row.state === "in_progress")
            throw new AppError(
              409,
              "idempotency_key_in_progress",
              "A request with this Idempotency-Key is still in progress; retry shortly.",
              [],
              { "Retry-After": "1" },
            );
          return {
            state: "replay",
            answer: { status: row.status!, headers: JSON.parse(row.headers ?? "{}"), body: row.body ?? "" },
          };
        }
        db.query(
          "INSERT OR REPLACE INTO idempotency_keys (user_id, key, request_hash, state, created_at) VALUES (?, ?, ?, 'in_progress', ?)",
        ).run(userId, key, hash, new Date(nowMs).toISOString());
        return { state: "new" };
      })();
    },
    async complete(userId: number, key: string, a: StoredAnswer): Promise<void> {
      db.query(
        "UPDATE idempotency_keys SET state = 'done', status = ?, headers = ?, body = ? WHERE user_id = ? AND key = ?",
      ).run(a.status, JSON.stringify(a.headers), a.body, userId, key);
    },
    async release(userId: number, key: string): Promise<void> {
      db.query("DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND state = 'in_progress'").run(
        userId,
        key,
      );
    },
  };
}
export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
