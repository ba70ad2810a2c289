// Rate limits over real HTTP (CONTRACT §8): per token and per user for every request, per token
// and per user for starting runs (the contract's step 4), per client address for failed
// authentication; the exact count in a window, Retry-After, and the IETF draft's
// RateLimit-Policy / RateLimit headers.
// The limiter's arithmetic over time is unit-tested with a clock in test/unit/ratelimit.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const ME = "/api/v1/users/me/";
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;
const JSON_CT = { "content-type": "application/json" };
/** A fresh token of a new user: a fresh budget. */
let n = 0;
const fresh = async (s: TestServer, role: "executor" | "author" = "executor") =>
  (await s.user(`user${++n}`, "acme", role)).token;
/**
 * Retry-After after `spent` requests of a budget refilling one per `interval` s, started at
 * `since`: the interval, less the whole seconds the requests took (on a slow machine, several).
 */
const expectWait = (wait: number, interval: number, since: number) => {
  const took = Math.ceil((Date.now() - since) / 1000);
  expect(wait).toBeLessThanOrEqual(interval);
  expect(wait).toBeGreaterThanOrEqual(Math.max(1, interval - took));
};

describe("per token: 6 requests per minute, 2 run starts", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      rate_limit_disabled: false,
      rate_limit_per_minute: 6,
      rate_limit_runs_per_minute: 2,
      rate_limit_ip_per_minute: 1000,
    });
    const author = await fresh(s, "author");
    for (const [slug, status] of [
      ["doc", "active"],
      ["off", "inactive"],
    ])
      await createWorkflow(s, author, {
        slug,
        status,
        allowed_file_types: ["JSON"],
        steps: [{ name: "syntax", validator: "syntax", config: {} }],
      });
  });
  afterAll(() => s.close());

  test("answers carry RateLimit-Policy and RateLimit (draft structured fields)", async () => {
    const r = await call(s, "GET", ME, { token: await fresh(s) });
    expect(r.status).toBe(200);
    expect(r.headers.get("ratelimit-policy")).toBe('"default";q=6;w=60, "user";q=2400;w=60');
    // The user's budget (2400/min) refills every 25 ms: what is left of it depends on timing.
    expect(r.headers.get("ratelimit")).toMatch(/^"default";r=5;t=10, "user";r=\d+;t=\d+$/);
  });

  test("exactly 6 requests pass in the window; the 7th is 429 rate_limited with Retry-After", async () => {
    const token = await fresh(s);
    const since = Date.now();
    const seen: string[] = [];
    let lastAllowed = "";
    for (let i = 0; i < 6; i++) {
      const r = await call(s, "GET", ME, { token });
      expect(r.status).toBe(200);
      lastAllowed = r.headers.get("ratelimit")!;
      // The user's budget (2400/min) refills every 25 ms: what is left of it depends on timing.
      seen.push(lastAllowed.replace(/;t=\d+/g, "").replace(/"user";r=\d+/, '"user"'));
    }
    expect(seen).toEqual([5, 4, 3, 2, 1, 0].map((r) => `"default";r=${r}, "user"`));
    const startedAt = Date.now();
    const r = await call(s, "GET", ME, { token });
    expect(r.status).toBe(429);
    // One request's worth refills in 60/6 = 10 s, less the time the requests took (a busy
    // machine may take seconds): at most 10, at least 1.
    const wait = Number(r.headers.get("retry-after"));
    expectWait(wait, 10, since);
    expect(r.json).toEqual(
      errorBody(429, "rate_limited", `Too many requests with this token; retry in ${wait} s.`),
    );
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("ratelimit-policy")).toBe('"default";q=6;w=60, "user";q=2400;w=60');
    // t means the same in the 429 as in the 200 before it: seconds until the budget is whole
    // (60 s after six requests), counting down; Retry-After says when the next one may pass.
    const t = (h: string) => Number(/;t=(\d+)/.exec(h)![1]);
    // 60 when the six took under a second; a slower host's took off what they lasted.
    expect(t(lastAllowed)).toBeLessThanOrEqual(60);
    expect(t(lastAllowed)).toBeGreaterThanOrEqual(60 - Math.ceil((startedAt - since) / 1000));
    expect(r.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+, "user";r=\d+;t=\d+$/);
    expectWait(t(r.headers.get("ratelimit")!), t(lastAllowed), startedAt);
  });

  test("another token of the same user has its own budget", async () => {
    const token = await fresh(s);
    for (let i = 0; i < 7; i++) await call(s, "GET", ME, { token });
    const other = await s.user(`user${n}`);
    expect((await call(s, "GET", ME, { token: other.token })).status).toBe(200);
  });

  test("errors after authentication carry the headers too (a 404 costs one request)", async () => {
    const r = await call(s, "GET", "/api/v1/orgs/nope/", { token: await fresh(s) });
    expect(r.status).toBe(404);
    expect(r.headers.get("ratelimit")).toMatch(/^"default";r=5;t=10, "user";r=\d+;t=\d+$/);
  });

  test("run starts have their own budget: the 3rd is 429, and nothing is stored", async () => {
    const token = await fresh(s);
    const since = Date.now();
    for (let i = 0; i < 2; i++) {
      const r = await call(s, "POST", runs("doc"), { token, raw: "{}", headers: JSON_CT });
      expect([201, 202]).toContain(r.status);
      expect(r.headers.get("ratelimit-policy")).toBe(
        '"default";q=6;w=60, "user";q=2400;w=60, "runs";q=2;w=60, "user-runs";q=1200;w=60',
      );
      expect(r.headers.get("ratelimit")).toMatch(
        new RegExp(
          `^"default";r=${5 - i};t=\\d+, "user";r=\\d+;t=\\d+, "runs";r=${1 - i};t=\\d+, "user-runs";r=\\d+;t=\\d+$`,
        ),
      );
    }
    const before = [await s.count("runs"), await s.count("submissions")];
    const r = await call(s, "POST", runs("doc"), { token, raw: "{}", headers: JSON_CT });
    expect(r.status).toBe(429);
    // One start refills in 60/2 = 30 s, less the time the two runs took.
    const wait = Number(r.headers.get("retry-after"));
    expectWait(wait, 30, since);
    expect(r.json).toEqual(
      errorBody(429, "rate_limited", `Too many runs started with this token; retry in ${wait} s.`),
    );
    const [, t] =
      /^"default";r=3;t=\d+, "user";r=\d+;t=\d+, "runs";r=0;t=(\d+), "user-runs";r=\d+;t=\d+$/.exec(
        r.headers.get("ratelimit")!,
      )!;
    expectWait(Number(t), 60, since);
    expect([await s.count("runs"), await s.count("submissions")]).toEqual(before);
    // Reading stays possible: only starting runs is spent.
    expect((await call(s, "GET", "/api/v1/orgs/acme/runs/", { token })).status).toBe(200);
  });

  test("step order: a missing workflow is 404 before 429; an inactive one is 429 before 409", async () => {
    const token = await fresh(s);
    for (let i = 0; i < 2; i++) await call(s, "POST", runs("doc"), { token, raw: "{}", headers: JSON_CT });
    const missing = await call(s, "POST", runs("nope"), { token, raw: "{}", headers: JSON_CT });
    expect(missing.status).toBe(404);
    const off = await call(s, "POST", runs("off"), { token, raw: "{}", headers: JSON_CT });
    expect(off.status).toBe(429);
    expect(off.json.code).toBe("rate_limited");
  });

  test("a token out of requests is refused at step 4 of a run too, after 404", async () => {
    const token = await fresh(s);
    for (let i = 0; i < 6; i++) await call(s, "GET", ME, { token });
    expect((await call(s, "POST", runs("nope"), { token, raw: "{}", headers: JSON_CT })).status).toBe(404);
    const before = await s.count("runs");
    const r = await call(s, "POST", runs("doc"), { token, raw: "{}", headers: JSON_CT });
    expect(r.status).toBe(429);
    expect(r.json).toEqual(
      errorBody(
        429,
        "rate_limited",
        expect.stringMatching(/^Too many requests with this token; retry in \d+ s\.$/),
      ),
    );
    expect(await s.count("runs")).toBe(before);
  });
});

