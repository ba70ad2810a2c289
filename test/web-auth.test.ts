// Web sign-in against a real server: the session cookie, CSRF on writes, logout, password change
// and the sign-in rate limit, with whole error bodies.
import { join } from "node:path";
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AppError } from "../src/errors.ts";
import { describeDb } from "../src/db/open.ts";
import type { PgDb } from "../src/db/postgres.ts";
import { createLoginLimiter } from "../src/web/login-limit.ts";
import { onPostgres } from "./helpers/backend.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const PASSWORD = "correct horse battery";
const BAD_LOGIN = errorBody(401, "authentication_required", "Invalid username or password.");
const NO_CSRF = errorBody(
  403,
  "permission_denied",
  "CSRF check failed: a request authenticated by the session cookie must send the X-CSRF-Token header (from GET /api/v1/auth/session/).",
);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  const alice = await s.user("alice", "acme", "author");
  await s.deps.users.setPassword(alice.id, await Bun.password.hash(PASSWORD), SYSTEM);
});
afterAll(() => s.close());

async function login(username = "alice", password = PASSWORD, headers: Record<string, string> = {}) {
  const r = await call(s, "POST", "/api/v1/auth/login/", { body: { username, password }, headers });
  const setCookie = r.headers.get("set-cookie") ?? "";
  const cookie = /^assay_session=([^;]*)/.exec(setCookie)?.[0] ?? "";
  return { ...r, setCookie, cookie, csrf: r.json?.csrf_token as string };
}

describe("POST /api/v1/auth/login/", () => {
  test("200 sets an HttpOnly SameSite=Lax cookie and returns the user and a CSRF token", async () => {
    const r = await login();
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      user: expect.objectContaining({ username: "alice", is_admin: false }),
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expires_at: expect.any(String),
    });
    const hours = (Date.parse(r.json.expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(11.9);
    expect(hours).toBeLessThanOrEqual(12);
    expect(r.setCookie).toMatch(
      /^assay_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/,
    );
  });

  test("the database holds a digest of the cookie secret, never the secret", async () => {
    const r = await login();
    const secret = r.cookie.split("=")[1]!;
    const rows = await s.sql<{ digest: Uint8Array }>("SELECT digest FROM web_sessions");
    const digest = new Bun.CryptoHasher("sha256").update(secret).digest();
    expect(rows.some((x) => Buffer.from(x.digest).equals(digest))).toBe(true);
    expect(rows.some((x) => Buffer.from(x.digest).toString().includes(secret))).toBe(false);
  });

  test("the cookie is Secure when the request came over HTTPS through a proxy", async () => {
    const r = await login("alice", PASSWORD, { "x-forwarded-proto": "https" });
    expect(r.setCookie).toEndWith("; Secure");
  });

  test("401 with the same answer for a wrong password and an unknown user", async () => {
    const wrong = await login("alice", "not the password");
    const unknown = await login("nobody", "not the password");
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(wrong.json).toEqual(BAD_LOGIN);
    expect(unknown.json).toEqual(BAD_LOGIN);
    expect(wrong.setCookie).toBe("");
  });

  test("401 for a username with U+0000 (PostgreSQL cannot store it: the limit keys it by digest)", async () => {
    const r = await login("ali\u0000ce", "not the password");
    expect(r.status).toBe(401);
    expect(r.json).toEqual(BAD_LOGIN);
  });

  test("401 for a user who has no password (API tokens only)", async () => {
    await s.user("tokenonly");
    const r = await login("tokenonly", "anything at all");
    expect(r.status).toBe(401);
    expect(r.json).toEqual(BAD_LOGIN);
  });

  test("400 invalid_request when the password is missing", async () => {
    const r = await call(s, "POST", "/api/v1/auth/login/", { body: { username: "alice" } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The request is invalid.", [
        { field: "password", code: "required", message: "is required" },
      ]),
    );
  });
});

