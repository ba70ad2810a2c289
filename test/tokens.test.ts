// API tokens: create (the secret once), list, revoke, expiry, last use, and the spec's rotation.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_ACTIVE_TOKENS } from "../src/tokens/service.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const TOKENS = "/api/v1/users/me/tokens/";
const me = (token: string) => call(s, "GET", "/api/v1/users/me/", { token });
const create = (token: string, body: unknown) => call(s, "POST", TOKENS, { token, body });
const DAY_MS = 86_400_000;

describe("POST /api/v1/users/me/tokens/", () => {
  test("201 with the secret, which works at once", async () => {
    const u = await s.user("creator");
    const r = await create(u.token, { name: "ci" });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      name: "ci",
      prefix: r.json.token.slice(0, 14),
      created_at: expect.any(String),
      last_used_at: null,
      expires_at: null,
      revoked_at: null,
      token: expect.stringMatching(/^assay_[A-Za-z0-9_-]{51}$/),
    });
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect((await me(r.json.token)).json.token.id).toBe(r.json.id);
  });

  test("the secret appears in the create response only: not in the list, nor in /users/me/", async () => {
    const u = await s.user("secretive");
    const { token } = (await create(u.token, { name: "once" })).json;
    const list = await call(s, "GET", TOKENS, { token });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(token.slice(14));
    for (const item of list.json.results) expect(item).not.toHaveProperty("token");
    expect((await me(token)).text).not.toContain(token.slice(14));
  });

  test("201 with expires_in_days: expires_at that many days ahead", async () => {
    const u = await s.user("expiring");
    const before = Date.now();
    const r = await create(u.token, { name: "month", expires_in_days: 30 });
    expect(r.status).toBe(201);
    const at = Date.parse(r.json.expires_at);
    expect(at).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
    expect(at).toBeLessThanOrEqual(Date.now() + 30 * DAY_MS);
  });

  test("400 invalid_request for an empty or overlong name", async () => {
    const u = await s.user("namer");
    for (const name of ["", "   ", "x".repeat(101)]) {
      const r = await create(u.token, { name });
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", "Invalid value for name.", [
          { field: "name", code: "invalid", message: "A token name of 1 to 100 characters is required." },
        ]),
      );
    }
  });

  test("400 invalid_request for a bad expiry and for an unknown field", async () => {
    const u = await s.user("badexpiry");
    for (const expires_in_days of [0, -3, 1.5, 36501, "soon"]) {
      const r = await create(u.token, { name: "x", expires_in_days });
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", expect.any(String), [
          {
            field: "expires_in_days",
            code: "invalid",
            message: "must be an integer from 1 to 36500 or null",
          },
        ]),
      );
    }
    const r = await create(u.token, { name: "x", scopes: ["all"] });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      { field: "scopes", code: "unknown_field", message: "is not a known field" },
    ]);
  });

  test("400 for an expiry written as text or too large for a date: no token is created", async () => {
    // "99999999999" and "1e10" used to be a 500 (Invalid Date), "-1" a token expired at birth,
    // "-100000" one expiring in 1753, "0x10" 16 days: a JSON body is typed, and bounded.
    const u = await s.user("textexpiry");
    const before = await s.sql("SELECT id FROM api_tokens WHERE user_id = ? ORDER BY id", u.id);
    for (const expires_in_days of [
      "99999999999",
      "1e10",
      "9e15",
      "-1",
      "-100000",
      " ",
      "",
      "0x10",
      "1e3",
      "30",
      1e300,
      9e15,
      99999999999,
    ]) {
      const r = await create(u.token, { name: "x", expires_in_days });
      expect(r.status).toBe(400);
      expect(r.json).toEqual({
        detail: "The request is invalid.",
        code: "invalid_request",
        status: 400,
        errors: [
          {
            field: "expires_in_days",
            code: "invalid",
            message: "must be an integer from 1 to 36500 or null",
          },
        ],
      });
    }
    expect(await s.sql("SELECT id FROM api_tokens WHERE user_id = ? ORDER BY id", u.id)).toEqual(before);
    const list = await call(s, "GET", TOKENS, { token: u.token });
    expect(list.json.count).toBe(1);
    expect((await create(u.token, { name: "x", expires_in_days: 36500 })).status).toBe(201);
  });

  test(`409 conflict beyond ${MAX_ACTIVE_TOKENS} active tokens; revoking one makes room`, async () => {
    const u = await s.user("hoarder");
    for (let i = 1; i < MAX_ACTIVE_TOKENS; i++) await s.deps.tokens.create(u.id, `t${i}`, null, SYSTEM);
    const r = await create(u.token, { name: "one too many" });
    expect(r.status).toBe(409);
    expect(r.json).toEqual(
      errorBody(
        409,
        "conflict",
        `A user may hold at most ${MAX_ACTIVE_TOKENS} active tokens; revoke unused ones first.`,
      ),
    );
    const last = (await call(s, "GET", `${TOKENS}?page_size=1`, { token: u.token })).json.results[0];
    expect((await call(s, "DELETE", `${TOKENS}${last.id}/`, { token: u.token })).status).toBe(204);
    expect((await create(u.token, { name: "now it fits" })).status).toBe(201);
  });
});