/** 6 requests and 2 run starts a minute per token, 8 and 3 per user. */
const PER_USER_LIMITS = {
  rate_limit_disabled: false,
  rate_limit_per_minute: 6,
  rate_limit_runs_per_minute: 2,
  rate_limit_user_per_minute: 8,
  rate_limit_user_runs_per_minute: 3,
  rate_limit_ip_per_minute: 1000,
};

describe("per user: all of a user's tokens share 8 requests and 3 run starts a minute", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      ...PER_USER_LIMITS,
    });
    const author = await fresh(s, "author");
    await createWorkflow(s, author, {
      slug: "doc",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
  });
  afterAll(() => s.close());

  test("100 tokens of one user: 8 requests pass in all, then 429 names the user's budget", async () => {
    const user = `many${++n}`;
    const tokens: string[] = [];
    for (let i = 0; i < 100; i++) tokens.push((await s.user(user, i ? undefined : "acme", "executor")).token);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof call>> | null = null;
    const t0 = performance.now();
    for (const token of tokens) {
      const r = await call(s, "GET", ME, { token });
      statuses.push(r.status);
      if (r.status === 429) last = r;
    }
    // One request of the user's comes back every 7.5 s: exactly 8 pass, unless this host took
    // that long for the 100 and got those back too.
    const back = Math.floor((performance.now() - t0) / 7500);
    const passed = statuses.filter((x) => x === 200).length;
    expect(passed).toBeGreaterThanOrEqual(8);
    expect(passed).toBeLessThanOrEqual(8 + back);
    expect(statuses.slice(0, 8)).toEqual(Array(8).fill(200));
    if (back === 0) expect(statuses.at(-1)).toBe(429);
    expect(last!.status).toBe(429);
    const wait = Number(last!.headers.get("retry-after"));
    expect(wait >= 1 && wait <= 8).toBe(true);
    expect(last!.json).toEqual(
      errorBody(
        429,
        "rate_limited",
        `Too many requests by this user (all tokens together); retry in ${wait} s.`,
      ),
    );
    // The token, never counted (its only request refused), is whole: r=6, t=0. The user's t:
    // seconds until that budget is whole again (8 requests' worth: up to 60 s).
    const [, t] = /^"default";r=6;t=0, "user";r=0;t=(\d+)$/.exec(last!.headers.get("ratelimit")!)!;
    expect(Number(t)).toBeGreaterThanOrEqual(wait);
    expect(Number(t)).toBeLessThanOrEqual(60);
    // Another user is not affected.
    expect((await call(s, "GET", ME, { token: await fresh(s) })).status).toBe(200);
  });

  test("run starts: 3 per user whichever token starts them; the 4th is 429 and stores nothing", async () => {
    const user = `runner${++n}`;
    const tokens: string[] = [];
    for (let i = 0; i < 4; i++) tokens.push((await s.user(user, i ? undefined : "acme", "executor")).token);
    for (const token of tokens.slice(0, 3)) {
      const r = await call(s, "POST", runs("doc"), { token, raw: "{}", headers: JSON_CT });
      expect([201, 202]).toContain(r.status);
    }
    const before = [await s.count("runs"), await s.count("submissions")];
    const r = await call(s, "POST", runs("doc"), { token: tokens[3], raw: "{}", headers: JSON_CT });
    expect(r.status).toBe(429);
    const wait = Number(r.headers.get("retry-after"));
    expect(r.json).toEqual(
      errorBody(
        429,
        "rate_limited",
        `Too many runs started by this user (all tokens together); retry in ${wait} s.`,
      ),
    );
    expect(r.headers.get("ratelimit")).toMatch(
      /^"default";r=5;t=\d+, "user";r=\d+;t=\d+, "runs";r=2;t=0, "user-runs";r=0;t=(\d+)$/,
    );
    expect([await s.count("runs"), await s.count("submissions")]).toEqual(before);
  });
});

