// The caches of tokens, users, org access, token policies and workflows are exact: every change
// acts on the very next request — made through the API, through a second SQLite connection to
// the same file (as the `assay` CLI does while the server runs) or by the real CLI.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { GenerationCache, generationOf } from "../src/db/generation.ts";
import { DB_FILE } from "../src/db/open.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
/** Another connection to the server's database file: the CLI's view. */
let other: Database;
const RUNS = "/api/v1/orgs/acme/runs/?page_size=1";
const JSON_CT = { "content-type": "application/json" };
const get = (token: string, path = RUNS) => call(s, "GET", path, { token });
const generation = () => (other.query("SELECT value FROM cache_generation").get() as { value: number }).value;
const forbiddenBody = (detail: string) => errorBody(403, "permission_denied", detail);
const unauthBody = (detail: string) => errorBody(401, "authentication_required", detail);

/** Two 200s in a row: the second is served from the caches. */
async function warm(token: string, path = RUNS) {
  expect((await get(token, path)).status).toBe(200);
  expect((await get(token, path)).status).toBe(200);
}

beforeAll(async () => {
  s = await startTestServer({ workers: 2 });
  other = new Database(join(s.dataDir, DB_FILE));
  other.exec("PRAGMA busy_timeout = 5000");
  other.exec("PRAGMA foreign_keys = ON");
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
});
afterAll(async () => {
  other.close();
  await s.close();
});

describe("tokens", () => {
  test("401 on the next request when the token is revoked through the API", async () => {
    const u = await s.user("api-revoked", "acme", "viewer");
    await warm(u.token);
    const r = await call(s, "DELETE", `/api/v1/users/me/tokens/${u.tokenId}/`, { token: u.token });
    expect(r.status).toBe(204);
    expect((await get(u.token)).json).toEqual(unauthBody("The token has been revoked."));
  });

  test("401 on the next request when another connection revokes the token", async () => {
    const u = await s.user("conn-revoked", "acme", "viewer");
    await warm(u.token);
    other.query("UPDATE api_tokens SET revoked_at = ? WHERE id = ?").run(new Date().toISOString(), u.tokenId);
    const r = await get(u.token);
    expect(r.status).toBe(401);
    expect(r.json).toEqual(unauthBody("The token has been revoked."));
  });

  test("401 on the next request when the CLI revokes the token", async () => {
    const u = await s.user("cli-revoked", "acme", "viewer");
    await warm(u.token);
    const cli = Bun.spawn(
      [process.execPath, join(import.meta.dir, "../src/main.ts"), "tokens", "revoke", String(u.tokenId)],
      { env: { ...process.env, ASSAY_DATA_DIR: s.dataDir }, stdout: "pipe", stderr: "pipe" },
    );
    expect(await cli.exited).toBe(0);
    expect(await new Response(cli.stdout).text()).toBe(`Token ${u.tokenId} revoked.\n`);
    expect((await get(u.token)).json).toEqual(unauthBody("The token has been revoked."));
  });

  test("401 once a cached token passes its expiry, with no write in between", async () => {
    const u = await s.user("expiring", "acme", "viewer");
    const expiresAt = Date.now() + 600;
    other
      .query("UPDATE api_tokens SET expires_at = ? WHERE id = ?")
      .run(new Date(expiresAt).toISOString(), u.tokenId);
    await warm(u.token);
    const before = generation();
    await Bun.sleep(Math.max(0, expiresAt - Date.now()) + 5); // the clock is the condition
    expect((await get(u.token)).json).toEqual(unauthBody("The token has expired."));
    expect(generation()).toBe(before);
  });

  test("401 on the next request when another connection sets a maximum token lifetime", async () => {
    const u = await s.user("policy", "acme", "viewer");
    await warm(u.token);
    other.query("INSERT INTO settings (key, value) VALUES ('token_max_ttl_days', '0')").run();
    try {
      expect((await get(u.token)).json).toEqual(
        unauthBody("The token is older than the instance's maximum token lifetime."),
      );
    } finally {
      other.query("DELETE FROM settings WHERE key = 'token_max_ttl_days'").run();
    }
    expect((await get(u.token)).status).toBe(200);
  });

  test("random and near-miss tokens are refused and never cached", async () => {
    const u = await s.user("prober", "acme", "viewer");
    await warm(u.token);
    const size = s.deps.tokens.cacheSize();
    expect(size).toBeGreaterThan(0);
    const prefix = u.token.slice(0, "assay_".length + 8);
    for (let i = 0; i < 200; i++) {
      const secret = randomBytes(32).toString("base64url");
      const bad = i % 2 ? `assay_${randomBytes(6).toString("base64url")}${secret}` : prefix + secret;
      const r = await get(bad);
      expect(r.status).toBe(401);
      expect(r.json).toEqual(unauthBody("Invalid token."));
    }
    expect(s.deps.tokens.cacheSize()).toBe(size);
  });

  test("the batched last-use flush leaves the caches in place", async () => {
    const u = await s.user("flusher", "acme", "viewer");
    await warm(u.token);
    const before = generation();
    await s.deps.tokens.flush();
    const row = other.query("SELECT last_used_at FROM api_tokens WHERE id = ?").get(u.tokenId) as {
      last_used_at: string | null;
    };
    expect(row.last_used_at).not.toBeNull();
    expect(generation()).toBe(before);
  });

  test("401 when another connection revokes the token during a sync run's wait", async () => {
    const u = await s.user("waiter", "acme", "executor");
    const gate = s.gates.gate();
    const pending = call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: u.token,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "wait=60" },
    });
    // Authentication passed and the run is held: the request waits until the gate opens.
    await gate.held();
    other.query("UPDATE api_tokens SET revoked_at = ? WHERE id = ?").run(new Date().toISOString(), u.tokenId);
    gate.open();
    expect((await pending).json).toEqual(unauthBody("The token has been revoked."));
  });
});