describe("GET /api/v1/users/me/tokens/", () => {
  test("200 my tokens only, newest first, paginated", async () => {
    const u = await s.user("lister");
    await s.user("someone-else");
    await create(u.token, { name: "second" });
    const r = await call(s, "GET", `${TOKENS}?page_size=1`, { token: u.token });
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(2);
    expect(r.json.results.map((t: { name: string }) => t.name)).toEqual(["second"]);
    expect(r.json.next).toBe(`${s.url}${TOKENS}?page_size=1&page=2`);
  });
});

describe("GET /api/v1/users/me/tokens/{id}/", () => {
  test("200 the token as the list shows it, at the create response's Location; never the secret", async () => {
    const u = await s.user("getter");
    const made = await create(u.token, { name: "deploy", expires_in_days: 3 });
    const location = made.headers.get("location")!;
    expect(location).toBe(`${s.url}${TOKENS}${made.json.id}/`);
    const r = await fetch(location, { headers: { authorization: `Bearer ${u.token}` } });
    expect(r.status).toBe(200);
    const { token: _secret, ...shown } = made.json;
    expect(await r.json()).toEqual(shown);
    const listed = (await call(s, "GET", TOKENS, { token: u.token })).json.results;
    expect(listed.find((t: { id: number }) => t.id === made.json.id)).toEqual(shown);
  });
  test("404 not_found for another user's token, an unknown id and a non-number; 401 without a token", async () => {
    const a = await s.user("get-a");
    const b = await s.user("get-b");
    for (const id of [b.tokenId, 999999, "abc"]) {
      const r = await call(s, "GET", `${TOKENS}${id}/`, { token: a.token });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(errorBody(404, "not_found", "Token not found."));
    }
    const anon = await call(s, "GET", `${TOKENS}${a.tokenId}/`, {});
    expect(anon.status).toBe(401);
    expect(anon.json).toEqual(
      errorBody(
        401,
        "authentication_required",
        "Authentication credentials were not provided or are invalid.",
      ),
    );
  });
});

