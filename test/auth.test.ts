import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const unauth = (detail: unknown = expect.any(String)) => errorBody(401, "authentication_required", detail);

describe("401 authentication_required", () => {
  test("401 when the token is missing, with WWW-Authenticate", async () => {
    const r = await call(s, "GET", "/api/v1/users/me/");
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(r.json).toEqual(unauth());
  });
  test("401 for another scheme", async () => {
    const r = await call(s, "GET", "/api/v1/users/me/", {
      headers: { authorization: `Token ${s.rootToken}` },
    });
    expect(r.status).toBe(401);
    expect(r.json).toEqual(unauth("Use the Authorization header with the Bearer scheme."));
  });
  test("401 for an unknown but well-formed token", async () => {
    const fake = `assay_${"A".repeat(51)}`;
    const r = await call(s, "GET", "/api/v1/users/me/", { token: fake });
    expect(r.json).toEqual(unauth("Invalid token."));
  });
  test("401 for garbage and for a token one character off", async () => {
    expect((await call(s, "GET", "/api/v1/users/me/", { token: "x" })).status).toBe(401);
    const off = s.rootToken.slice(0, -1) + (s.rootToken.endsWith("A") ? "B" : "A");
    expect((await call(s, "GET", "/api/v1/users/me/", { token: off })).json).toEqual(
      unauth("Invalid token."),
    );
  });
  test("401 on the very next request after revocation", async () => {
    const u = await s.user("rev");
    expect((await call(s, "GET", "/api/v1/users/me/", { token: u.token })).status).toBe(200);
    const d = await call(s, "DELETE", `/api/v1/users/me/tokens/${u.tokenId}/`, { token: u.token });
    expect(d.status).toBe(204);
    const r = await call(s, "GET", "/api/v1/users/me/", { token: u.token });
    expect(r.json).toEqual(unauth("The token has been revoked."));
  });
  test("401 after the user is deleted", async () => {
    const u = await s.user("gone");
    await s.deps.users.delete(u.id, SYSTEM);
    expect((await call(s, "GET", "/api/v1/users/me/", { token: u.token })).json).toEqual(
      unauth("Invalid token."),
    );
  });
});

describe("bearer scheme", () => {
  test("the scheme word is case-insensitive", async () => {
    for (const scheme of ["bearer", "BEARER", "Bearer"]) {
      const r = await call(s, "GET", "/api/v1/users/me/", {
        headers: { authorization: `${scheme} ${s.rootToken}` },
      });
      expect(r.status).toBe(200);
    }
  });
});

describe("GET /api/v1/users/me/", () => {
  test("200 the user, orgs with roles and the token in use; /auth/me/ the same", async () => {
    const r = await call(s, "GET", "/api/v1/users/me/", { token: s.rootToken });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      id: expect.any(Number),
      username: "root",
      name: "",
      email: "",
      is_admin: true,
      created_at: expect.any(String),
      orgs: [{ org_slug: "acme", name: "ACME", status: "active", role: "admin" }],
      token: expect.objectContaining({
        name: "root-token",
        prefix: s.rootToken.slice(0, 14),
        revoked_at: null,
      }),
    });
    const r2 = await call(s, "GET", "/api/v1/auth/me", { token: s.rootToken });
    expect(r2.json.username).toBe("root");
  });
});

describe("tokens at rest", () => {
  test("the database holds no token in clear text, only a 32-byte digest", async () => {
    const u = await s.user("clear");
    const rows = await s.sql("SELECT * FROM api_tokens");
    const dump = JSON.stringify(rows, (_k, v) =>
      v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v,
    );
    expect(dump).not.toContain(u.token);
    expect(dump).not.toContain(u.token.slice(14));
    for (const r of rows) expect((r.digest as Uint8Array).length).toBe(32);
  });
  test("a token is assay_-prefixed with 256 bits of randomness", async () => {
    const u = await s.user("shape");
    expect(u.token).toMatch(/^assay_[A-Za-z0-9_-]{51}$/);
  });
});
