// The caches of tokens, users, org access, token policies and workflows are exact: every change
// acts on the very next request — made through the API, through a second SQLite connection to
// the same file (as the `assay` CLI does while the server runs) or by the real CLI.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { GenerationCache } from "../src/db/generation.ts";
import { describeDb } from "../src/db/open.ts";
import { type Db, type Program, lift } from "../src/db/program.ts";
import type { SqliteDb } from "../src/db/sqlite.ts";
import { type OtherConnection, onPostgres, otherConnection } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
/** Another connection to the server's database: the CLI's view (or another node's). */
let other: OtherConnection;
const RUNS = "/api/v1/orgs/acme/runs/?page_size=1";
const JSON_CT = { "content-type": "application/json" };
const get = (token: string, path = RUNS) => call(s, "GET", path, { token });
const generation = async () =>
  Number((await other.sql<{ value: number }>("SELECT value FROM cache_generation"))[0]!.value);
const forbiddenBody = (detail: string) => errorBody(403, "permission_denied", detail);
const unauthBody = (detail: string) => errorBody(401, "authentication_required", detail);

/** The environment that points the CLI at the server's database. */
const cliEnv = () => ({
  ...process.env,
  ASSAY_DATA_DIR: s.dataDir,
  ...(s.databaseUrl ? { ASSAY_DATABASE_URL: s.databaseUrl } : {}),
});

/** Two 200s in a row: the second is served from the caches. */
async function warm(token: string, path = RUNS) {
  expect((await get(token, path)).status).toBe(200);
  expect((await get(token, path)).status).toBe(200);
}

beforeAll(async () => {
  s = await startTestServer({ workers: 2 });
  other = await otherConnection(s);
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
});
afterAll(async () => {
  await other.close();
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
    await other.sql("UPDATE api_tokens SET revoked_at = ? WHERE id = ?", new Date().toISOString(), u.tokenId);
    const r = await get(u.token);
    expect(r.status).toBe(401);
    expect(r.json).toEqual(unauthBody("The token has been revoked."));
  });

  test("401 on the next request when the CLI revokes the token", async () => {
    const u = await s.user("cli-revoked", "acme", "viewer");
    await warm(u.token);
    const cli = Bun.spawn(
      [process.execPath, join(import.meta.dir, "../src/main.ts"), "tokens", "revoke", String(u.tokenId)],
      { env: cliEnv(), stdout: "pipe", stderr: "pipe" },
    );
    expect(await cli.exited).toBe(0);
    expect(await new Response(cli.stdout).text()).toBe(
      `Token ${u.tokenId} revoked (${describeDb({ data_dir: s.dataDir, database_url: s.databaseUrl })}).\n`,
    );
    expect((await get(u.token)).json).toEqual(unauthBody("The token has been revoked."));
  });

  test("401 once a cached token passes its expiry, with no write in between", async () => {
    const u = await s.user("expiring", "acme", "viewer");
    // The token must be cached while still valid: a host too slow to warm it within the margin
    // tries again with a longer one (the clock, not the host's speed, decides the outcome).
    let expiresAt = 0;
    for (let margin = 600; ; margin *= 4) {
      expiresAt = Date.now() + margin;
      await other.sql(
        "UPDATE api_tokens SET expires_at = ? WHERE id = ?",
        new Date(expiresAt).toISOString(),
        u.tokenId,
      );
      const answers = [await get(u.token), await get(u.token)];
      if (Date.now() < expiresAt) {
        expect(answers.map((a) => a.status)).toEqual([200, 200]);
        break;
      }
      expect(margin).toBeLessThan(600 * 4 ** 4);
    }
    const before = await generation();
    await Bun.sleep(Math.max(0, expiresAt - Date.now()) + 5); // the clock is the condition
    expect((await get(u.token)).json).toEqual(unauthBody("The token has expired."));
    expect(await generation()).toBe(before);
  });

  test("401 on the next request when another connection sets a maximum token lifetime", async () => {
    const u = await s.user("policy", "acme", "viewer");
    await warm(u.token);
    await other.sql("INSERT INTO settings (key, value) VALUES ('token_max_ttl_days', '0')");
    try {
      expect((await get(u.token)).json).toEqual(
        unauthBody("The token is older than the instance's maximum token lifetime."),
      );
    } finally {
      await other.sql("DELETE FROM settings WHERE key = 'token_max_ttl_days'");
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
    const before = await generation();
    await s.deps.tokens.flush();
    const [row] = await other.sql<{ last_used_at: string | null }>(
      "SELECT last_used_at FROM api_tokens WHERE id = ?",
      u.tokenId,
    );
    expect(row!.last_used_at).not.toBeNull();
    expect(await generation()).toBe(before);
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
    await other.sql("UPDATE api_tokens SET revoked_at = ? WHERE id = ?", new Date().toISOString(), u.tokenId);
    gate.open();
    expect((await pending).json).toEqual(unauthBody("The token has been revoked."));
  });
});