describe("DELETE /api/v1/users/me/tokens/{id}/", () => {
  test("204, and the request right after the DELETE returns with that token is 401", async () => {
    const u = await s.user("revoker");
    const other = (await create(u.token, { name: "doomed" })).json;
    const d = await call(s, "DELETE", `${TOKENS}${other.id}/`, { token: u.token });
    expect(d.status).toBe(204);
    const r = await me(other.token);
    expect(r.status).toBe(401);
    expect(r.json).toEqual(errorBody(401, "authentication_required", "The token has been revoked."));
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  test("a token can revoke itself; the list then shows revoked_at, and a second DELETE keeps it", async () => {
    const u = await s.user("selfrevoker");
    const keeper = (await create(u.token, { name: "keeper" })).json.token;
    expect((await call(s, "DELETE", `${TOKENS}${u.tokenId}/`, { token: u.token })).status).toBe(204);
    expect((await me(u.token)).status).toBe(401);
    const item = async () =>
      (await call(s, "GET", TOKENS, { token: keeper })).json.results.find(
        (t: { id: number }) => t.id === u.tokenId,
      );
    const revokedAt = (await item()).revoked_at;
    expect(revokedAt).toEqual(expect.any(String));
    expect((await call(s, "DELETE", `${TOKENS}${u.tokenId}/`, { token: keeper })).status).toBe(204);
    expect((await item()).revoked_at).toBe(revokedAt);
  });

  test("404 not_found for another user's token and for an unknown id; nothing is revoked", async () => {
    const a = await s.user("owner-a");
    const b = await s.user("owner-b");
    for (const id of [b.tokenId, 999999, "abc"]) {
      const r = await call(s, "DELETE", `${TOKENS}${id}/`, { token: a.token });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(errorBody(404, "not_found", "Token not found."));
    }
    expect((await me(b.token)).status).toBe(200);
  });
});

describe("expiry and last use", () => {
  test("401 once the token's expires_at has passed", async () => {
    const u = await s.user("expired");
    expect((await me(u.token)).status).toBe(200);
    // Simulating the passage of time: the expiry is moved into the past in the database.
    await s.sql(
      "UPDATE api_tokens SET expires_at = ? WHERE id = ?",
      new Date(Date.now() - 1000).toISOString(),
      u.tokenId,
    );
    const r = await me(u.token);
    expect(r.json).toEqual(errorBody(401, "authentication_required", "The token has expired."));
  });

  test("last_used_at is shown at once but written to the database in batches, not per request", async () => {
    const u = await s.user("user-of-tokens");
    const stored = async () =>
      (await s.row<{ last_used_at: string | null }>(
        "SELECT last_used_at FROM api_tokens WHERE id = ?",
        u.tokenId,
      ))!.last_used_at;
    const before = Date.now();
    // /users/me/ shows the token in use with this very use, as the token list does.
    const shown = (await me(u.token)).json.token;
    expect(Date.parse(shown.last_used_at)).toBeGreaterThanOrEqual(before);
    const listed = (await call(s, "GET", TOKENS, { token: u.token })).json.results[0];
    expect(Date.parse(listed.last_used_at)).toBeGreaterThanOrEqual(before);
    expect(await stored()).toBeNull();
    await s.deps.tokens.flush();
    expect(Date.parse((await stored())!)).toBeGreaterThanOrEqual(before);
  });

  test("a flush asked for while another is under way waits for it, then writes the uses since", async () => {
    const [a, b] = [await s.user("flush-a"), await s.user("flush-b")];
    const stored = async (id: number) =>
      (await s.row<{ last_used_at: string }>("SELECT last_used_at FROM api_tokens WHERE id = ?", id))!
        .last_used_at;
    const tokens = s.deps.tokens;
    // Both verified once (cached: a use is then recorded without a database read) and written.
    for (const t of [a, b]) await tokens.verify(t.token);
    await tokens.flush();
    const earlier = await stored(b.tokenId);
    while (new Date().toISOString() <= earlier); // the next use is stored as a later time
    await tokens.verify(a.token);
    const first = tokens.flush(); // a's use: written by the group commit, on a later turn
    await tokens.verify(b.token); // recorded in this turn, while that write is under way
    await tokens.flush();
    expect(await stored(b.tokenId)).not.toBe(earlier);
    await first;
  });
});

describe("rotation without downtime (spec: create, switch, verify, revoke)", () => {
  test("old and new tokens work side by side until the old one is revoked", async () => {
    const u = await s.user("rotator", "acme", "executor");
    const old = { id: u.tokenId, token: u.token };
    const fresh = (await create(old.token, { name: "ci-2" })).json;
    // Switch and verify: the new token works and /users/me/ names it; the old one still works.
    expect((await me(fresh.token)).json.token.id).toBe(fresh.id);
    expect((await call(s, "GET", "/api/v1/orgs/acme/workflows/", { token: fresh.token })).status).toBe(200);
    expect((await call(s, "GET", "/api/v1/orgs/acme/workflows/", { token: old.token })).status).toBe(200);
    // Revoke the old one with the new one.
    expect((await call(s, "DELETE", `${TOKENS}${old.id}/`, { token: fresh.token })).status).toBe(204);
    expect((await me(old.token)).json).toEqual(
      errorBody(401, "authentication_required", "The token has been revoked."),
    );
    expect((await call(s, "GET", "/api/v1/orgs/acme/workflows/", { token: fresh.token })).status).toBe(200);
  });
});
