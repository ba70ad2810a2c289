// Rate limits shared by the nodes of one PostgreSQL database: the same GCRA as RateLimiter
// (src/http/ratelimit.ts), its state (one TAT per key) in the rate_limits table, one request
// checked against several budgets at once — a token's and its user's — all or nothing, in one
// statement (the assay_rate_take function, migration 9). A client therefore gets one budget
// however many nodes it spreads its requests over. One round trip per check: the price of that
// guarantee (docs/scaling.md). On SQLite there is one node and the in-memory limiter is used.
import type { PgDb } from "../db/postgres.ts";
import { DatabaseUnavailable } from "../db/program.ts";
import { type Decision, type Policy, decisionOf } from "./ratelimit.ts";

export interface Budget {
  policy: Policy;
  key: string;
}

interface Row {
  k: string;
  allowed: boolean;
  tat: number;
}

/** Checks one request against every budget given; counted in all only when all allow it. */
export function createSharedLimiter(db: PgDb, now: () => number = Date.now) {
  return {
    async take(budgets: Budget[]): Promise<Decision[]> {
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
        const before = all ? Number(r.tat) - interval : Number(r.tat);
        return decisionOf(b.policy, t, before);
      });
    },
    /** Forgets keys whose budget is whole again (their TAT is in the past). */
    async sweep(): Promise<number> {
      const rows = (await db.sql.unsafe("DELETE FROM rate_limits WHERE tat < $1 RETURNING key", [
        now(),
      ])) as unknown[];
      return rows.length;
    },
  };
}
export type SharedLimiter = ReturnType<typeof createSharedLimiter>;