// A refused request costs nothing, and its RateLimit says so: the budget that did not refuse it is
// shown as it stands, not as if the request had been counted (which showed one request less than
// the 200 before it, and the same again on every retry). In memory, in shared memory (HTTP
// threads on SQLite) and, with ASSAY_TEST_DATABASE=postgres, in PostgreSQL.
describe.each([
  ["one thread", {}],
  ["HTTP threads", { http_threads: 2 }],
])("a 429's RateLimit shows what is left now (%s)", (_name, extra) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      ...extra,
      ...PER_USER_LIMITS,
    });
    await createWorkflow(s, s.rootToken, {
      slug: "doc",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
  });
  afterAll(() => s.close());

  /** [status, RateLimit with each t replaced by what the request's second should show]. */
  const parse = (h: string) =>
    h.split(", ").map((item) => {
      const [, name, r, t] = /^"([\w-]+)";r=(\d+);t=(\d+)$/.exec(item)!;
      return { name: name!, r: Number(r), t: Number(t) };
    });
  /** t counts down from `full` seconds at the first request: at most that, less what has passed. */
  const expectT = (t: number, full: number, since: number) => {
    expect(t).toBeLessThanOrEqual(full);
    expect(t).toBeGreaterThanOrEqual(full - Math.ceil((Date.now() - since) / 1000));
  };

  test("the token's budget refuses: the user's is shown as the 200 before left it, retry after retry", async () => {
    const { token } = await s.user(`left${++n}`, "acme", "viewer");
    const since = Date.now();
    const seen: { status: number; limits: ReturnType<typeof parse> }[] = [];
    for (let i = 0; i < 9; i++) {
      const r = await call(s, "GET", "/api/v1/orgs/", { token });
      seen.push({ status: r.status, limits: parse(r.headers.get("ratelimit")!) });
    }
    // The user's budget (8/min) refills one every 7.5 s: the nine took less on any host we run.
    expect(Date.now() - since).toBeLessThan(7500);
    expect(seen.map((x) => x.status)).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429]);
    expect(seen.map((x) => x.limits.map((l) => `${l.name} r=${l.r}`).join(", "))).toEqual([
      ...[5, 4, 3, 2, 1, 0].map((r, i) => `default r=${r}, user r=${7 - i}`),
      ...Array(3).fill("default r=0, user r=2"),
    ]);
    // t: 10 s a request of the token's, 7.5 s of the user's; the 429s' is the sixth 200's.
    seen.forEach((x, i) => {
      const done = Math.min(i + 1, 6);
      expectT(x.limits[0]!.t, 10 * done, since);
      expectT(x.limits[1]!.t, Math.ceil(7.5 * done), since);
    });
  });

  test("the user's budget refuses: a fresh token of theirs is shown whole", async () => {
    const user = `whole${++n}`;
    const first = (await s.user(user, "acme", "viewer")).token;
    for (let i = 0; i < 6; i++) await call(s, "GET", "/api/v1/orgs/", { token: first });
    const second = (await s.user(user)).token;
    for (let i = 0; i < 2; i++)
      expect((await call(s, "GET", "/api/v1/orgs/", { token: second })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const r = await call(s, "GET", "/api/v1/orgs/", { token: second });
      expect(r.status).toBe(429);
      expect(parse(r.headers.get("ratelimit")!).map((l) => `${l.name} r=${l.r}`)).toEqual([
        "default r=4",
        "user r=0",
      ]);
    }
  });

  test("a run start refused by the user's run budget shows the token's run budget whole", async () => {
    const user = `starter${++n}`;
    const tokens: string[] = [];
    for (let i = 0; i < 2; i++) tokens.push((await s.user(user, i ? undefined : "acme", "executor")).token);
    const since = Date.now();
    const start = (token: string) => call(s, "POST", runs("doc"), { token, raw: "{}", headers: JSON_CT });
    for (let i = 0; i < 2; i++) expect([201, 202]).toContain((await start(tokens[0]!)).status);
    expect([201, 202]).toContain((await start(tokens[1]!)).status);
    for (let i = 0; i < 2; i++) {
      const r = await start(tokens[1]!);
      expect(r.status).toBe(429);
      const limits = parse(r.headers.get("ratelimit")!);
      // The requests themselves were counted (a refusal at step 4 comes after them); the starts not.
      expect(limits.map((l) => `${l.name} r=${l.r}`)).toEqual([
        `default r=${4 - i}`,
        `user r=${4 - i}`,
        "runs r=1",
        "user-runs r=0",
      ]);
      expectT(limits[2]!.t, 30, since);
      expectT(limits[3]!.t, 60, since);
    }
  });
});