describe("users", () => {
  test("401 on the next request when another connection deletes the user", async () => {
    const u = await s.user("doomed", "acme", "viewer");
    await warm(u.token);
    other.query("DELETE FROM users WHERE id = ?").run(u.id);
    expect((await get(u.token)).json).toEqual(unauthBody("Invalid token."));
  });

  test("403 on the next request when another connection takes instance admin away", async () => {
    const u = await s.user("ex-admin", undefined, undefined, { is_admin: true });
    await warm(u.token, "/api/v1/admin/settings/");
    other.query("UPDATE users SET is_admin = 0 WHERE id = ?").run(u.id);
    expect((await get(u.token, "/api/v1/admin/settings/")).json).toEqual(
      forbiddenBody("This action needs an instance administrator."),
    );
  });
});

describe("org access", () => {
  test("403 on the next request when another connection removes the member", async () => {
    const u = await s.user("removed", "acme", "viewer");
    await warm(u.token);
    other.query("DELETE FROM memberships WHERE user_id = ?").run(u.id);
    expect((await get(u.token)).json).toEqual(forbiddenBody("You are not a member of this organization."));
  });

  test("403 on the next request when another connection lowers the role", async () => {
    const u = await s.user("lowered", "acme", "admin");
    await warm(u.token, "/api/v1/orgs/acme/webhooks/");
    other.query("UPDATE memberships SET role = 'viewer' WHERE user_id = ?").run(u.id);
    expect((await get(u.token, "/api/v1/orgs/acme/webhooks/")).json).toEqual(
      forbiddenBody("This action needs the admin role or higher."),
    );
  });

  test("200 on the next request when another connection adds the member", async () => {
    const u = await s.user("joiner");
    const orgId = await s.org("acme");
    expect((await get(u.token)).json).toEqual(forbiddenBody("You are not a member of this organization."));
    other
      .query("INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?, ?, 'viewer', ?)")
      .run(orgId, u.id, new Date().toISOString());
    expect((await get(u.token)).status).toBe(200);
  });

  test("403 on the next request when another connection suspends, then deletes the org", async () => {
    const orgId = await s.org("fragile");
    const u = await s.user("tenant", "fragile", "viewer");
    const path = "/api/v1/orgs/fragile/runs/";
    await warm(u.token, path);
    other.query("UPDATE orgs SET status = 'suspended' WHERE id = ?").run(orgId);
    expect((await get(u.token, path)).json).toEqual(forbiddenBody("The organization is suspended."));
    other
      .query("UPDATE orgs SET status = 'active', deleted_at = ? WHERE id = ?")
      .run(new Date().toISOString(), orgId);
    expect((await get(u.token, path)).json).toEqual(forbiddenBody("The organization has been deleted."));
  });
});

