// Idempotency-Key on run creation (CONTRACT §4): the same key and the same request within 24 h
// replays the first answer; the same key with another request is 422; while the first request
// is still being answered, 409. Keys are scoped to the user. Only 201/202 answers are recorded:
// a refused request stores nothing, so a corrected retry with the same key goes through. A key is
// linked to its run in the run's transaction (LINK_RUN): a request that dies after that commit
// leaves a key answered from its run, never a free one (a second run).
import { type Db, forUpdate, get, run } from "../db/program.ts";
import { AppError } from "../errors.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/**
 * A key still `in_progress` after this long was left by a request whose server died before it
 * answered (a request holds it for its body, its write and a sync wait of at most 60 s): free
 * again, so the retry goes through instead of a 409 for 24 h. On SQLite a server's start frees
 * them at once (`releaseAbandoned`): no other server holds any.
 */
export const IN_PROGRESS_STALE_MS = 5 * 60 * 1000;

export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * `run`: the key's run exists but its request never recorded an answer (its server died, or it is
 * past IN_PROGRESS_STALE_MS): the retry is answered from the run as it is now, as a replay.
 */
export type Begin =
  | { state: "new" }
  | { state: "replay"; answer: StoredAnswer }
  | { state: "run"; runId: string };

/**
 * A key's row links its run from the run's own transaction (src/runs/store.ts): `body` holds the
 * run's id while `status` is null (no answer recorded yet). A key whose run exists is never freed:
 * its retry replays that run instead of starting a second one.
 */
export const LINK_RUN =
  "UPDATE idempotency_keys SET body = ? WHERE user_id = ? AND key = ? AND state = 'in_progress'";
export const linkParams = (userId: number, key: string, runId: string) => [runId, userId, key];
/** The run a row links and has not answered for, or null. */
const linkedRun = (row: Pick<KeyRow, "status" | "body">) => (row.status === null ? row.body : null);

interface KeyRow {
  request_hash: string;
  state: string;
  status: number | null;
  headers: string | null;
  body: string | null;
  created_at: string;
}

/**
 * What a SQLite server's start runs before it listens (releaseAbandoned): both read only the keys
 * in progress, through the partial index idempotency_keys_in_progress (migration 22), not every
 * key of the window.
 */
export const KEEP_LINKED =
  "UPDATE idempotency_keys SET state = 'done' WHERE state = 'in_progress' AND body IS NOT NULL";
export const FREE_ABANDONED = "DELETE FROM idempotency_keys WHERE state = 'in_progress'";

/** 409 while the key's first request is being answered. */
export const inProgress = () =>
  new AppError(
    409,
    "idempotency_key_in_progress",
    "A request with this Idempotency-Key is still in progress; retry shortly.",
    [],
    { "Retry-After": "1" },
  );