describe("the session cookie on the API", () => {
  test("authenticates reads without a CSRF header", async () => {
    const { cookie } = await login();
    const r = await call(s, "GET", "/api/v1/users/me/", { headers: { cookie } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      username: "alice",
      token: null,
      orgs: [{ org_slug: "acme", role: "author" }],
    });
  });

  test("GET /api/v1/auth/session/ returns the session's CSRF token", async () => {
    const { cookie, csrf, json } = await login();
    const r = await call(s, "GET", "/api/v1/auth/session/", { headers: { cookie } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ user: json.user, csrf_token: csrf, expires_at: json.expires_at });
  });

  test("GET /api/v1/auth/session/ with a bearer token has no CSRF token", async () => {
    const { token } = await s.user("bob");
    const r = await call(s, "GET", "/api/v1/auth/session/", { token });
    expect(r.json).toEqual({
      user: expect.objectContaining({ username: "bob" }),
      csrf_token: null,
      expires_at: null,
    });
  });

  test("401 without a cookie, and with a cookie the server never issued", async () => {
    const none = await call(s, "GET", "/api/v1/auth/session/");
    const forged = await call(s, "GET", "/api/v1/auth/session/", {
      headers: { cookie: `assay_session=${"A".repeat(43)}` },
    });
    for (const r of [none, forged]) {
      expect(r.status).toBe(401);
      expect(r.json).toEqual(errorBody(401, "authentication_required"));
    }
  });

  test("403 permission_denied for a write without the CSRF header", async () => {
    const { cookie } = await login();
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", { headers: { cookie }, body: { name: "x" } });
    expect(r.status).toBe(403);
    expect(r.json).toEqual(NO_CSRF);
  });

  test("403 permission_denied for a write with another session's CSRF token", async () => {
    const mine = await login();
    const other = await login();
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", {
      headers: { cookie: mine.cookie, "x-csrf-token": other.csrf },
      body: { name: "x" },
    });
    expect(r.status).toBe(403);
    expect(r.json).toEqual(
      errorBody(
        403,
        "permission_denied",
        "CSRF check failed: the X-CSRF-Token header does not match this session.",
      ),
    );
  });

  test("201 for a write with the session's CSRF header", async () => {
    const { cookie, csrf } = await login();
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", {
      headers: { cookie, "x-csrf-token": csrf },
      body: { name: "from the web" },
    });
    expect(r.status).toBe(201);
    expect(r.json.token).toStartWith("assay_");
  });

  test("a bearer token needs no CSRF header, even next to a session cookie", async () => {
    const { cookie } = await login();
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", {
      token: s.rootToken,
      headers: { cookie },
      body: { name: "scripted" },
    });
    expect(r.status).toBe(201);
  });

  test("401 once the session has expired", async () => {
    const { cookie } = await login();
    await s.sql("UPDATE web_sessions SET expires_at = '2000-01-01T00:00:00.000Z'");
    const r = await call(s, "GET", "/api/v1/users/me/", { headers: { cookie } });
    expect(r.status).toBe(401);
    expect(r.json).toEqual(errorBody(401, "authentication_required"));
  });

  test("401 once the user is deleted", async () => {
    const carol = await s.user("carol");
    await s.deps.users.setPassword(carol.id, await Bun.password.hash(PASSWORD), SYSTEM);
    const { cookie } = await login("carol");
    await call(s, "DELETE", "/api/v1/admin/users/carol/", { token: s.rootToken });
    const r = await call(s, "GET", "/api/v1/users/me/", { headers: { cookie } });
    expect(r.status).toBe(401);
    expect(r.json).toEqual(errorBody(401, "authentication_required"));
  });
});

describe("POST /api/v1/auth/logout/", () => {
  test("403 without the CSRF header: the session stays", async () => {
    const { cookie } = await login();
    const r = await call(s, "POST", "/api/v1/auth/logout/", { headers: { cookie } });
    expect(r.status).toBe(403);
    expect(r.json).toEqual(NO_CSRF);
    expect((await call(s, "GET", "/api/v1/users/me/", { headers: { cookie } })).status).toBe(200);
  });

  test("204 ends the session and clears the cookie", async () => {
    const { cookie, csrf } = await login();
    const r = await call(s, "POST", "/api/v1/auth/logout/", { headers: { cookie, "x-csrf-token": csrf } });
    expect(r.status).toBe(204);
    expect(r.headers.get("set-cookie")).toBe("assay_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0");
    const after = await call(s, "GET", "/api/v1/users/me/", { headers: { cookie } });
    expect(after.status).toBe(401);
    expect(after.json).toEqual(errorBody(401, "authentication_required"));
  });

  test("204 without a session: signing out twice is harmless", async () => {
    const r = await call(s, "POST", "/api/v1/auth/logout/");
    expect(r.status).toBe(204);
  });
});