describe("workflows", () => {
  test("409 on the next run when another connection deactivates the workflow; 200 shows the change", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "toggle",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const u = await s.user("submitter", "acme", "executor");
    const submit = () =>
      call(s, "POST", "/api/v1/orgs/acme/workflows/toggle/runs/", {
        token: u.token,
        raw: "{}",
        headers: JSON_CT,
      });
    expect((await submit()).status).toBe(201);
    other.query("UPDATE workflows SET status = 'inactive' WHERE slug = 'toggle'").run();
    expect((await submit()).json).toEqual(
      errorBody(409, "workflow_inactive", "The workflow is inactive; re-enable it to accept runs."),
    );
    expect((await get(u.token, "/api/v1/orgs/acme/workflows/toggle/")).json.status).toBe("inactive");
    other.query("UPDATE workflows SET name = 'Renamed', status = 'active' WHERE slug = 'toggle'").run();
    expect((await get(u.token, "/api/v1/orgs/acme/workflows/toggle/")).json.name).toBe("Renamed");
    expect((await submit()).status).toBe(201);
  });

  test("404 on the next request when another connection deletes the workflow", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "doomed-wf",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const path = "/api/v1/orgs/acme/workflows/doomed-wf/";
    await warm(s.rootToken, path);
    other.query("UPDATE workflows SET deleted_at = ? WHERE slug = 'doomed-wf'").run(new Date().toISOString());
    expect((await get(s.rootToken, path)).json).toEqual(errorBody(404, "not_found", "Workflow not found."));
  });
});

describe("generationOf", () => {
  test("reads once per event-loop turn: a write from another connection shows on the next turn", async () => {
    const read = generationOf(s.deps.db);
    const before = read();
    other.run("UPDATE cache_generation SET value = value + 1");
    expect(read()).toBe(before); // same turn: requests handled together
    await new Promise((resolve) => setImmediate(resolve));
    expect(read()).toBe(before + 1);
  });

  test("a write of this connection shows at once, in the same turn (a PATCH reads back what it wrote)", () => {
    const read = generationOf(s.deps.db);
    const before = read();
    s.deps.db.run("UPDATE cache_generation SET value = value + 1");
    expect(read()).toBe(before + 1);
  });
});

describe("GenerationCache", () => {
  test("drops every entry when the generation moves; never remembers a miss", () => {
    let gen = 1;
    let loads = 0;
    const c = new GenerationCache<string, string>(() => gen, 10);
    const load = (v: string | null) => () => {
      loads++;
      return v;
    };
    expect(c.get("a", load("A1"))).toBe("A1");
    expect(c.get("a", load("A2"))).toBe("A1");
    expect(c.get("b", load(null))).toBeNull();
    expect(c.get("b", load(null))).toBeNull();
    expect(loads).toBe(3);
    gen = 2;
    expect(c.get("a", load("A3"))).toBe("A3");
    expect(c.size).toBe(1);
  });

  test("a value loaded before the generation moved is not stored", () => {
    let gen = 1;
    const c = new GenerationCache<string, string>(() => gen, 10);
    const at = c.sync();
    gen = 2;
    c.sync();
    c.put(at, "a", "stale");
    expect(c.size).toBe(0);
  });

  test("a known generation saves the read unless it is newer than the cache's", () => {
    let reads = 0;
    const c = new GenerationCache<string, string>(() => {
      reads++;
      return 5;
    }, 10);
    c.get("a", () => "A");
    expect(reads).toBe(1);
    expect(c.get("a", () => "B", 5)).toBe("A");
    expect(c.get("a", () => "B", 4)).toBe("A");
    expect(reads).toBe(1);
    expect(c.get("a", () => "C", 6)).toBe("C");
    expect(reads).toBe(1);
  });

  test("holds at most its capacity, evicting the least recently used", () => {
    const c = new GenerationCache<number, number>(() => 1, 3);
    for (const k of [1, 2, 3]) c.get(k, () => k);
    c.get(1, () => -1);
    c.get(4, () => 4);
    expect(c.size).toBe(3);
    expect(c.get(1, () => -1)).toBe(1);
    expect(c.get(2, () => -2)).toBe(-2);
  });
});
