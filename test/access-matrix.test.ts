// The access matrix: every /api/v1 route × every kind of caller, asserting status and code of
// each cell (CONTRACT §6): no token, revoked, expired, deleted user → 401; role too low, not a
// member, suspended or deleted org → 403; a sufficient role → the route's success status.
// The route list comes from the running app, so a route added without a row fails the first test.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Role, ROLES, roleRank } from "../src/orgs/store.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

type Min = Role | "any" | "self" | "instance-admin" | "public";
type Vals = Record<string, string>;
interface Caller {
  token: string | null;
  userId: number;
}
interface Row {
  method: string;
  path: string;
  min: Min;
  ok: number;
  /** JSON body; sees the path values (fixtures, fresh values) and `uniq`, a fresh suffix. */
  body?: (v: Vals) => unknown;
  /** Path values for this row, over the shared fixtures below. */
  params?: Vals;
  /** Fresh path values for each success cell (destructive routes), made for the caller. */
  fresh?: (c: Caller) => Promise<Vals>;
  /** Check success with the viewer only: for a costly route where every caller is alike. */
  oneSuccess?: boolean;
}
const row = (method: string, path: string, min: Min, ok: number, o: Partial<Row> = {}): Row => ({
  method,
  path,
  min,
  ok,
  ...o,
});

let s: TestServer;
let n = 0;
const uniq = () => `${Date.now().toString(36)}${++n}`;
const wfBody = (slug: string) => ({
  slug,
  name: `Workflow ${slug}`,
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
});
const envelopeBody = { content: "{}", content_type: "application/json" };
const PASSWORD = "matrix-password";
let passwordHash: string;

