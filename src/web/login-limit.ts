// The limit on password attempts (sign-in and password change), per client IP and per username:
// a sliding window of attempt times. Every attempt counts, successful or not, so a password spray
// across many accounts from one address is slowed as much as a guess at one. In memory on one
// node (a restart only gives an attacker one more window); in PostgreSQL when several nodes share
// the database (the same window, kept in rate_events by assay_window_take, migration 9), so an
// attacker cannot multiply the budget by the number of nodes.
import { createHash } from "node:crypto";
import type { PgDb } from "../db/postgres.ts";
import { DatabaseUnavailable } from "../db/program.ts";
import { AppError } from "../errors.ts";

export interface LoginLimits {
  perUser: number;
  perIp: number;
  windowMs: number;
  disabled?: boolean;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perUser: 10, perIp: 30, windowMs: 60_000 };
const MAX_KEYS = 100_000;

const refusal = (retryS: number) =>
  new AppError(429, "rate_limited", `Too many sign-in attempts. Try again in ${retryS} seconds.`, [], {
    "Retry-After": String(retryS),
  });

export function createLoginLimiter(limits: LoginLimits = DEFAULT_LOGIN_LIMITS, shared?: PgDb | null) {
  const hits = new Map<string, number[]>();

  const recent = (key: string, nowMs: number) => {
    const list = (hits.get(key) ?? []).filter((t) => t > nowMs - limits.windowMs);
    if (list.length) hits.set(key, list);
    else hits.delete(key);
    return list;
  };

  // A flood of distinct usernames must not grow the map without bound.
  const sweep = (nowMs: number) => {
    if (hits.size < MAX_KEYS) return;
    for (const key of [...hits.keys()]) recent(key, nowMs);
    if (hits.size >= MAX_KEYS) hits.clear();
  };

  async function sharedAttempt(db: PgDb, ip: string, username: string, nowMs: number) {
    let rows: { allowed: boolean; oldest: number | null }[];
    try {
      rows = (await db.sql.unsafe("SELECT k, allowed, oldest FROM assay_window_take($1, $2, $3, $4)", [
        // The username by its digest: any text the client sends (a U+0000 PostgreSQL cannot store,
        // megabytes) becomes a key of fixed size, and the same one on every node.
        [`ip:${ip}`, `user:${createHash("sha256").update(username.toLowerCase()).digest("hex")}`],
        nowMs,
        [limits.perIp, limits.perUser],
        limits.windowMs,
      ])) as { allowed: boolean; oldest: number | null }[];
    } catch (e) {
      throw new DatabaseUnavailable(`sign-in limits unavailable: ${(e as Error).message}`);
    }
    const full = rows.filter((r) => !r.allowed);
    if (!full.length) return;
    const until = Math.max(...full.map((r) => Number(r.oldest ?? nowMs) + limits.windowMs));
    throw refusal(Math.max(1, Math.ceil((until - nowMs) / 1000)));
  }

  return {
    /** Counts one attempt; throws 429 rate_limited (with Retry-After) once a budget is spent. */
    async attempt(ip: string, username: string): Promise<void> {
      if (limits.disabled) return;
      const nowMs = Date.now();
      if (shared) return sharedAttempt(shared, ip, username, nowMs);
      sweep(nowMs);
      const keys: [string, number][] = [
        [`ip:${ip}`, limits.perIp],
        [`user:${username.toLowerCase()}`, limits.perUser],
      ];
      for (const [key, max] of keys) {
        const list = recent(key, nowMs);
        if (list.length >= max) {
          throw refusal(Math.max(1, Math.ceil((list[0]! + limits.windowMs - nowMs) / 1000)));
        }
      }
      for (const [key] of keys) hits.set(key, [...recent(key, nowMs), nowMs]);
    },
  };
}
export type LoginLimiter = ReturnType<typeof createLoginLimiter>;
