// Rate limits shared by the nodes of one PostgreSQL database: the same GCRA as RateLimiter
// (src/http/ratelimit.ts), its state (one TAT per key) in the rate_limits table, one request
// checked against several budgets at once — a token's and its user's — all or nothing, in one
// statement (the assay_rate_take function, migration 9). A client therefore gets one budget
// however many nodes it spreads its requests over. One round trip per check: the price of that
// guarantee (docs/scaling.md). On SQLite there is one node and the in-memory limiter is used.
import { JOBS, runExclusive } from "../db/exclusive.ts";
import type { AnyDb } from "../db/open.ts";
import type { PgDb } from "../db/postgres.ts";
import type { Logger } from "../lib/log.ts";
import { DatabaseUnavailable } from "../db/program.ts";
import { type Decision, type Policy, decisionOf, uncountedOf } from "./ratelimit.ts";

/** Sign-in attempts are kept this long at most (windows are a minute; docs/scaling.md). */
const EVENTS_KEPT_MS = 60 * 60_000;

export interface Budget {
  policy: Policy;
  key: string;
}

interface Row {
  k: string;
  allowed: boolean;
  tat: number;
}

/** Budgets kept in PostgreSQL (`take`) and their garbage collection (`sweep`). */
export function createSharedLimiter(db: PgDb, now: () => number = Date.now) {
  return {
    /**
     * Checks one request against every budget given; counted in all only when all allow it.
     * Each decision carries the budget's TAT as stored after the request. A refused request shows
     * each budget as it stands (uncountedOf), as the in-memory limiters do.
     */
    async take(budgets: Budget[]): Promise<(Decision & { tat: number })[]> {
      const t = now();
      // Keys are namespaced by policy: a token key and a user key never meet.
      const keys = budgets.map((b) => `${b.policy.name}:${b.key}`);
      let rows: Row[];
      try {
        rows = (await db.sql.unsafe("SELECT k, allowed, tat FROM assay_rate_take($1, $2, $3, $4)", [
          keys,
          t,
          budgets.map((b) => (b.policy.windowSeconds * 1000) / b.policy.limit),
          budgets.map((b) => b.policy.windowSeconds * 1000),
        ])) as Row[];
      } catch (e) {
        throw new DatabaseUnavailable(`rate limits unavailable: ${(e as Error).message}`);
      }
      const all = rows.every((r) => r.allowed);
      return budgets.map((b, i) => {
        const r = rows[i]!;
        // The TAT as it stood before this request: advanced by one interval when it was taken.
        const interval = (b.policy.windowSeconds * 1000) / b.policy.limit;
        if (!all) return { ...uncountedOf(b.policy, t, Number(r.tat)), tat: Number(r.tat) };
        return { ...decisionOf(b.policy, t, Number(r.tat) - interval), tat: Number(r.tat) };
      });
    },
    /**
     * Forgets keys whose budget is whole again (their TAT is in the past) and sign-in attempts
     * older than any window (the limiter deletes a key's old attempts only when it sees the key).
     */
    async sweep(): Promise<number> {
      const t = now();
      const limits = (await db.sql.unsafe("DELETE FROM rate_limits WHERE tat < $1 RETURNING key", [
        t,
      ])) as unknown[];
      const events = (await db.sql.unsafe("DELETE FROM rate_events WHERE at < $1 RETURNING key", [
        t - EVENTS_KEPT_MS,
      ])) as unknown[];
      return limits.length + events.length;
    },
  };
}
export type SharedLimiter = ReturnType<typeof createSharedLimiter>;

/**
 * The sweep on a timer, on every node; one node at a time does it (src/db/exclusive.ts).
 * Nothing on SQLite: its limiters live in memory. Returns the stop function.
 */
export function startSharedRateGc(db: AnyDb, log: Logger, everyMs = 60_000): () => void {
  if (db.dialect !== "postgres") return () => {};
  const limiter = createSharedLimiter(db);
  const timer = setInterval(
    () =>
      void runExclusive(db, JOBS.rateLimitGc, () => limiter.sweep()).catch((e) =>
        log.warn("rate-limit sweep failed", { error: String(e) }),
      ),
    everyMs,
  );
  timer.unref?.();
  return () => clearInterval(timer);
}
