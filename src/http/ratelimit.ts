// A rate limiter with smooth refill: GCRA (the generic cell rate algorithm), which behaves
// exactly like a token bucket of `limit` tokens refilled evenly over the window, but keeps a
// single number per key — the "theoretical arrival time" (TAT) of the next request.
//
// O(1) per request and bounded memory: keys live in two generations of Maps. Every window (or
// sooner, when the young generation holds maxKeys/2 keys) the old generation is dropped and the
// young one becomes old. A key untouched for a whole window has a full bucket again, so
// forgetting it changes nothing; only a flood of more than maxKeys/2 keys per window forgets
// live keys early (each then starts with a fresh budget). Deleting from the front of one big
// Map instead is quadratic in JavaScriptCore (iteration skips the deleted slots).
//
// Pure: the clock is injected, so tests can walk time exactly.

export interface Policy {
  /** Name shown in RateLimit-Policy / RateLimit (IETF httpapi ratelimit-headers draft). */
  name: string;
  /** Requests allowed per window at the sustained rate. */
  limit: number;
  windowSeconds: number;
}

export interface Decision {
  policy: Policy;
  allowed: boolean;
  /** Requests still allowed right now (the draft's `r`). */
  remaining: number;
  /** Seconds until the budget is whole again (the draft's `t`, allowed or refused alike). */
  resetSeconds: number;
  /** Seconds to wait before the next request can pass (≥ 1 when refused; 0 when allowed). */
  retryAfterSeconds: number;
}

export interface LimiterOptions {
  now?: () => number;
  /** Most entries held at once (default 100,000: a few MB). */
  maxKeys?: number;
}

// Float slack: limit/window rarely divides evenly (60000 ms / 7), and sums of the interval
// must not refuse the request that exactly fills the bucket.
const EPS = 1e-6;

export class RateLimiter {
  readonly policy: Policy;
  private readonly interval: number;
  private readonly now: () => number;
  private readonly maxKeys: number;
  private readonly windowMs: number;
  /** key → TAT in ms: keys written since the last rotation, and those of the generation before. */
  private young = new Map<string, number>();
  private old = new Map<string, number>();
  private rotatedAt: number;

  constructor(policy: Policy, opts: LimiterOptions = {}) {
    if (!(policy.limit >= 1) || !(policy.windowSeconds > 0)) throw new RangeError("invalid rate policy");
    this.policy = policy;
    this.interval = (policy.windowSeconds * 1000) / policy.limit;
    this.now = opts.now ?? Date.now;
    this.maxKeys = Math.max(2, opts.maxKeys ?? 100_000);
    this.windowMs = policy.windowSeconds * 1000;
    this.rotatedAt = this.now();
  }

  /** Counts one request for `key` if the budget allows it. */
  take(key: string): Decision {
    const now = this.now();
    if (now - this.rotatedAt >= this.windowMs) this.rotate(now);
    const { tat, decision } = this.decide(key, now);
    if (decision.allowed) {
      this.young.set(key, tat);
      if (this.young.size >= this.maxKeys / 2) this.rotate(now);
    }
    return decision;
  }

  /** What `take` would answer, without counting anything. */
  peek(key: string): Decision {
    return this.decide(key, this.now()).decision;
  }

  /** The budget as it stands, for a request counted nowhere (see uncountedOf). */
  uncounted(key: string): Decision {
    const now = this.now();
    return uncountedOf(this.policy, now, this.young.get(key) ?? this.old.get(key) ?? now);
  }

  /** Entries held (a key may be counted in both generations): at most maxKeys. */
  get size(): number {
    return this.young.size + this.old.size;
  }

  private decide(key: string, now: number): { tat: number; decision: Decision } {
    const tat = Math.max(this.young.get(key) ?? this.old.get(key) ?? now, now);
    const decision = decisionOf(this.policy, now, tat);
    return { tat: decision.allowed ? tat + this.interval : tat, decision };
  }

  private rotate(now: number) {
    this.old = this.young;
    this.young = new Map();
    this.rotatedAt = now;
  }
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000 - EPS));

/**
 * GCRA's answer for one request at `now` against a budget whose theoretical arrival time is
 * `storedTat` (before this request): allowed or not, and the header values. Shared by the
 * in-memory limiter and the one in PostgreSQL (src/http/ratelimit-shared.ts).
 */
export function decisionOf(policy: Policy, now: number, storedTat: number): Decision {
  const interval = (policy.windowSeconds * 1000) / policy.limit;
  const tolerance = policy.windowSeconds * 1000; // the bucket: `limit` intervals
  const tat = Math.max(storedTat, now);
  const ahead = tat + interval - now; // how far this request would push the bucket's debt
  if (ahead > tolerance + EPS)
    return {
      policy,
      allowed: false,
      remaining: 0,
      resetSeconds: seconds(tat - now),
      retryAfterSeconds: Math.max(1, seconds(ahead - tolerance)),
    };
  return {
    policy,
    allowed: true,
    remaining: Math.floor((tolerance - ahead) / interval + EPS),
    resetSeconds: seconds(ahead),
    retryAfterSeconds: 0,
  };
}

/**
 * decisionOf for a request that was not counted, because this budget or another one checked with
 * it refused it: `allowed` is still this budget's own answer (which one refused), but `r` and `t`
 * are the budget as it stands now, without this request. decisionOf's are what would be left
 * after it, which a refused request never takes: a 429 showed one request less than the 200
 * before it, and the same again on every retry, though a refused request costs nothing
 * (docs/limits.md). A refused budget's own values already are as it stands (r=0).
 */
export function uncountedOf(policy: Policy, now: number, storedTat: number): Decision {
  const d = decisionOf(policy, now, storedTat);
  if (!d.allowed) return d;
  // One interval less ahead than decisionOf counted: exactly one more request left.
  return { ...d, remaining: d.remaining + 1, resetSeconds: seconds(Math.max(storedTat, now) - now) };
}

/** `RateLimit-Policy` value: a structured-field List of policy Items, e.g. "default";q=1200;w=60. */
export function policyHeader(policies: Policy[]): string {
  return policies.map((p) => `"${p.name}";q=${p.limit};w=${p.windowSeconds}`).join(", ");
}

/**
 * `RateLimit` value: a List of service-limit Items, e.g. "default";r=1187;t=12. `t` is always the
 * seconds until the budget is whole again, so a 429 and the 201 before it tell the same story;
 * when to retry is Retry-After's job.
 */
export function limitHeader(decisions: Decision[]): string {
  return decisions.map((d) => `"${d.policy.name}";r=${d.remaining};t=${d.resetSeconds}`).join(", ");
}

/**
 * The key a client address is limited under: IPv4 as is (IPv4-mapped IPv6 unwrapped), IPv6 by
 * its /64 — one host usually holds a whole /64, so per-address keys would be free to rotate.
 */
export function ipKey(address: string): string {
  const a = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/%.*$/, "");
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  if (mapped) return mapped[1]!;
  if (!a.includes(":")) return a;
  const [head = "", tail] = a.split("::", 2);
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups =
    tail === undefined ? h : [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill("0"), ...t];
  const prefix = groups.slice(0, 4).map((g) => (Number.parseInt(g, 16) || 0).toString(16));
  while (prefix.length < 4) prefix.push("0");
  return `${prefix.join(":")}::/64`;
}