describe("per client address, before authentication: 3 failed attempts per minute", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      rate_limit_disabled: false,
      rate_limit_per_minute: 60,
      rate_limit_ip_per_minute: 3,
    });
  });
  afterAll(() => s.close());

  test("after Retry-After the token is served again (1 request per second)", async () => {
    const token = await fresh(s);
    // Spend the budget: 60, plus what refilled meanwhile (one a second) on a slow machine.
    let r = await call(s, "GET", ME, { token });
    for (let i = 0; i < 200 && r.status !== 429; i++) r = await call(s, "GET", ME, { token });
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("1");
    await Bun.sleep(1000); // exactly what the client was told to wait
    expect((await call(s, "GET", ME, { token })).status).toBe(200);
  });

  test("successful requests cost the address nothing", async () => {
    const token = await fresh(s);
    for (let i = 0; i < 5; i++) expect((await call(s, "GET", ME, { token })).status).toBe(200);
  });

  test("failed attempts are counted; then every request from the address is 429, a valid token too", async () => {
    const token = await fresh(s);
    const since = Date.now();
    const left: (string | null)[] = [];
    for (const bad of ["assay_wrong1", "assay_wrong2", null]) {
      const r = await call(s, "GET", ME, { token: bad });
      expect(r.status).toBe(401);
      left.push(r.headers.get("ratelimit"));
    }
    // r counts down exactly; t is 20 s a failure (20, 40, 60), less what a slow host's took.
    const took = Math.ceil((Date.now() - since) / 1000);
    left.forEach((h, i) => {
      const m = /^"ip";r=(\d+);t=(\d+)$/.exec(h ?? "");
      expect(m?.[1]).toBe(String(2 - i));
      expect(Number(m?.[2])).toBeLessThanOrEqual(20 * (i + 1));
      expect(Number(m?.[2])).toBeGreaterThanOrEqual(20 * (i + 1) - took);
    });
    const before = await s.count("runs");
    for (const presented of ["assay_wrong4", token]) {
      const r = await call(s, "GET", ME, { token: presented });
      expect(r.status).toBe(429);
      const wait = Number(r.headers.get("retry-after"));
      expectWait(wait, 20, since);
      expect(r.json).toEqual(
        errorBody(
          429,
          "rate_limited",
          `Too many failed authentication attempts from this address; retry in ${wait} s.`,
        ),
      );
      expect(r.headers.get("ratelimit-policy")).toBe('"ip";q=3;w=60');
      const [, reset] = /^"ip";r=0;t=(\d+)$/.exec(r.headers.get("ratelimit")!)!;
      expectWait(Number(reset), 60, since); // the budget is whole 60 s after the first failure
    }
    expect(await s.count("runs")).toBe(before);
  });

  test("X-Forwarded-For is not trusted by default: another claimed address is still refused", async () => {
    const r = await call(s, "GET", ME, { token: "assay_x", headers: { "x-forwarded-for": "198.51.100.9" } });
    expect(r.status).toBe(429);
  });

  test("/healthz and /readyz are never refused", async () => {
    expect((await call(s, "GET", "/healthz")).status).toBe(200);
    expect((await call(s, "GET", "/readyz")).status).toBe(200);
  });
});