export function createIdempotencyStore(db: Db) {
  const lock = forUpdate(db.dialect);
  let lastPurge = 0;
  return {
    /**
     * Claims the key, or says what to answer instead. The claim is an insert that does nothing on
     * a conflict, so two requests racing with one key (two nodes, or two connections) cannot both
     * win; the loser reads the winner's row, locked.
     */
    async begin(userId: number, key: string, hash: string, legacyHash: string | null = null): Promise<Begin> {
      const nowMs = Date.now();
      const purge = nowMs - lastPurge > 60_000;
      if (purge) lastPurge = nowMs;
      const ts = new Date(nowMs).toISOString();
      const expired = new Date(nowMs - IDEMPOTENCY_TTL_MS).toISOString();
      return db.tx(function* () {
        if (purge) yield* run("DELETE FROM idempotency_keys WHERE created_at < ?", expired);
        const claimed = yield* run(
          "INSERT INTO idempotency_keys (user_id, key, request_hash, state, created_at) VALUES (?, ?, ?, 'in_progress', ?) ON CONFLICT (user_id, key) DO NOTHING",
          userId,
          key,
          hash,
          ts,
        );
        if (claimed) return { state: "new" } as Begin;
        const row = (yield* get<KeyRow>(
          `SELECT request_hash, state, status, headers, body, created_at FROM idempotency_keys WHERE user_id = ? AND key = ?${lock}`,
          userId,
          key,
        ))!;
        const stale =
          row.state === "in_progress" &&
          row.created_at < new Date(nowMs - IN_PROGRESS_STALE_MS).toISOString();
        const linked = linkedRun(row);
        // Left in progress with no run: the request died before it committed one.
        const abandoned = stale && linked === null;
        if (row.created_at < expired || abandoned) {
          // A key older than the window, or left in progress by a server that died, is free
          // again: this request takes it over.
          yield* run(
            "UPDATE idempotency_keys SET request_hash = ?, state = 'in_progress', status = NULL, headers = NULL, body = NULL, created_at = ? WHERE user_id = ? AND key = ?",
            hash,
            ts,
            userId,
            key,
          );
          return { state: "new" } as Begin;
        }
        if (row.request_hash !== hash && row.request_hash !== legacyHash)
          throw new AppError(
            422,
            "idempotency_key_reused",
            "This Idempotency-Key was used with a different request.",
          );
        // Its request died after the run's commit (or a restart freed it: releaseAbandoned).
        if (linked !== null && (stale || row.state === "done"))
          return { state: "run", runId: linked } as Begin;
        if (row.state === "in_progress") throw inProgress();
        return {
          state: "replay",
          answer: { status: row.status!, headers: JSON.parse(row.headers ?? "{}"), body: row.body ?? "" },
        } as Begin;
      });
    },
    /** The answer recorded for this key and request within the window, or null (nothing claimed). */
    async peek(
      userId: number,
      key: string,
      hash: string,
      legacyHash: string | null = null,
    ): Promise<Exclude<Begin, { state: "new" }> | null> {
      const row = await db.exec(
        get<KeyRow>(
          "SELECT request_hash, state, status, headers, body, created_at FROM idempotency_keys WHERE user_id = ? AND key = ?",
          userId,
          key,
        ),
      );
      const expired = new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString();
      const same = row?.request_hash === hash || (legacyHash !== null && row?.request_hash === legacyHash);
      if (row?.state !== "done" || !same || row.created_at < expired) return null;
      const linked = linkedRun(row);
      if (linked !== null) return { state: "run", runId: linked };
      return {
        state: "replay",
        answer: { status: row.status!, headers: JSON.parse(row.headers ?? "{}"), body: row.body ?? "" },
      };
    },
    /**
     * The key's answered request within the window, whatever the request now: its hash, its run,
     * and the answer recorded (null: answered from the run). Read only, after a refusal
     * (service.replayByKey): the retry of a request whose workflow was deleted since, or whose
     * caller may now only read the run. "in_progress": its first request is still in flight.
     */
    async answered(
      userId: number,
      key: string,
    ): Promise<{ hash: string; runId: string; answer: StoredAnswer | null } | "in_progress" | null> {
      const row = await db.exec(
        get<KeyRow>(
          "SELECT request_hash, state, status, headers, body, created_at FROM idempotency_keys WHERE user_id = ? AND key = ?",
          userId,
          key,
        ),
      );
      const nowMs = Date.now();
      const expired = new Date(nowMs - IDEMPOTENCY_TTL_MS).toISOString();
      // Its first request is still being answered (what it asked cannot be told yet): 409 too.
      if (
        row?.state === "in_progress" &&
        row.created_at >= new Date(nowMs - IN_PROGRESS_STALE_MS).toISOString()
      )
        return "in_progress";
      if (row?.state !== "done" || row.created_at < expired || row.body === null) return null;
      const linked = linkedRun(row);
      if (linked !== null) return { hash: row.request_hash, runId: linked, answer: null };
      const runId = (JSON.parse(row.body) as { id?: unknown }).id;
      if (typeof runId !== "string") return null;
      return {
        hash: row.request_hash,
        runId,
        answer: { status: row.status!, headers: JSON.parse(row.headers ?? "{}"), body: row.body },
      };
    },
    async complete(userId: number, key: string, a: StoredAnswer): Promise<void> {
      await db.exec(
        run(
          "UPDATE idempotency_keys SET state = 'done', status = ?, headers = ?, body = ? WHERE user_id = ? AND key = ?",
          a.status,
          JSON.stringify(a.headers),
          a.body,
          userId,
          key,
        ),
      );
    },
    /**
     * At a single server's start (SQLite): keys its previous life left in progress are free, but
     * those whose run was committed stay taken, answered from their run (begin).
     */
    async releaseAbandoned(): Promise<number> {
      return db.tx(function* () {
        yield* run(KEEP_LINKED);
        return yield* run(FREE_ABANDONED);
      });
    },
    /** A refused request's key is free again, unless its run was committed meanwhile. */
    async release(userId: number, key: string): Promise<void> {
      await db.exec(
        run(
          "DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND state = 'in_progress' AND body IS NULL",
          userId,
          key,
        ),
      );
    },
  };
}
export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