// Fresh fixtures for success cells, made through the API as root (admin of acme) or the store.
const fresh = {
  async workflow(): Promise<Vals> {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: wfBody(`fw-${uniq()}`),
    });
    return { workflow: r.json.slug, step_id: String(r.json.steps[0].id) };
  },
  /** A workflow with two versions (version 1 can be restored). */
  async workflowV2(): Promise<Vals> {
    const v = await fresh.workflow();
    await call(s, "PATCH", `/api/v1/orgs/acme/workflows/${v.workflow}/`, {
      token: s.rootToken,
      body: { description: "second version" },
    });
    return v;
  },
  member: async (): Promise<Vals> => ({ username: (await freshUser("fm", "viewer")).username }),
  user: async (): Promise<Vals> => ({ username: (await freshUser("fu")).username }),
  newMember: async (): Promise<Vals> => ({ new_username: (await freshUser("fn")).username }),
  /** An org where the caller is Admin: for deleting an org. */
  async ownOrg(c: Caller): Promise<Vals> {
    const slug = `fo-${uniq()}`;
    await s.deps.orgs.addMember(await s.org(slug), c.userId, "admin", SYSTEM);
    return { org_slug: slug };
  },
  async org(): Promise<Vals> {
    const slug = `fx-${uniq()}`;
    await s.org(slug);
    return { org_slug: slug };
  },
  /** Sets the caller's password to PASSWORD (for the password change route). */
  async password(c: Caller): Promise<Vals> {
    await s.deps.users.setPassword(c.userId, passwordHash, SYSTEM);
    return {};
  },
  token: async (c: Caller): Promise<Vals> => ({
    id: String((await s.deps.tokens.create(c.userId, "fresh", null, SYSTEM)).record.id),
  }),
  /** A stored schema of acme. */
  async schema(): Promise<Vals> {
    const r = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
      token: s.rootToken,
      body: { uri: `urn:matrix:${uniq()}`, schema: { type: "object" } },
    });
    return { id: String(r.json.id) };
  },
  /** An inactive webhook of acme (so nothing is ever sent) with one finished delivery. */
  async webhook(): Promise<Vals> {
    const r = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: "https://1.1.1.1/matrix-hook", is_active: false },
    });
    const delivery = `msg_matrix${uniq()}`;
    const at = new Date().toISOString();
    await s.sql(
      "INSERT INTO webhook_deliveries (id, webhook_id, event, payload, status, created_at, finished_at) VALUES (?, ?, 'ping', '{}', 'failed', ?, ?)",
      delivery,
      r.json.id,
      at,
      at,
    );
    return { id: String(r.json.id), delivery_id: delivery };
  },
};
async function freshUser(prefix: string, role?: Role) {
  const username = `${prefix}-${uniq()}`;
  await s.user(username, role && "acme", role);
  return { username };
}
// ─── The table ─────────────────────────────────────────────────────────────────────────────
// TO ADD A ROUTE: add one `row(method, path, minimum, successStatus, options?)` line. The path
// is exactly as registered (Elysia `:param` syntax: compare the failure message of the first
// test). Minimum: a Role for org-scoped routes (path under /orgs/:org_slug/), "any" or "self"
// (every authenticated user), "instance-admin", or "public" (no token needed: only the no-token
// cell is checked, and it must answer successStatus). Path values come from FIXTURES (org_slug,
// workflow, run_id, step_id, username); a route with another placeholder gets it from `params`
// (a shared fixture made in beforeAll, never destroyed) and, if it deletes or changes what it
// touches, from `fresh` (a maker run once per success cell, for that caller). `body` builds the
// JSON body. Org-scoped routes must check access before loading the resource: the 403 cells
// call them on other orgs with acme's placeholders.
/** Placeholders for the webhook rows' refusal cells (access is checked before the webhook). */
const WH: Vals = { id: "1", delivery_id: "msg_none" };
/** Placeholder for the stored schema rows' refusal cells. */
const SC: Vals = { id: "1" };
const ROWS: Row[] = [
  row("GET", "/api/v1/users/me/", "any", 200),
  row("GET", "/api/v1/auth/me/", "any", 200),
  row("GET", "/api/v1/users/me/tokens/", "self", 200),
  row("POST", "/api/v1/users/me/tokens/", "self", 201, { body: () => ({ name: "matrix" }) }),
  row("GET", "/api/v1/users/me/tokens/:id/", "self", 200, { params: { id: "1" }, fresh: fresh.token }),
  row("DELETE", "/api/v1/users/me/tokens/:id/", "self", 204, { params: { id: "1" }, fresh: fresh.token }),
  row("POST", "/api/v1/users/me/password/", "self", 204, {
    fresh: fresh.password,
    body: () => ({ current_password: PASSWORD, new_password: PASSWORD }),
    oneSuccess: true, // each success hashes a password (about a second)
  }),
  row("POST", "/api/v1/auth/login/", "public", 200, {
    body: () => ({ username: "m-login", password: PASSWORD }),
  }),
  row("POST", "/api/v1/auth/logout/", "public", 204),
  row("GET", "/api/v1/setup/", "public", 200),
  // An instance with users: the first-run form is closed to everyone (test/setup.test.ts).
  row("POST", "/api/v1/setup/", "public", 409, {
    body: () => ({ setup_code: "x", username: "x", password: "x", org_slug: "x" }),
  }),
  row("GET", "/api/v1/auth/session/", "any", 200),
  row("GET", "/api/v1/validators/", "any", 200),
  row("GET", "/api/v1/orgs/", "any", 200),
  row("GET", "/api/v1/orgs/:org_slug/", "viewer", 200),
  row("PATCH", "/api/v1/orgs/:org_slug/", "admin", 200, { body: () => ({ name: "ACME" }) }),
  row("DELETE", "/api/v1/orgs/:org_slug/", "admin", 204, { fresh: fresh.ownOrg }),
  row("GET", "/api/v1/orgs/:org_slug/members/", "viewer", 200),
  row("POST", "/api/v1/orgs/:org_slug/members/", "admin", 201, {
    params: { new_username: "nobody" },
    fresh: fresh.newMember,
    body: (v) => ({ username: v.new_username, role: "viewer" }),
  }),
  row("GET", "/api/v1/orgs/:org_slug/members/:username/", "viewer", 200),
  row("PATCH", "/api/v1/orgs/:org_slug/members/:username/", "admin", 200, {
    fresh: fresh.member,
    body: () => ({ role: "author" }),
  }),
  row("DELETE", "/api/v1/orgs/:org_slug/members/:username/", "admin", 204, { fresh: fresh.member }),
  row("GET", "/api/v1/orgs/:org_slug/workflows/", "viewer", 200),
  row("POST", "/api/v1/orgs/:org_slug/workflows/", "author", 201, { body: () => wfBody(`nw-${uniq()}`) }),
  row("GET", "/api/v1/orgs/:org_slug/workflows/:workflow/", "viewer", 200),
  row("PUT", "/api/v1/orgs/:org_slug/workflows/:workflow/", "author", 200, {
    fresh: fresh.workflow,
    body: (v) => wfBody(v.workflow!),
  }),
  row("PATCH", "/api/v1/orgs/:org_slug/workflows/:workflow/", "author", 200, {
    fresh: fresh.workflow,
    body: () => ({ description: "patched" }),
  }),
  row("DELETE", "/api/v1/orgs/:org_slug/workflows/:workflow/", "author", 204, { fresh: fresh.workflow }),
  row("POST", "/api/v1/orgs/:org_slug/workflows/:workflow/steps/", "author", 201, {
    fresh: fresh.workflow,
    body: () => ({ name: "again", validator: "syntax", config: {} }),
  }),
  row("GET", "/api/v1/orgs/:org_slug/workflows/:workflow/steps/:step_id/", "viewer", 200),
  row("PATCH", "/api/v1/orgs/:org_slug/workflows/:workflow/steps/:step_id/", "author", 200, {
    fresh: fresh.workflow,
    body: () => ({ name: "renamed" }),
  }),
  row("DELETE", "/api/v1/orgs/:org_slug/workflows/:workflow/steps/:step_id/", "author", 204, {
    fresh: fresh.workflow,
  }),
  row("GET", "/api/v1/orgs/:org_slug/workflows/:workflow/versions/", "viewer", 200),
  row("GET", "/api/v1/orgs/:org_slug/workflows/:workflow/versions/:version/", "viewer", 200, {
    params: { version: "1" },
  }),
  row("GET", "/api/v1/orgs/:org_slug/workflows/:workflow/versions/:version/diff/", "viewer", 200, {
    params: { version: "2" },
  }),
  row("POST", "/api/v1/orgs/:org_slug/workflows/:workflow/versions/:version/restore/", "author", 201, {
    params: { version: "1" },
    fresh: fresh.workflowV2,
  }),
  row("GET", "/api/v1/orgs/:org_slug/audit/", "admin", 200),
  row("GET", "/api/v1/admin/audit/", "instance-admin", 200),
  row("GET", "/api/v1/admin/audit/head/", "instance-admin", 200),
  row("POST", "/api/v1/orgs/:org_slug/workflows/:workflow/runs/", "executor", 201, {
    body: () => envelopeBody,
  }),
  row("GET", "/api/v1/orgs/:org_slug/runs/", "viewer", 200),
  row("GET", "/api/v1/orgs/:org_slug/runs/:run_id/", "viewer", 200),
  row("GET", "/api/v1/orgs/:org_slug/runs/:run_id/content/", "viewer", 200),
  row("GET", "/api/v1/orgs/:org_slug/runs/:run_id/findings/", "viewer", 200),
  row("GET", "/api/v1/orgs/:org_slug/runs/:run_id/report/", "viewer", 200),
  // The fixture run (created by the executor) is final: 409 conflict proves the caller got past
  // the access checks, which come first. Cancelling a live run is tested with the runs.
  row("POST", "/api/v1/orgs/:org_slug/runs/:run_id/cancel/", "executor", 409),
  row("GET", "/api/v1/admin/users/", "instance-admin", 200),
  row("POST", "/api/v1/admin/users/", "instance-admin", 201, { body: () => ({ username: `nu-${uniq()}` }) }),
  row("GET", "/api/v1/admin/users/:username/", "instance-admin", 200),
  row("DELETE", "/api/v1/admin/users/:username/", "instance-admin", 204, { fresh: fresh.user }),
  row("GET", "/api/v1/admin/orgs/", "instance-admin", 200),
  row("POST", "/api/v1/admin/orgs/", "instance-admin", 201, { body: () => ({ org_slug: `no-${uniq()}` }) }),
  row("GET", "/api/v1/admin/orgs/:org_slug/", "instance-admin", 200, { params: { org_slug: "decoy" } }),
  row("POST", "/api/v1/admin/orgs/:org_slug/suspend/", "instance-admin", 200, {
    params: { org_slug: "decoy" },
    fresh: fresh.org,
  }),
  row("POST", "/api/v1/admin/orgs/:org_slug/restore/", "instance-admin", 200, {
    params: { org_slug: "decoy" },
    fresh: fresh.org,
  }),
  row("DELETE", "/api/v1/admin/orgs/:org_slug/", "instance-admin", 204, {
    params: { org_slug: "decoy" },
    fresh: fresh.org,
  }),
  row("GET", "/api/v1/admin/settings/", "instance-admin", 200),
  row("PATCH", "/api/v1/admin/settings/", "instance-admin", 200, { body: () => ({}) }),
  row("GET", "/api/v1/orgs/:org_slug/schemas/", "viewer", 200),
  row("POST", "/api/v1/orgs/:org_slug/schemas/", "author", 201, {
    body: () => ({ uri: `urn:matrix:${uniq()}`, schema: {} }),
  }),
  row("GET", "/api/v1/orgs/:org_slug/schemas/:id/", "viewer", 200, { params: SC, fresh: fresh.schema }),
  row("PUT", "/api/v1/orgs/:org_slug/schemas/:id/", "author", 200, {
    params: SC,
    fresh: fresh.schema,
    body: () => ({ uri: `urn:matrix:${uniq()}`, schema: {} }),
  }),
  row("DELETE", "/api/v1/orgs/:org_slug/schemas/:id/", "author", 204, { params: SC, fresh: fresh.schema }),
  row("GET", "/api/v1/orgs/:org_slug/webhooks/", "admin", 200),
  row("POST", "/api/v1/orgs/:org_slug/webhooks/", "admin", 201, {
    body: () => ({ url: "https://1.1.1.1/matrix-hook", is_active: false }),
  }),
  row("GET", "/api/v1/orgs/:org_slug/webhooks/:id/", "admin", 200, { params: WH, fresh: fresh.webhook }),
  row("PATCH", "/api/v1/orgs/:org_slug/webhooks/:id/", "admin", 200, {
    params: WH,
    fresh: fresh.webhook,
    body: () => ({ events: ["run.failed"] }),
  }),
  row("DELETE", "/api/v1/orgs/:org_slug/webhooks/:id/", "admin", 204, { params: WH, fresh: fresh.webhook }),
  row("POST", "/api/v1/orgs/:org_slug/webhooks/:id/rotate-secret/", "admin", 200, {
    params: WH,
    fresh: fresh.webhook,
  }),
  // The fixture webhook is inactive: 409 conflict proves the caller got past the access checks.
  row("POST", "/api/v1/orgs/:org_slug/webhooks/:id/ping/", "admin", 409, {
    params: WH,
    fresh: fresh.webhook,
  }),
  row("GET", "/api/v1/orgs/:org_slug/webhooks/:id/deliveries/", "admin", 200, {
    params: WH,
    fresh: fresh.webhook,
  }),
  row("GET", "/api/v1/orgs/:org_slug/webhooks/:id/deliveries/:delivery_id/", "admin", 200, {
    params: WH,
    fresh: fresh.webhook,
  }),
  row("POST", "/api/v1/orgs/:org_slug/webhooks/:id/deliveries/:delivery_id/redeliver/", "admin", 409, {
    params: WH,
    fresh: fresh.webhook,
  }),
];