describe("POST /api/v1/users/me/password/", () => {
  let dave: { id: number; token: string };
  beforeAll(async () => {
    dave = await s.user("dave", "acme", "viewer");
    await s.deps.users.setPassword(dave.id, await Bun.password.hash(PASSWORD), SYSTEM);
  });
  const change = (o: { cookie?: string; csrf?: string; token?: string }, body: unknown) =>
    call(s, "POST", "/api/v1/users/me/password/", {
      token: o.token,
      headers: o.cookie ? { cookie: o.cookie, "x-csrf-token": o.csrf ?? "" } : {},
      body,
    });

  test("400 when the current password is wrong", async () => {
    const r = await change(
      { token: dave.token },
      { current_password: "wrong", new_password: "a new password" },
    );
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The current password is incorrect.", [
        { field: "current_password", code: "incorrect", message: "The current password is incorrect." },
      ]),
    );
  });

  test("400 when the new password is too short", async () => {
    const r = await change({ token: dave.token }, { current_password: PASSWORD, new_password: "short" });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The new password is not acceptable.", [
        { field: "new_password", code: "invalid", message: "A password has 8 to 1024 characters." },
      ]),
    );
  });

  test("400 when the new password is one tried first: common, the username in it, a run of keys", async () => {
    const cases: [string, string][] = [
      ["Password123", "This password is one of the most common; attackers try it first. Choose another."],
      ["dave-2026-dave", "A password must not contain the username."],
      ["DAVE1234", "A password must not contain the username."],
      [
        "987654321",
        "A password of one repeated character or a straight run of keys is tried first. Choose another.",
      ],
      [
        "zzzzzzzzzz",
        "A password of one repeated character or a straight run of keys is tried first. Choose another.",
      ],
      ["qwertyuiop", "This password is one of the most common; attackers try it first. Choose another."],
    ];
    for (const [next, message] of cases) {
      const r = await change({ token: dave.token }, { current_password: PASSWORD, new_password: next });
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", "The new password is not acceptable.", [
          { field: "new_password", code: "invalid", message },
        ]),
      );
    }
    // Unchanged: the old password still signs in.
    expect(
      (await call(s, "POST", "/api/v1/auth/login/", { body: { username: "dave", password: PASSWORD } }))
        .status,
    ).toBe(200);
  });

  test("204: the new password signs in, the old one does not, every session ends, this one renewed", async () => {
    const here = await login("dave");
    const elsewhere = await login("dave");
    const r = await change(here, { current_password: PASSWORD, new_password: "a brand new secret" });
    expect(r.status).toBe(204);
    const renewed = /^assay_session=([^;]*)/.exec(r.headers.get("set-cookie") ?? "")?.[0] ?? "";
    expect(renewed).toMatch(/^assay_session=[A-Za-z0-9_-]{43}$/);
    expect(renewed).not.toBe(here.cookie);
    const me = (cookie: string) => call(s, "GET", "/api/v1/users/me/", { headers: { cookie } });
    // The cookie this browser held (and anyone who stole it) is signed out, like the others.
    expect([(await me(here.cookie)).status, (await me(elsewhere.cookie)).status]).toEqual([401, 401]);
    expect((await me(renewed)).status).toBe(200);
    const session = await call(s, "GET", "/api/v1/auth/session/", { headers: { cookie: renewed } });
    expect(session.json.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session.json.csrf_token).not.toBe(here.csrf);
    // Writes need the new CSRF token; the old one is refused.
    const write = (csrf: string) =>
      call(s, "POST", "/api/v1/auth/logout/", { headers: { cookie: renewed, "x-csrf-token": csrf } });
    expect((await write(here.csrf)).json).toEqual(
      errorBody(
        403,
        "permission_denied",
        "CSRF check failed: the X-CSRF-Token header does not match this session.",
      ),
    );
    expect((await login("dave")).json).toEqual(BAD_LOGIN);
    expect((await login("dave", "a brand new secret")).status).toBe(200);
    expect((await call(s, "GET", "/api/v1/users/me/", { token: dave.token })).status).toBe(200);
  });
});

describe("assay users set-password (an administrator's reset)", () => {
  test("ends every web session of the user: a stolen cookie dies with the old password", async () => {
    const erin = await s.user("erin", "acme", "viewer");
    await s.deps.users.setPassword(erin.id, await Bun.password.hash(PASSWORD), SYSTEM);
    const a = await login("erin");
    const b = await login("erin");
    const p = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, "../src/main.ts"),
        "users",
        "set-password",
        "erin",
        "--password-stdin",
        ...s.cliArgs,
      ],
      { stdin: new TextEncoder().encode("a reset password\n"), stdout: "pipe", stderr: "pipe" },
    );
    expect([await p.exited, await new Response(p.stdout).text()]).toEqual([
      0,
      `Password set for erin (${describeDb({ data_dir: s.dataDir, database_url: s.databaseUrl })}).\n`,
    ]);
    for (const cookie of [a.cookie, b.cookie])
      expect((await call(s, "GET", "/api/v1/users/me/", { headers: { cookie } })).status).toBe(401);
    expect((await login("erin", "a reset password")).status).toBe(200);
    // Her API token is not a session: it keeps working.
    expect((await call(s, "GET", "/api/v1/users/me/", { token: erin.token })).status).toBe(200);
  });
});

