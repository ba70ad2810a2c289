import { describe, expect, test } from "bun:test";
import { clientAddress, nestingExceeds } from "../../src/http/limits.ts";
import { RateLimiter, ipKey, limitHeader, policyHeader } from "../../src/http/ratelimit.ts";

/** A limiter on a hand-driven clock (ms). */
function limiter(limit: number, windowSeconds = 60, maxKeys?: number) {
  const clock = { ms: 1_000_000 };
  const l = new RateLimiter({ name: "default", limit, windowSeconds }, { now: () => clock.ms, maxKeys });
  return { l, clock };
}

describe("counting in a window", () => {
  test("exactly `limit` requests pass at once, the next is refused", () => {
    const { l } = limiter(5);
    const remaining = Array.from({ length: 5 }, () => l.take("k"));
    expect(remaining.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    const refused = l.take("k");
    expect(refused).toEqual({
      policy: l.policy,
      allowed: false,
      remaining: 0,
      resetSeconds: 60,
      retryAfterSeconds: 12,
    });
  });

  test("Retry-After is when one request's worth has refilled, rounded up, at least 1", () => {
    const { l, clock } = limiter(5); // one request per 12 s
    for (let i = 0; i < 5; i++) l.take("k");
    clock.ms += 11_001;
    expect(l.take("k").retryAfterSeconds).toBe(1);
    clock.ms += 998;
    expect(l.take("k")).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    clock.ms += 1;
    expect(l.take("k")).toMatchObject({ allowed: true, remaining: 0 });
  });

  test("refill is smooth: one request per limit/window, never a burst at a window edge", () => {
    const { l, clock } = limiter(60); // one per second
    for (let i = 0; i < 60; i++) expect(l.take("k").allowed).toBe(true);
    expect(l.take("k").allowed).toBe(false);
    clock.ms += 1000;
    expect(l.take("k")).toMatchObject({ allowed: true, remaining: 0 });
    expect(l.take("k").allowed).toBe(false);
    clock.ms += 30_000;
    expect(l.take("k")).toMatchObject({ allowed: true, remaining: 29 });
  });

  test("over ten windows: the initial bucket plus `limit` per window, to the request", () => {
    const { l, clock } = limiter(7); // 60000/7 ms does not divide evenly
    let passed = 0;
    for (let ms = 0; ms <= 600_000; ms += 100) {
      clock.ms = 1_000_000 + ms;
      if (l.take("k").allowed) passed++;
    }
    expect(passed).toBe(7 + 70);
  });

  test("a refused request costs nothing", () => {
    const { l, clock } = limiter(2);
    l.take("k");
    l.take("k");
    for (let i = 0; i < 100; i++) l.take("k");
    clock.ms += 30_000;
    expect(l.take("k").allowed).toBe(true);
  });

  test("keys are independent", () => {
    const { l } = limiter(1);
    expect(l.take("a").allowed).toBe(true);
    expect(l.take("a").allowed).toBe(false);
    expect(l.take("b").allowed).toBe(true);
  });

  test("peek answers like take without counting", () => {
    const { l } = limiter(1);
    expect(l.peek("k")).toMatchObject({ allowed: true, remaining: 0 });
    expect(l.peek("k")).toMatchObject({ allowed: true, remaining: 0 });
    l.take("k");
    expect(l.peek("k")).toMatchObject({ allowed: false, retryAfterSeconds: 60 });
  });

  test("uncounted shows the budget as it stands: what a refused request leaves (nothing taken)", () => {
    const { l, clock } = limiter(8); // one per 7.5 s
    for (let i = 0; i < 6; i++) l.take("k");
    // peek: what would be left after one more; uncounted: what is left now, as the last take said.
    expect(l.peek("k")).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 53 });
    expect(l.uncounted("k")).toEqual({
      policy: l.policy,
      allowed: true,
      remaining: 2,
      resetSeconds: 45,
      retryAfterSeconds: 0,
    });
    expect(l.uncounted("fresh")).toMatchObject({ allowed: true, remaining: 8, resetSeconds: 0 });
    l.take("k");
    l.take("k");
    // A refused budget reads the same either way: nothing left, whole in 60 s.
    expect(l.uncounted("k")).toEqual(l.peek("k"));
    expect(l.uncounted("k")).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 60 });
    clock.ms += 7500;
    expect(l.uncounted("k")).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 53 });
  });

  test("reset counts the seconds until the budget is whole again", () => {
    const { l, clock } = limiter(1200); // one per 50 ms
    for (let i = 0; i < 13; i++) l.take("k");
    expect(l.peek("k")).toMatchObject({ remaining: 1186 });
    const d = l.take("k");
    expect(d).toMatchObject({ remaining: 1186, resetSeconds: 1 }); // 14 × 50 ms = 0.7 s
    clock.ms += 700;
    expect(l.peek("k")).toMatchObject({ remaining: 1199, resetSeconds: 1 });
  });
});

