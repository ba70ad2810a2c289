// Token policies (instance settings): default lifetime, maximum lifetime, required rotation.
// Time is simulated by moving a token's created_at into the past directly in the database —
// the server reads it like any other token, so no clock needs faking.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SYSTEM } from "../src/audit/actor.ts";
import { MAX_ACTIVE_TOKENS } from "../src/tokens/service.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());
const NONE = {
  token_default_ttl_days: null,
  token_max_ttl_days: null,
  token_rotation_days: null,
  audit_retention_days: null,
};
afterEach(async () => {
  await call(s, "PATCH", SETTINGS, { token: s.rootToken, body: NONE });
});

const SETTINGS = "/api/v1/admin/settings/";
const DAY_MS = 86_400_000;
const policy = (body: Record<string, unknown>) => call(s, "PATCH", SETTINGS, { token: s.rootToken, body });
const me = (token: string) => call(s, "GET", "/api/v1/users/me/", { token });
const newToken = (token: string, body: Record<string, unknown>) =>
  call(s, "POST", "/api/v1/users/me/tokens/", { token, body: { name: "t", ...body } });
/** A user whose token was created `days` ago. */
async function agedToken(name: string, days: number) {
  const u = await s.user(name);
  const created = new Date(Date.now() - days * DAY_MS);
  await s.sql("UPDATE api_tokens SET created_at = ? WHERE id = ?", created.toISOString(), u.tokenId);
  return { ...u, created };
}
const daysAhead = (iso: string) => (Date.parse(iso) - Date.now()) / DAY_MS;

describe("defaults: tokens do not expire", () => {
  test("200 the settings are all null, and a token made ten years ago still works", async () => {
    const r = await call(s, "GET", SETTINGS, { token: s.rootToken });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(NONE);
    const u = await agedToken("ancient", 3650);
    expect((await me(u.token)).status).toBe(200);
    expect((await newToken(u.token, {})).json.expires_at).toBeNull();
  });
});

describe("PATCH /api/v1/admin/settings/", () => {
  test("200 changes only the named settings", async () => {
    const r = await policy({ token_rotation_days: 90 });
    expect(r.json).toEqual({ ...NONE, token_rotation_days: 90 });
  });
  test("400 invalid_request for a value that is not 1..36500 or null, and for an unknown key", async () => {
    for (const v of [0, 36501, 2.5, "ten"]) {
      expect((await policy({ token_max_ttl_days: v })).json).toEqual(
        errorBody(400, "invalid_request", "The request is invalid.", [
          {
            field: "token_max_ttl_days",
            code: "invalid",
            message: "must be an integer from 1 to 36500 or null",
          },
        ]),
      );
    }
    const r = await policy({ token_ttl: 5 });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      { field: "token_ttl", code: "unknown_field", message: "is not a known field" },
    ]);
  });
  test("400 for a number written as text or out of range: nothing is saved, no token is locked out", async () => {
    // A JSON body is typed: "-1" is a string, not -1. The string used to pass, be saved as the
    // text "-1" and refuse every token (401 "must be rotated"); "1e3" and "0x10" became 1000, 16.
    const kept = {
      token_default_ttl_days: 10,
      token_max_ttl_days: 30,
      token_rotation_days: 90,
      audit_retention_days: 400,
    };
    expect((await policy(kept)).json).toEqual(kept);
    const rows = await s.sql("SELECT key, value FROM settings ORDER BY key");
    const auditRows = await s.count("audit_log");
    for (const key of Object.keys(kept))
      for (const v of ["-1", "-5", "1e3", "0x10", "30", " ", "", 1e300, 9e15, -1, 2 ** 53]) {
        const r = await policy({ [key]: v });
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          detail: "The request is invalid.",
          code: "invalid_request",
          status: 400,
          errors: [{ field: key, code: "invalid", message: "must be an integer from 1 to 36500 or null" }],
        });
      }
    expect((await call(s, "GET", SETTINGS, { token: s.rootToken })).json).toEqual(kept);
    expect(await s.sql("SELECT key, value FROM settings ORDER BY key")).toEqual(rows);
    expect(await s.count("audit_log")).toBe(auditRows);
    expect((await me(s.rootToken)).status).toBe(200);
  });
  test("400 when the default lifetime would exceed the maximum", async () => {
    await policy({ token_max_ttl_days: 30 });
    expect((await policy({ token_default_ttl_days: 31 })).json).toEqual(
      errorBody(400, "invalid_request", "Inconsistent token policies.", [
        {
          field: "token_default_ttl_days",
          code: "above_max",
          message: "The default lifetime (31 days) exceeds token_max_ttl_days (30).",
        },
      ]),
    );
  });
  test("403 permission_denied for an org admin who is not an instance admin", async () => {
    const u = await s.user("orgadmin", "acme", "admin");
    const r = await call(s, "PATCH", SETTINGS, { token: u.token, body: { token_max_ttl_days: 1 } });
    expect(r.json).toEqual(
      errorBody(403, "permission_denied", "This action needs an instance administrator."),
    );
  });
});