// ─── The cells ─────────────────────────────────────────────────────────────────────────────
const CELLS = [
  "no token",
  "revoked token",
  "expired token",
  "deleted user",
  "viewer",
  "executor",
  "author",
  "admin",
  "member of another org",
  "instance admin, not a member",
  "admin of a suspended org",
  "admin of a deleted org",
] as const;
type Cell = (typeof CELLS)[number];
type Want = number | { status: 401 | 403; code: string };
const UNAUTHENTICATED = { status: 401, code: "authentication_required" } as const;
const DENIED = { status: 403, code: "permission_denied" } as const;
const isRole = (m: string): m is Role => (ROLES as readonly string[]).includes(m);

/** What a cell must answer; null when the cell does not apply to the row. */
function expected(r: Row, cell: Cell): Want | null {
  if (r.min === "public") return cell === "no token" ? r.ok : null;
  if (["no token", "revoked token", "expired token", "deleted user"].includes(cell)) return UNAUTHENTICATED;
  if (isRole(r.min)) {
    if (!isRole(cell)) return DENIED; // not a member, or the org is suspended or deleted
    return roleRank(cell) >= roleRank(r.min) ? r.ok : DENIED;
  }
  if (cell === "admin of a suspended org" || cell === "admin of a deleted org") return null; // no org
  if (r.min === "instance-admin") return cell === "instance admin, not a member" ? r.ok : DENIED;
  return r.ok; // any, self
}