describe("sign-in rate limit", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ rate_limit_disabled: false });
  });
  afterAll(() => limited.close());
  const attempt = (username: string) =>
    call(limited, "POST", "/api/v1/auth/login/", { body: { username, password: "guess" } });

  test("429 rate_limited with Retry-After after 10 attempts on one username in a minute", async () => {
    for (let i = 0; i < 10; i++) expect((await attempt("victim")).status).toBe(401);
    const r = await attempt("victim");
    expect(r.status).toBe(429);
    const retry = Number(r.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(r.json).toEqual(
      errorBody(429, "rate_limited", `Too many sign-in attempts. Try again in ${retry} seconds.`),
    );
  });
});

describe("sign-in rate limit behind a reverse proxy (ASSAY_TRUST_PROXY)", () => {
  let proxied: TestServer;
  beforeAll(async () => {
    proxied = await startTestServer({ rate_limit_disabled: false, trust_proxy: true });
  });
  afterAll(() => proxied.close());
  const attempt = (from: string, username: string) =>
    call(proxied, "POST", "/api/v1/auth/login/", {
      body: { username, password: "guess" },
      headers: { "x-forwarded-for": from },
    });

  // Every request comes from the proxy's socket: the budget is the client's the proxy names.
  test("one client's spent budget (30 attempts) leaves another client's sign-in alone", async () => {
    for (let i = 0; i < 30; i++) expect((await attempt("203.0.113.7", `spray${i}`)).status).toBe(401);
    const spent = await attempt("203.0.113.7", "fresh");
    expect(spent.status).toBe(429);
    expect(spent.json).toEqual(
      errorBody(
        429,
        "rate_limited",
        `Too many sign-in attempts. Try again in ${spent.headers.get("retry-after")} seconds.`,
      ),
    );
    expect((await attempt("198.51.100.9", "fresh")).json).toEqual(BAD_LOGIN);
  });
});

// The per-address budget needs 30 password hashes to reach through HTTP (seconds on a loaded CI
// machine); the limiter itself is plain in-memory code.
describe("createLoginLimiter", () => {
  const refused = async (f: () => Promise<void>) => {
    try {
      await f();
    } catch (e) {
      return e as AppError;
    }
    throw new Error("not refused");
  };
  // In memory (one node); on PostgreSQL the same windows are kept in the database.
  const shared = () => (onPostgres ? (s.deps.db as PgDb) : null);

  test("one address is refused after its budget, whatever the usernames", async () => {
    const l = createLoginLimiter({ perUser: 10, perIp: 30, windowMs: 60_000 }, shared());
    for (let i = 0; i < 30; i++) await l.attempt("10.0.0.1", `user${i}`);
    const e = await refused(() => l.attempt("10.0.0.1", "fresh"));
    expect([e.status, e.errorCode, e.headers["Retry-After"]]).toEqual([429, "rate_limited", "60"]);
    await l.attempt("10.0.0.2", "fresh");
  });

  test("usernames are counted case-insensitively", async () => {
    const l = createLoginLimiter({ perUser: 2, perIp: 100, windowMs: 60_000 }, shared());
    await l.attempt("a", "Alice");
    await l.attempt("b", "alice");
    expect((await refused(() => l.attempt("c", "ALICE"))).status).toBe(429);
  });

  test("a refused attempt counts in no budget", async () => {
    const l = createLoginLimiter({ perUser: 1, perIp: 3, windowMs: 60_000 }, shared());
    await l.attempt("10.9.9.9", "bob");
    await refused(() => l.attempt("10.9.9.9", "bob"));
    await l.attempt("10.9.9.9", "carol");
    await l.attempt("10.9.9.9", "dave");
    expect((await refused(() => l.attempt("10.9.9.9", "erin"))).status).toBe(429);
  });

  test("disabled limits refuse nothing", async () => {
    const l = createLoginLimiter({ perUser: 1, perIp: 1, windowMs: 60_000, disabled: true }, shared());
    for (let i = 0; i < 5; i++) await l.attempt("a", "alice");
  });
});