describe("every answer carries the headers: the address's budget where no token is authenticated", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ rate_limit_disabled: false, rate_limit_ip_per_minute: 5 });
  });
  afterAll(() => s.close());

  test("probes, documents, public operations, tokenless 404 and 405, preflights: the budget as it stands", async () => {
    const answers: [string, string, number][] = [
      ["GET", "/healthz", 200],
      ["GET", "/readyz", 200],
      ["GET", "/api/v1/openapi.json", 200],
      ["GET", "/api/v1/setup/", 200],
      ["GET", "/api/v1/nope/", 404],
      ["DELETE", "/api/v1/validators/", 405],
      ["OPTIONS", "/api/v1/orgs/acme/", 204],
    ];
    for (const [method, path, status] of answers) {
      const r = await fetch(`${s.url}${path}`, { method });
      await r.arrayBuffer();
      // Counted nowhere: the address's budget is shown whole, however many came before.
      expect({
        at: `${method} ${path}`,
        status: r.status,
        policy: r.headers.get("ratelimit-policy"),
        left: r.headers.get("ratelimit"),
      }).toEqual({
        at: `${method} ${path}`,
        status,
        policy: '"ip";q=5;w=60',
        left: expect.stringMatching(/^"ip";r=5;t=0$/),
      });
    }
  });

  test("a failed sign-in shows the budget (its own limiter counts it); a bad token costs a unit", async () => {
    const signIn = await fetch(`${s.url}/api/v1/auth/login/`, {
      method: "POST",
      headers: JSON_CT,
      body: JSON.stringify({ username: "nobody", password: "wrong-password" }),
    });
    expect(signIn.status).toBe(401);
    expect(signIn.headers.get("ratelimit-policy")).toBe('"ip";q=5;w=60');
    expect(signIn.headers.get("ratelimit")).toBe('"ip";r=5;t=0');
    const bad = await call(s, "GET", ME, { token: "assay_wrong" });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("ratelimit")).toMatch(/^"ip";r=4;t=\d+$/);
    const after = await fetch(`${s.url}/healthz`);
    expect(after.headers.get("ratelimit")).toMatch(/^"ip";r=4;t=\d+$/);
  });

  test("an authenticated answer shows its token's budgets instead", async () => {
    const token = await fresh(s);
    const r = await call(s, "GET", ME, { token });
    expect(r.headers.get("ratelimit-policy")).toStartWith('"default";');
  });
});