let FIXTURES: Vals;
const callers = {} as Record<Cell, Caller & { org?: string }>;

beforeAll(async () => {
  s = await startTestServer();
  const u = async (name: string, org?: string, role?: Role, admin = false) => {
    const r = await s.user(name, org, role, { is_admin: admin });
    return { token: r.token, userId: r.id, tokenId: r.tokenId };
  };
  for (const role of ROLES) callers[role] = await u(`m-${role}`, "acme", role);
  callers["member of another org"] = await u("m-other", "other", "admin");
  callers["instance admin, not a member"] = await u("m-ops", undefined, undefined, true);
  callers["admin of a suspended org"] = { ...(await u("m-susp", "susp", "admin")), org: "susp" };
  callers["admin of a deleted org"] = { ...(await u("m-gone", "gone", "admin")), org: "gone" };
  await s.deps.orgs.update(await s.org("susp"), { status: "suspended" }, SYSTEM);
  await s.deps.orgs.update(await s.org("gone"), { deleted_at: new Date().toISOString() }, SYSTEM);
  await s.org("decoy");
  // The 401 callers are instance admins and acme admins: only the token's state refuses them.
  callers["no token"] = { token: null, userId: 0 };
  const revoked = await u("m-revoked", "acme", "admin", true);
  await s.deps.tokenStore.revoke(revoked.tokenId, SYSTEM);
  callers["revoked token"] = revoked;
  const expired = await u("m-expired", "acme", "admin", true);
  // Simulating the passage of time: the expiry is set in the past directly in the database.
  await s.sql(
    "UPDATE api_tokens SET expires_at = ? WHERE id = ?",
    "2000-01-01T00:00:00.000Z",
    expired.tokenId,
  );
  callers["expired token"] = expired;
  const deleted = await u("m-deleted", "acme", "admin", true);
  await s.deps.users.delete(deleted.userId, SYSTEM);
  callers["deleted user"] = deleted;

  const wf = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: wfBody("matrix"),
  });
  // A second version, for the diff row.
  await call(s, "PATCH", "/api/v1/orgs/acme/workflows/matrix/", {
    token: s.rootToken,
    body: { description: "version 2" },
  });
  const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/matrix/runs/", {
    token: callers.executor.token,
    body: envelopeBody,
  });
  expect([wf.status, run.status, run.json.status]).toEqual([201, 201, "succeeded"]);
  await s.user("m-target", "acme", "viewer");
  const login = await s.user("m-login");
  // A cheap hash for the fixtures: verifying it costs milliseconds, not a second of argon2.
  passwordHash = await Bun.password.hash(PASSWORD, { algorithm: "bcrypt", cost: 4 });
  await s.deps.users.setPassword(login.id, passwordHash, SYSTEM);
  FIXTURES = {
    org_slug: "acme",
    workflow: "matrix",
    step_id: String(wf.json.steps[0].id),
    run_id: run.json.id,
    username: "m-target",
  };
});
afterAll(() => s.close());

