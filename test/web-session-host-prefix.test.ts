// The web session cookie is `__Host-assay_session` when it is Secure (here: behind a proxy that
// says `X-Forwarded-Proto: https`; test/tls.test.ts does it over the server's own TLS), so a
// sibling subdomain or a network attacker on plain HTTP cannot plant one; over plain HTTP it keeps
// its name. Each request reads only the name its scheme sets (src/web/sessions.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { type TestServer, call, errorBody } from "./helpers/server.ts";
import { startTestServer } from "./helpers/server.ts";

const PASSWORD = "correct horse battery";
const PROXIED = { "x-forwarded-proto": "https" };
const NO_CSRF = errorBody(
  403,
  "permission_denied",
  "CSRF check failed: a request authenticated by the session cookie must send the X-CSRF-Token header (from GET /api/v1/auth/session/).",
);

const NO_SESSION = errorBody(
  401,
  "authentication_required",
  "Authentication credentials were not provided or are invalid.",
);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  const alice = await s.user("alice", "acme", "author");
  await s.deps.users.setPassword(alice.id, await Bun.password.hash(PASSWORD), SYSTEM);
});
afterAll(() => s.close());

async function login(headers: Record<string, string>) {
  const r = await call(s, "POST", "/api/v1/auth/login/", {
    body: { username: "alice", password: PASSWORD },
    headers,
  });
  expect(r.status).toBe(200);
  const setCookie = r.headers.get("set-cookie") ?? "";
  return { setCookie, cookie: setCookie.split(";")[0]!, csrf: r.json.csrf_token as string };
}
const session = (headers: Record<string, string>) => call(s, "GET", "/api/v1/auth/session/", { headers });

test("behind a proxy saying https: the cookie is __Host-assay_session, Secure, Path=/, no Domain", async () => {
  const { setCookie, cookie, csrf } = await login(PROXIED);
  expect(setCookie).toMatch(
    /^__Host-assay_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200; Secure$/,
  );
  const r = await session({ ...PROXIED, cookie });
  expect([r.status, r.json.csrf_token]).toEqual([200, csrf]);
});

test("401 over https for the plain name, and over plain HTTP for the __Host- name", async () => {
  const secure = await login(PROXIED);
  const plain = await login({});
  expect(plain.setCookie).toMatch(
    /^assay_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/,
  );
  // A plain-named cookie (planted, or left from before the prefix) is not a session over https,
  // even beside nothing else; nor is a __Host- one over plain HTTP.
  for (const r of [
    await session({ ...PROXIED, cookie: plain.cookie }),
    await session({ ...PROXIED, cookie: secure.cookie.replace("__Host-", "") }),
    await session({ cookie: secure.cookie }),
  ]) {
    expect(r.status).toBe(401);
    expect(r.json).toEqual(NO_SESSION);
  }
  // Both sent: each scheme reads its own.
  const both = `${plain.cookie}; ${secure.cookie}`;
  expect((await session({ ...PROXIED, cookie: both })).json.csrf_token).toBe(secure.csrf);
  expect((await session({ cookie: both })).json.csrf_token).toBe(plain.csrf);
});

test("403 for a write without the CSRF header, as over plain HTTP; 204 with it", async () => {
  const { cookie, csrf } = await login(PROXIED);
  const body = { name: "ci" };
  const refused = await call(s, "POST", "/api/v1/users/me/tokens/", {
    headers: { ...PROXIED, cookie },
    body,
  });
  expect([refused.status, refused.json]).toEqual([403, NO_CSRF]);
  const made = await call(s, "POST", "/api/v1/users/me/tokens/", {
    headers: { ...PROXIED, cookie, "x-csrf-token": csrf },
    body,
  });
  expect(made.status).toBe(201);
});

test("sign-out over https clears __Host-assay_session and ends the session", async () => {
  const { cookie, csrf } = await login(PROXIED);
  const out = await call(s, "POST", "/api/v1/auth/logout/", {
    headers: { ...PROXIED, cookie, "x-csrf-token": csrf },
  });
  expect(out.status).toBe(204);
  expect(out.headers.get("set-cookie")).toBe(
    "__Host-assay_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
  );
  const after = await session({ ...PROXIED, cookie });
  expect([after.status, after.json]).toEqual([401, NO_SESSION]);
});

test("a password change over https renews the __Host- cookie", async () => {
  const { cookie, csrf } = await login(PROXIED);
  const r = await call(s, "POST", "/api/v1/users/me/password/", {
    headers: { ...PROXIED, cookie, "x-csrf-token": csrf },
    body: { current_password: PASSWORD, new_password: `${PASSWORD} two` },
  });
  expect(r.status).toBe(204);
  const renewed = (r.headers.get("set-cookie") ?? "").split(";")[0]!;
  expect(renewed).toMatch(/^__Host-assay_session=[A-Za-z0-9_-]{43}$/);
  expect((await session({ ...PROXIED, cookie: renewed })).status).toBe(200);
});