describe("users", () => {
  test("401 on the next request when another connection deletes the user", async () => {
    const u = await s.user("doomed", "acme", "viewer");
    await warm(u.token);
    await other.sql("DELETE FROM users WHERE id = ?", u.id);
    expect((await get(u.token)).json).toEqual(unauthBody("Invalid token."));
  });

  test("403 on the next request when another connection takes instance admin away", async () => {
    const u = await s.user("ex-admin", undefined, undefined, { is_admin: true });
    await warm(u.token, "/api/v1/admin/settings/");
    await other.sql("UPDATE users SET is_admin = 0 WHERE id = ?", u.id);
    expect((await get(u.token, "/api/v1/admin/settings/")).json).toEqual(
      forbiddenBody("This action needs an instance administrator."),
    );
  });
});

describe("org access", () => {
  test("403 on the next request when another connection removes the member", async () => {
    const u = await s.user("removed", "acme", "viewer");
    await warm(u.token);
    await other.sql("DELETE FROM memberships WHERE user_id = ?", u.id);
    expect((await get(u.token)).json).toEqual(forbiddenBody("You are not a member of this organization."));
  });

  test("403 on the next request when another connection lowers the role", async () => {
    const u = await s.user("lowered", "acme", "admin");
    await warm(u.token, "/api/v1/orgs/acme/webhooks/");
    await other.sql("UPDATE memberships SET role = 'viewer' WHERE user_id = ?", u.id);
    expect((await get(u.token, "/api/v1/orgs/acme/webhooks/")).json).toEqual(
      forbiddenBody("This action needs the admin role or higher."),
    );
  });

  test("200 on the next request when another connection adds the member", async () => {
    const u = await s.user("joiner");
    const orgId = await s.org("acme");
    expect((await get(u.token)).json).toEqual(forbiddenBody("You are not a member of this organization."));
    await other.sql(
      "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?, ?, 'viewer', ?)",
      orgId,
      u.id,
      new Date().toISOString(),
    );
    expect((await get(u.token)).status).toBe(200);
  });

  test("403 on the next request when another connection suspends, then deletes the org", async () => {
    const orgId = await s.org("fragile");
    const u = await s.user("tenant", "fragile", "viewer");
    const path = "/api/v1/orgs/fragile/runs/";
    await warm(u.token, path);
    await other.sql("UPDATE orgs SET status = 'suspended' WHERE id = ?", orgId);
    expect((await get(u.token, path)).json).toEqual(forbiddenBody("The organization is suspended."));
    await other.sql(
      "UPDATE orgs SET status = 'active', deleted_at = ? WHERE id = ?",
      new Date().toISOString(),
      orgId,
    );
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
    await other.sql("UPDATE workflows SET status = 'inactive' WHERE slug = 'toggle'");
    expect((await submit()).json).toEqual(
      errorBody(409, "workflow_inactive", "The workflow is inactive; re-enable it to accept runs."),
    );
    expect((await get(u.token, "/api/v1/orgs/acme/workflows/toggle/")).json.status).toBe("inactive");
    await other.sql("UPDATE workflows SET name = 'Renamed', status = 'active' WHERE slug = 'toggle'");
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
    await other.sql("UPDATE workflows SET deleted_at = ? WHERE slug = 'doomed-wf'", new Date().toISOString());
    expect((await get(s.rootToken, path)).json).toEqual(errorBody(404, "not_found", "Workflow not found."));
  });
});