describe("bounded memory", () => {
  test("keys idle for a window are forgotten, and forgetting them changes no answer", () => {
    const { l, clock } = limiter(10, 1);
    for (let i = 0; i < 100; i++) l.take(`k${i}`);
    for (let i = 0; i < 10; i++) l.take("busy");
    expect(l.size).toBe(101);
    clock.ms += 1000;
    l.take("busy");
    clock.ms += 1000;
    l.take("busy");
    expect(l.size).toBe(2); // "busy" in both generations
    expect(l.take("k1")).toMatchObject({ allowed: true, remaining: 9 });
  });

  test("a key used within the window survives a rotation with its debt intact", () => {
    const { l, clock } = limiter(2, 10); // one per 5 s
    clock.ms += 9_000;
    l.take("k");
    l.take("k");
    clock.ms += 1_000;
    l.take("other"); // a window since the start: "k" moves to the old generation
    expect(l.take("k")).toMatchObject({ allowed: false, retryAfterSeconds: 4 });
    clock.ms += 4_000;
    expect(l.take("k")).toMatchObject({ allowed: true, remaining: 0 });
  });

  test("never more than maxKeys entries; a flood forgets the oldest keys first", () => {
    const { l } = limiter(1, 60, 4);
    for (const k of ["a", "b", "c", "d"]) l.take(k);
    expect(l.size).toBeLessThanOrEqual(4);
    expect(l.peek("a").allowed).toBe(true); // forgotten: a fresh budget
    expect(l.peek("d").allowed).toBe(false);
  });

  test("200,000 distinct keys stay within the bound, in linear time", () => {
    const { l, clock } = limiter(100, 60, 10_000);
    const t0 = performance.now();
    for (let i = 0; i < 200_000; i++) {
      clock.ms += 0.01;
      l.take(`ip${i}`);
    }
    expect(l.size).toBeLessThanOrEqual(10_000);
    // ~0.1–2 s here depending on load; evicting from the front of one big Map (quadratic in
    // JavaScriptCore) takes minutes. A bound a 10× slower, busy machine still meets.
    expect(performance.now() - t0).toBeLessThan(20_000);
  });
});

describe("headers (IETF httpapi ratelimit-headers draft)", () => {
  test("RateLimit-Policy and RateLimit as structured-field lists", () => {
    const { l } = limiter(1200);
    const runs = new RateLimiter({ name: "runs", limit: 600, windowSeconds: 60 }, { now: () => 0 });
    const a = l.take("k");
    const b = runs.take("k");
    expect(policyHeader([l.policy, runs.policy])).toBe('"default";q=1200;w=60, "runs";q=600;w=60');
    expect(limitHeader([a, b])).toBe('"default";r=1199;t=1, "runs";r=599;t=1');
  });

  test("t is the time until the budget is whole, in a refused decision as in an allowed one", () => {
    const { l, clock } = limiter(6);
    for (let i = 0; i < 5; i++) l.take("k");
    expect(limitHeader([l.take("k")])).toBe('"default";r=0;t=60');
    clock.ms += 1000;
    const refused = l.take("k");
    expect(refused.retryAfterSeconds).toBe(9); // when the next request may pass
    expect(limitHeader([refused])).toBe('"default";r=0;t=59');
  });

  test("an invalid policy is refused at construction", () => {
    expect(() => new RateLimiter({ name: "x", limit: 0, windowSeconds: 60 })).toThrow(RangeError);
  });
});

describe("client address keys", () => {
  test.each([
    ["203.0.113.7", "203.0.113.7"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["[::ffff:127.0.0.1]", "127.0.0.1"],
    ["2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:DB8:0001:0002::ffff", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
  ])("%s is limited as %s", (address, key) => {
    expect(ipKey(address)).toBe(key);
  });
});

describe("client address and body nesting (src/http/limits.ts)", () => {
  const peer = (address: string) => ({ requestIP: () => ({ address }) });
  const req = (xff?: string) =>
    new Request("http://localhost/", { headers: xff ? { "x-forwarded-for": xff } : {} });

  test("the socket peer is the client unless trust_proxy is set", () => {
    expect(clientAddress(req("198.51.100.1"), peer("::ffff:10.0.0.2"), false)).toBe("10.0.0.2");
    expect(clientAddress(req(), null, false)).toBe("unknown");
  });

  test("with trust_proxy, the last X-Forwarded-For hop (the one our proxy added) is the client", () => {
    expect(clientAddress(req("1.1.1.1, 198.51.100.1"), peer("10.0.0.2"), true)).toBe("198.51.100.1");
    expect(clientAddress(req("2001:db8::5"), peer("10.0.0.2"), true)).toBe("2001:db8:0:0::/64");
    expect(clientAddress(req(), peer("10.0.0.2"), true)).toBe("10.0.0.2");
  });

  const bytes = (s: string) => new TextEncoder().encode(s);
  test("nesting is counted in one pass: at the bound passes, one more does not", () => {
    expect(nestingExceeds(bytes("[".repeat(3) + "]".repeat(3)), 3, true)).toBe(false);
    expect(nestingExceeds(bytes("[".repeat(4) + "]".repeat(4)), 3, true)).toBe(true);
    expect(nestingExceeds(bytes('[{"a":[1]},{"b":[2]}]'), 3, true)).toBe(false);
  });

  test("in JSON, brackets in strings (escaped quotes included) do not count; elsewhere they all do", () => {
    const json = bytes(`{"a":"[[[[\\"[[[["}`);
    expect(nestingExceeds(json, 1, true)).toBe(false);
    expect(nestingExceeds(json, 1, false)).toBe(true);
    expect(nestingExceeds(bytes(`a="x&b=[[[`), 2, false)).toBe(true);
    expect(nestingExceeds(bytes(`a=]]]]]]&b=[[[`), 2, false)).toBe(true); // closers buy nothing
  });
});
