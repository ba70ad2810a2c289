// Budgets in shared memory (src/http/ratelimit-memory.ts): RateLimiter's answers for one budget,
// the PostgreSQL limiter's for several (all or nothing), bounded memory that forgets whole budgets
// first, and one budget for several threads taking at once.
import { describe, expect, test } from "bun:test";
import { MemoryBudgets } from "../../../src/http/ratelimit-memory.ts";
import type { Budget } from "../../../src/http/ratelimit-shared.ts";
import {
  type Decision,
  type Policy,
  RateLimiter,
  decisionOf,
  uncountedOf,
} from "../../../src/http/ratelimit.ts";
import type { Job } from "./ratelimit-memory-worker.ts";
import { random } from "../../helpers/random.ts";

const token: Policy = { name: "default", limit: 5, windowSeconds: 10 }; // one per 2 s
const user: Policy = { name: "user", limit: 7, windowSeconds: 60 }; // 60000/7 ms: uneven
const T0 = 1_700_000_000_000;
const interval = (p: Policy) => (p.windowSeconds * 1000) / p.limit;

/** Irregular steps: often none, often under an interval, sometimes a whole window or more. */
function step(rnd: () => number): number {
  const r = rnd();
  if (r < 0.4) return 0;
  if (r < 0.9) return Math.floor(rnd() * 400);
  if (r < 0.99) return Math.floor(rnd() * 5000);
  return 20_000 + Math.floor(rnd() * 60_000);
}

/**
 * The PostgreSQL limiter's contract: assay_rate_take (migration 9) over a Map, and the decisions
 * createSharedLimiter derives from its rows.
 */
function pgModel() {
  const rows = new Map<string, number>();
  return (budgets: Budget[], now: number): (Decision & { tat: number })[] => {
    const keys = budgets.map((b) => `${b.policy.name}:${b.key}`);
    for (const k of keys) if (!rows.has(k)) rows.set(k, now);
    const cur = keys.map((k) => Math.max(rows.get(k)!, now));
    const nxt = cur.map((c, i) => c + interval(budgets[i]!.policy));
    const ok = nxt.map((x, i) => x - now <= budgets[i]!.policy.windowSeconds * 1000 + 1e-6);
    const all = ok.every(Boolean);
    if (all) for (const [i, k] of keys.entries()) rows.set(k, nxt[i]!);
    return budgets.map((b, i) => {
      const tat = all ? nxt[i]! : cur[i]!;
      // Refused: every budget as it stands (uncountedOf), the request counted in none.
      return {
        ...(all ? decisionOf(b.policy, now, tat - interval(b.policy)) : uncountedOf(b.policy, now, tat)),
        tat,
      };
    });
  };
}

const keysOf = ["t:1", "t:2", "s:3", "u:1"];