describe("the generation read", () => {
  test("once per event-loop turn: a write from another connection shows on the next turn", async () => {
    const read = async () => Number(await s.deps.db.generation());
    const before = await read();
    await other.sql("UPDATE cache_generation SET value = value + 1");
    // Same turn as a read already made: requests handled together share it (SQLite; on
    // PostgreSQL the read of this turn is one shared query).
    const sameTurn = s.deps.db.generation();
    expect(Number(await sameTurn)).toBe(onPostgres ? before + 1 : before);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await read()).toBe(before + 1);
  });

  test.skipIf(onPostgres)("a write of this connection shows at once, in the same turn (SQLite)", () => {
    const db = s.deps.db as SqliteDb;
    const before = db.generation();
    db.raw.run("UPDATE cache_generation SET value = value + 1");
    expect(db.generation()).toBe(before + 1);
  });
});

/** A database for GenerationCache alone: a generation the test sets, programs run at once. */
function fakeDb(gen: () => number): Db {
  const run = <T>(p: Program<T>): T => {
    const r = p.next();
    if (!r.done) throw new Error("fakeDb runs no statement");
    return r.value;
  };
  return {
    dialect: "sqlite",
    generation: gen,
    exec: async (p) => run(p),
    read: async (p) => run(p),
    tx: async (make) => run(make()),
    ping: async () => true,
    close: async () => {},
    stats: { statements: 0, transactions: 0 },
    txGroup: async (makes) => makes.map((make) => run(make())),
  };
}

describe("GenerationCache", () => {
  test("drops every entry when the generation moves; never remembers a miss", async () => {
    let gen = 1;
    let loads = 0;
    const c = new GenerationCache<string, string>(
      fakeDb(() => gen),
      10,
    );
    const load = (v: string | null) => () =>
      lift(() => {
        loads++;
        return v;
      });
    expect(await c.get("a", load("A1"))).toBe("A1");
    expect(await c.get("a", load("A2"))).toBe("A1");
    expect(await c.get("b", load(null))).toBeNull();
    expect(await c.get("b", load(null))).toBeNull();
    expect(loads).toBe(3);
    gen = 2;
    expect(await c.get("a", load("A3"))).toBe("A3");
    expect(c.size).toBe(1);
  });

  test("a value loaded before the generation moved is not stored", () => {
    let gen = 1;
    const c = new GenerationCache<string, string>(
      fakeDb(() => gen),
      10,
    );
    const at = c.sync() as number;
    gen = 2;
    c.sync();
    c.put(at, "a", "stale");
    expect(c.size).toBe(0);
  });

  test("generations only move forward: a late read of an older one neither empties nor stores", () => {
    let gen = 2;
    const c = new GenerationCache<string, string>(
      fakeDb(() => gen),
      10,
    );
    c.put(c.sync() as number, "a", "A");
    gen = 1;
    expect(c.sync()).toBe(1);
    expect(c.size).toBe(1);
    c.put(1, "b", "B");
    expect(c.peek("b")).toBeUndefined();
  });

  test("a known generation saves the read unless it is newer than the cache's", async () => {
    let reads = 0;
    const c = new GenerationCache<string, string>(
      fakeDb(() => {
        reads++;
        return 5;
      }),
      10,
    );
    await c.get("a", () => lift(() => "A"));
    expect(reads).toBe(1);
    expect(await c.get("a", () => lift(() => "B"), 5)).toBe("A");
    expect(await c.get("a", () => lift(() => "B"), 4)).toBe("A");
    expect(reads).toBe(1);
    expect(await c.get("a", () => lift(() => "C"), 6)).toBe("C");
    expect(reads).toBe(1);
  });

  test("holds at most its capacity, evicting the least recently used", async () => {
    const c = new GenerationCache<number, number>(
      fakeDb(() => 1),
      3,
    );
    for (const k of [1, 2, 3]) await c.get(k, () => lift(() => k));
    await c.get(1, () => lift(() => -1));
    await c.get(4, () => lift(() => 4));
    expect(c.size).toBe(3);
    expect(await c.get(1, () => lift(() => -1))).toBe(1);
    expect(await c.get(2, () => lift(() => -2))).toBe(-2);
  });
});
