// In-memory limit on password attempts (sign-in and password change), per client IP and per
// username: a sliding window of attempt times. Every attempt counts, successful or not, so a
// password spray across many accounts from one address is slowed as much as a guess at one.
// In memory on purpose: one process, and a restart only gives an attacker one more window.
import { AppError } from "../errors.ts";

export interface LoginLimits {
  perUser: number;
  perIp: number;
  windowMs: number;
  disabled?: boolean;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perUser: 10, perIp: 30, windowMs: 60_000 };
const MAX_KEYS = 100_000;

export function createLoginLimiter(limits: LoginLimits = DEFAULT_LOGIN_LIMITS) {
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

  return {
    /** Counts one attempt; throws 429 rate_limited (with Retry-After) once a budget is spent. */
    attempt(ip: string, username: string): void {
      if (limits.disabled) return;
      const nowMs = Date.now();
      sweep(nowMs);
      const keys: [string, number][] = [
        [`ip:${ip}`, limits.perIp],
        [`user:${username.toLowerCase()}`, limits.perUser],
      ];
      for (const [key, max] of keys) {
        const list = recent(key, nowMs);
        if (list.length >= max) {
          const retryS = Math.max(1, Math.ceil((list[0]! + limits.windowMs - nowMs) / 1000));
          throw new AppError(
            429,
            "rate_limited",
            `Too many sign-in attempts. Try again in ${retryS} seconds.`,
            [],
            { "Retry-After": String(retryS) },
          );
        }
      }
      for (const [key] of keys) hits.set(key, [...recent(key, nowMs), nowMs]);
    },
  };
}
export type LoginLimiter = ReturnType<typeof createLoginLimiter>;