describe("the answers of the other limiters", () => {
  test("RateLimiter's, request by request, for single budgets and pairs (peek both, then take or show)", () => {
    const rnd = random(7);
    let clock = T0;
    const limiters = new Map([token, user].map((p) => [p, new RateLimiter(p, { now: () => clock })]));
    const m = MemoryBudgets.create(64);
    const seen = { allowed: 0, refused: 0, recovered: 0 };
    const lastRefused = new Set<string>();
    for (let i = 0; i < 4000; i++) {
      clock += step(rnd);
      const a: Budget = { policy: rnd() < 0.5 ? token : user, key: keysOf[Math.floor(rnd() * 4)]! };
      const budgets: Budget[] = rnd() < 0.3 ? [a, { policy: user, key: `u:p${i % 3}` }] : [a];
      const got = m.take(budgets, clock);
      const peeks = budgets.map((b) => limiters.get(b.policy)!.peek(b.key));
      const want = peeks.every((d) => d.allowed)
        ? budgets.map((b) => limiters.get(b.policy)!.take(b.key))
        : budgets.map((b) => limiters.get(b.policy)!.uncounted(b.key));
      expect(got.map(({ tat, ...d }) => d)).toEqual(want);
      budgets.forEach((b, j) => {
        const id = `${b.policy.name}:${b.key}`;
        const d = got[j]!;
        if (!d.allowed) lastRefused.add(id);
        else if (lastRefused.delete(id)) seen.recovered++;
        // What was stored, read back: counted or not.
        expect(d.tat).toBe(Math.max(m.tat(b.policy, b.key), clock));
      });
      seen[got.every((d) => d.allowed) ? "allowed" : "refused"]++;
    }
    // The walk (seeded) covers both answers, and budgets refilling after a refusal.
    expect(seen).toEqual({ allowed: 2985, refused: 1015, recovered: 433 });
  });

  test("all or nothing: a pair whose user budget is spent counts nothing against the token", () => {
    const m = MemoryBudgets.create(64);
    let spent = T0; // the user's TAT: 7 intervals of 60000/7 ms, summed as the limiter does
    for (let i = 0; i < user.limit; i++) spent = m.take([{ policy: user, key: "u:9" }], T0)[0]!.tat;
    expect(spent).toBeCloseTo(T0 + 60_000, 2);
    m.take([{ policy: token, key: "t:1" }], T0);
    const [t, u] = m.take(
      [
        { policy: token, key: "t:1" },
        { policy: user, key: "u:9" },
      ],
      T0 + 1000,
    );
    // The token's budget as it stands (allowed, 4 left: the refused request is not in it, and it
    // is whole in 1 s), its TAT as stored before.
    expect(t).toEqual({
      policy: token,
      allowed: true,
      remaining: 4,
      resetSeconds: 1,
      retryAfterSeconds: 0,
      tat: T0 + 2000,
    });
    expect(u).toEqual({
      policy: user,
      allowed: false,
      remaining: 0,
      resetSeconds: 59,
      retryAfterSeconds: 8,
      tat: spent,
    });
    expect(m.tat(token, "t:1")).toBe(T0 + 2000);
    // An unknown token in the refused pair: not stored, reported as now (as PostgreSQL does).
    const [fresh] = m.take(
      [
        { policy: token, key: "t:new" },
        { policy: user, key: "u:9" },
      ],
      T0 + 1000,
    );
    expect(fresh).toMatchObject({ allowed: true, remaining: 5, resetSeconds: 0, tat: T0 + 1000 });
    expect(m.tat(token, "t:new")).toBe(0);
    // Once the user's budget refills by one, the pair is counted in both.
    const later = T0 + Math.ceil(interval(user));
    const both = m.take(
      [
        { policy: token, key: "t:1" },
        { policy: user, key: "u:9" },
      ],
      later,
    );
    expect(both.map((d) => [d.allowed, d.remaining, d.tat])).toEqual([
      [true, 4, later + 2000],
      [true, 0, spent + interval(user)],
    ]);
  });

  test("the PostgreSQL limiter's contract, decision and TAT, over a random sequence of pairs", () => {
    const rnd = random(11);
    const pg = pgModel();
    const m = MemoryBudgets.create(64);
    let clock = T0;
    const seen = { counted: 0, halfRefused: 0, refused: 0 };
    for (let i = 0; i < 3000; i++) {
      clock += step(rnd);
      const budgets: Budget[] = [{ policy: token, key: keysOf[Math.floor(rnd() * 3)]! }];
      if (rnd() < 0.7) budgets.push({ policy: user, key: rnd() < 0.5 ? "u:1" : "u:2" });
      if (rnd() < 0.1) budgets.reverse();
      const want = pg(budgets, clock);
      const got = m.take(budgets, clock);
      expect(got).toEqual(want);
      const allowed = got.filter((d) => d.allowed).length;
      seen[allowed === got.length ? "counted" : allowed ? "halfRefused" : "refused"]++;
    }
    // Pairs where one budget allowed and the other refused are the case that matters.
    expect(seen).toEqual({ counted: 1358, halfRefused: 1370, refused: 272 });
  });

  test("tat() reads what take stored, 0 for an unknown key; attach() sees the same budgets", () => {
    const a = MemoryBudgets.create(16);
    expect(a.tat(token, "t:1")).toBe(0);
    const [d] = a.take([{ policy: token, key: "t:1" }], T0);
    expect(d!.tat).toBe(T0 + 2000);
    expect(a.tat(token, "t:1")).toBe(T0 + 2000);
    // The same key under another policy is another budget.
    expect(a.tat(user, "t:1")).toBe(0);
    const b = MemoryBudgets.attach(a.init);
    expect(b.tat(token, "t:1")).toBe(T0 + 2000);
    expect(b.take([{ policy: token, key: "t:1" }], T0)[0]).toMatchObject({ remaining: 3, tat: T0 + 4000 });
    expect(a.tat(token, "t:1")).toBe(T0 + 4000);
    expect(() => MemoryBudgets.attach({ buffer: a.init.buffer, slots: 17 })).toThrow(RangeError);
  });
});