describe("token_default_ttl_days", () => {
  test("a token created without an expiry gets the default; an explicit expiry wins", async () => {
    const u = await s.user("defaulted");
    await policy({ token_default_ttl_days: 10 });
    expect(daysAhead((await newToken(u.token, {})).json.expires_at)).toBeCloseTo(10, 2);
    expect(daysAhead((await newToken(u.token, { expires_in_days: 3 })).json.expires_at)).toBeCloseTo(3, 2);
  });
});

describe("token_max_ttl_days", () => {
  test("400 for a longer requested lifetime; without one, the token gets the maximum", async () => {
    const u = await s.user("capped");
    await policy({ token_max_ttl_days: 30 });
    expect((await newToken(u.token, { expires_in_days: 31 })).json).toEqual(
      errorBody(
        400,
        "invalid_request",
        "The requested lifetime exceeds the instance's maximum token lifetime.",
        [{ field: "expires_in_days", code: "max_ttl", message: "At most 30 days are allowed." }],
      ),
    );
    expect(daysAhead((await newToken(u.token, {})).json.expires_at)).toBeCloseTo(30, 2);
    expect((await newToken(u.token, { expires_in_days: 30 })).status).toBe(201);
  });
  test("401 for an existing token older than the maximum, on the next request", async () => {
    const old = await agedToken("old-timer", 31);
    const young = await agedToken("youngster", 29);
    expect((await me(old.token)).status).toBe(200);
    await policy({ token_max_ttl_days: 30 });
    expect((await me(old.token)).json).toEqual(
      errorBody(
        401,
        "authentication_required",
        "The token is older than the instance's maximum token lifetime.",
      ),
    );
    expect((await me(young.token)).status).toBe(200);
  });
});

describe("token_rotation_days", () => {
  test("401 for a token older than the rotation period", async () => {
    const u = await agedToken("unrotated", 91);
    await policy({ token_rotation_days: 90 });
    expect((await me(u.token)).json).toEqual(
      errorBody(
        401,
        "authentication_required",
        "The token must be rotated: create a new one and revoke this one.",
      ),
    );
  });
  test("in its last 7 days a token's responses carry a Warning header naming the date", async () => {
    const due = await agedToken("due-soon", 85);
    const fresh = await agedToken("fresh", 10);
    await policy({ token_rotation_days: 90 });
    const r = await me(due.token);
    expect(r.status).toBe(200);
    const deadline = new Date(due.created.getTime() + 90 * DAY_MS).toISOString();
    expect(r.headers.get("warning")).toBe(`299 assay "This token must be rotated before ${deadline}"`);
    expect((await me(fresh.token)).headers.get("warning")).toBeNull();
  });
});

describe("the active-token cap counts tokens that still work", () => {
  test("tokens past rotation or the maximum lifetime make room; policies lifted, they count again", async () => {
    const u = await s.user("cap-aged");
    for (let i = 1; i < MAX_ACTIVE_TOKENS; i++) await s.deps.tokens.create(u.id, `t${i}`, null, SYSTEM);
    // All of them but the caller's own made 100 days ago.
    await s.sql(
      "UPDATE api_tokens SET created_at = ? WHERE user_id = ? AND id <> ?",
      new Date(Date.now() - 100 * DAY_MS).toISOString(),
      u.id,
      u.tokenId,
    );
    const full = errorBody(
      409,
      "conflict",
      `A user may hold at most ${MAX_ACTIVE_TOKENS} active tokens; revoke unused ones first.`,
    );
    const refused = await newToken(u.token, {});
    expect(refused.status).toBe(409);
    expect(refused.json).toEqual(full);
    for (const rule of [{ token_rotation_days: 90 }, { token_max_ttl_days: 90 }]) {
      await policy({ ...NONE, ...rule });
      const made = await newToken(u.token, {});
      expect(made.status).toBe(201);
      await call(s, "DELETE", `/api/v1/users/me/tokens/${made.json.id}/`, { token: u.token });
    }
    await policy(NONE);
    expect((await newToken(u.token, {})).json).toEqual(full);
  });
});

describe("`assay settings set` from another process", () => {
  test("acts on the server's very next request (no stale cache)", async () => {
    const u = await agedToken("cli-aged", 2);
    expect((await me(u.token)).status).toBe(200);
    const cli = Bun.spawnSync(
      [
        process.execPath,
        join(import.meta.dir, "../src/main.ts"),
        "settings",
        "set",
        "token_max_ttl_days",
        "1",
      ],
      {
        env: {
          ...process.env,
          ASSAY_DATA_DIR: s.dataDir,
          ...(s.databaseUrl ? { ASSAY_DATABASE_URL: s.databaseUrl } : {}),
        },
      },
    );
    expect(cli.exitCode).toBe(0);
    expect((await me(u.token)).status).toBe(401);
    expect((await call(s, "GET", SETTINGS, { token: s.rootToken })).json.token_max_ttl_days).toBe(1);
  });
});