const key = (method: string, path: string) => `${method} ${path}`;

test("every /api/v1 route has a row, and every row a route", () => {
  const served = s.app.routes
    .filter((r) => r.path.startsWith("/api/v1/") && r.path !== "/api/v1/openapi.json")
    .map((r) => key(r.method, r.path));
  const rows = ROWS.map((r) => key(r.method, r.path));
  expect({ routesWithoutRows: served.filter((k) => !rows.includes(k)) }).toEqual({ routesWithoutRows: [] });
  expect({ rowsWithoutRoutes: rows.filter((k) => !served.includes(k)) }).toEqual({ rowsWithoutRoutes: [] });
  expect({ duplicateRows: rows.filter((k, i) => rows.indexOf(k) !== i) }).toEqual({ duplicateRows: [] });
});

/** Runs one cell; returns a description of the mismatch, or null. */
async function cell(r: Row, name: Cell): Promise<string | null> {
  const want = expected(r, name);
  if (want === null) return null;
  const c = callers[name];
  const success = typeof want === "number";
  if (success && r.oneSuccess && name !== "viewer") return null;
  const vals: Vals = {
    ...FIXTURES,
    ...(isRole(r.min) && c.org ? { org_slug: c.org } : {}),
    ...r.params,
    ...(success && r.fresh ? await r.fresh(c) : {}),
  };
  const path = r.path.replace(/:(\w+)/g, (_, k: string) => {
    if (vals[k] === undefined) throw new Error(`no value for :${k}: add it to FIXTURES or the row's params`);
    return encodeURIComponent(vals[k]);
  });
  const res = await call(s, r.method, path, { token: c.token, body: r.body?.({ ...vals, uniq: uniq() }) });
  const got = `${res.status} ${res.text.slice(0, 160)}`;
  if (success) return res.status === want ? null : `${name}: want ${want}, got ${got}`;
  const whole = { detail: res.json?.detail, code: want.code, status: want.status, errors: [] };
  const ok =
    res.status === want.status && typeof res.json?.detail === "string" && Bun.deepEquals(res.json, whole);
  return ok ? null : `${name}: want ${want.status} ${want.code}, got ${got}`;
}

describe("access matrix", () => {
  for (const r of ROWS) {
    test(`${r.method} ${r.path} (minimum: ${r.min})`, async () => {
      const misses = (await Promise.all(CELLS.map((c) => cell(r, c)))).filter((m) => m !== null);
      expect(misses).toEqual([]);
    });
  }
});