describe("bounded memory", () => {
  const long: Policy = { name: "long", limit: 100, windowSeconds: 3600 }; // one per 36 s
  const short: Policy = { name: "short", limit: 1, windowSeconds: 0.01 }; // whole again in 10 ms

  test("keys whose budgets are whole again give their slots to new keys; live keys are kept", () => {
    const m = MemoryBudgets.create(16);
    for (let k = 0; k < 8; k++) for (let j = 0; j <= k; j++) m.take([{ policy: long, key: `live:${k}` }], T0);
    let clock = T0;
    for (let i = 0; i < 2000; i++) {
      clock += 10; // the previous key's budget is whole again; the live ones are not (36 s)
      const [d] = m.take([{ policy: short, key: `k:${i}` }], clock);
      expect([d!.allowed, d!.tat]).toEqual([true, clock + 10]);
    }
    for (let k = 0; k < 8; k++) expect(m.tat(long, `live:${k}`)).toBe(T0 + (k + 1) * 36_000);
    expect(m.tat(short, "k:1999")).toBe(clock + 10);
  });

  test("a flood beyond capacity forgets the entries closest to whole first", () => {
    const m = MemoryBudgets.create(16);
    // 16 live keys: key k taken k + 2 times, so key 0 is the closest to whole.
    for (let k = 0; k < 16; k++)
      for (let j = 0; j < k + 2; j++) m.take([{ policy: long, key: `old:${k}` }], T0);
    for (let n = 0; n < 4; n++) for (let j = 0; j < 20; j++) m.take([{ policy: long, key: `new:${n}` }], T0);
    for (let k = 0; k < 16; k++) expect(m.tat(long, `old:${k}`)).toBe(k < 4 ? 0 : T0 + (k + 2) * 36_000);
    for (let n = 0; n < 4; n++) expect(m.tat(long, `new:${n}`)).toBe(T0 + 20 * 36_000);
    // A forgotten key starts again with a whole budget.
    expect(m.take([{ policy: long, key: "old:0" }], T0)[0]!.remaining).toBe(99);
  });

  test("long keys (over 96 bytes in UTF-8) work and stay distinct", () => {
    const m = MemoryBudgets.create(64);
    const base = "x".repeat(200);
    const keys = [
      `${base}a`,
      `${base}b`,
      "é".repeat(45), // 95 bytes stored: kept as is
      "é".repeat(46), // 97 bytes: hashed
      `${"é".repeat(45)}e`,
      "y".repeat(96 - "long:".length), // exactly 96 bytes stored: kept as is
      "y".repeat(97 - "long:".length),
    ];
    keys.forEach((key, i) => {
      for (let j = 0; j <= i; j++) m.take([{ policy: long, key }], T0);
    });
    keys.forEach((key, i) => {
      expect(m.tat(long, key)).toBe(T0 + (i + 1) * 36_000);
    });
    expect(m.tat(long, `${base}c`)).toBe(0);
    expect(m.tat(long, "é".repeat(48))).toBe(0);
  });
});

describe("several threads, one budget", () => {
  /** Runs one worker per job list entry, all released at once; their counted calls' TATs. */
  async function run(jobs: Omit<Job, "gate">[]) {
    const gate = new SharedArrayBuffer(4);
    const workers = jobs.map(() => new Worker(new URL("./ratelimit-memory-worker.ts", import.meta.url)));
    try {
      const ready: Promise<void>[] = [];
      const done = workers.map(
        (w, i) =>
          new Promise<{ counted: number[][]; refused: number }>((resolve, reject) => {
            let onReady!: () => void;
            ready.push(new Promise((r) => (onReady = r)));
            w.onmessage = (e) => (e.data === "ready" ? onReady() : resolve(e.data));
            w.onerror = (e) => reject(new Error(e.message));
            w.postMessage({ ...jobs[i]!, gate } satisfies Job);
          }),
      );
      await Promise.all(ready);
      Atomics.store(new Int32Array(gate), 0, 1);
      Atomics.notify(new Int32Array(gate), 0);
      return await Promise.all(done);
    } finally {
      for (const w of workers) w.terminate();
    }
  }

  const A: Policy = { name: "a", limit: 1500, windowSeconds: 60 }; // 40 ms each
  const B: Policy = { name: "b", limit: 2000, windowSeconds: 60 }; // 30 ms each

  test("4 threads × 1,000 takes of one key, limit 1,500: exactly 1,500 counted, each once", async () => {
    const m = MemoryBudgets.create(1024);
    const budgets: Budget[] = [{ policy: A, key: "t:1" }];
    const results = await run(
      Array.from({ length: 4 }, () => ({ init: m.init, budgets, calls: 1000, now: T0 })),
    );
    const ks = results.flatMap((r) => r.counted.map(([tat]) => (tat! - T0) / 40)).sort((x, y) => x - y);
    expect(ks).toEqual(Array.from({ length: 1500 }, (_, i) => i + 1));
    expect(results.reduce((s, r) => s + r.refused, 0)).toBe(2500);
    expect(m.tat(A, "t:1")).toBe(T0 + 1500 * 40);
  });

  test("two keys taken together, in either order: never counted in one without the other", async () => {
    const m = MemoryBudgets.create(1024);
    const ab: Budget[] = [
      { policy: A, key: "t:1" },
      { policy: B, key: "u:1" },
    ];
    const ba = [ab[1]!, ab[0]!];
    const results = await run(
      [ab, ba, ab, ba].map((budgets) => ({ init: m.init, budgets, calls: 1000, now: T0 })),
    );
    // Every counted call saw both budgets advanced to the same count: the k-th pair, once.
    const ks = results.flatMap((r, w) =>
      r.counted.map((tats) => {
        const [ta, tb] = w % 2 ? [tats[1]!, tats[0]!] : [tats[0]!, tats[1]!];
        expect((tb - T0) / 30).toBe((ta - T0) / 40);
        return (ta - T0) / 40;
      }),
    );
    expect(ks.sort((x, y) => x - y)).toEqual(Array.from({ length: 1500 }, (_, i) => i + 1));
    // The 2,500 refused pairs cost B nothing: 1,500 of its 2,000 spent.
    expect(m.tat(A, "t:1")).toBe(T0 + 1500 * 40);
    expect(m.tat(B, "u:1")).toBe(T0 + 1500 * 30);
  });
});
