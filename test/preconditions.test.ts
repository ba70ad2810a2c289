// If-Match and If-None-Match on every unsafe route of a resource without an entity tag (all but a
// workflow's own, test/workflow-etag*.test.ts): RFC 9110 §13.1.1 — a resource with no tag matches
// no tag, so `If-Match: "x"` is a 412 and nothing changes; §13.1.2 — `If-None-Match: *` on a
// resource that exists is a 412 too. Until 2026-11-29 both headers were ignored there.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../src/app.ts";
import { declaresPreconditions } from "../src/http/preconditions.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, startEmptyServer, startTestServer } from "./helpers/server.ts";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.ts";
import { EXISTS, NO_TAG, malformed } from "./helpers/preconditions.ts";

let s: TestServer;
let rx: Receiver;
const ids: Record<string, string | number> = {};
const A = "/api/v1/orgs/acme";

// Every table a write of these routes touches, whole (the access times that any authenticated
// request moves left out): equal before and after means the request changed nothing.
const TABLES = [
  "users",
  "orgs",
  "memberships",
  "api_tokens",
  "workflows",
  "steps",
  "workflow_versions",
  "org_schemas",
  "webhooks",
  "webhook_deliveries",
  "runs",
  "submissions",
  "web_sessions",
  "settings",
  "audit_log",
];
const VOLATILE = new Set(["last_used_at", "last_seen_at", "used_at"]);
async function state(): Promise<string> {
  const out: Record<string, unknown[]> = {};
  for (const t of TABLES) {
    const rows = await s.sql<Record<string, unknown>>(`SELECT * FROM ${t}`);
    out[t] = rows
      .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => !VOLATILE.has(k)))))
      .sort();
  }
  return JSON.stringify(out);
}

beforeAll(async () => {
  rx = startReceiver();
  s = await startTestServer({ webhook_allow_private: true });
  const root = s.rootToken;
  ids.mia = (await s.user("mia", "acme", "viewer")).token;
  await s.user("victim");
  await s.org("other");
  ids.token = (
    await call(s, "POST", "/api/v1/users/me/tokens/", { token: root, body: { name: "spare" } })
  ).json.id;
  const wf = await createWorkflow(s, root, {
    slug: "wf",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  ids.step = wf.steps[0].id;
  const schema = await call(s, "POST", `${A}/schemas/`, {
    token: root,
    body: { uri: "https://example.com/a.json", schema: { type: "object" } },
  });
  expect(schema.status).toBe(201);
  ids.schema = schema.json.id;
  const hook = await call(s, "POST", `${A}/webhooks/`, { token: root, body: { url: `${rx.url}/h` } });
  ids.hook = hook.json.id;
  const ping = await call(s, "POST", `${A}/webhooks/${ids.hook}/ping/`, { token: root });
  ids.delivery = ping.json.id;
  // Delivered before the tests compare the tables: its attempt is written in the background.
  await until(
    async () =>
      (await call(s, "GET", `${A}/webhooks/${ids.hook}/deliveries/${ids.delivery}/`, { token: root })).json
        .status === "succeeded",
    "the ping delivered",
  );
  const run = await call(s, "POST", `${A}/workflows/wf/runs/`, { token: root, body: { content: { a: 1 } } });
  expect(run.status).toBe(201);
  ids.run = run.json.id;
  await delivered();
});

/** Every webhook delivery made (a run's run.completed is written in the background). */
const delivered = () =>
  until(
    async () => (await s.sql("SELECT id FROM webhook_deliveries WHERE status <> 'succeeded'")).length === 0,
    "every delivery made",
  );
afterAll(async () => {
  await s?.close();
  await rx?.stop();
});

type Case = {
  family: string;
  method: string;
  path: () => string;
  body?: unknown;
  missing?: () => string;
  /** The answer without the headers when it is not a 2xx: it comes first, headers or not (§13.2.1). */
  without?: Record<string, unknown>;
};
const CASES: Case[] = [
  { family: "tokens", method: "POST", path: () => "/api/v1/users/me/tokens/", body: { name: "n" } },
  {
    family: "tokens",
    method: "DELETE",
    path: () => `/api/v1/users/me/tokens/${ids.token}/`,
    missing: () => "/api/v1/users/me/tokens/999999/",
  },
  { family: "orgs", method: "PATCH", path: () => `${A}/`, body: { name: "Renamed" } },
  { family: "orgs", method: "DELETE", path: () => `${A}/` },
  {
    family: "members",
    method: "POST",
    path: () => `${A}/members/`,
    body: { username: "victim", role: "viewer" },
  },
  {
    family: "members",
    method: "PATCH",
    path: () => `${A}/members/mia/`,
    body: { role: "author" },
    missing: () => `${A}/members/nobody/`,
  },
  {
    family: "members",
    method: "DELETE",
    path: () => `${A}/members/mia/`,
    missing: () => `${A}/members/nobody/`,
  },
  {
    family: "workflows",
    method: "POST",
    path: () => `${A}/workflows/`,
    body: { slug: "new", name: "New", allowed_file_types: ["JSON"] },
  },
  {
    family: "steps",
    method: "POST",
    path: () => `${A}/workflows/wf/steps/`,
    body: { name: "s2", validator: "syntax", config: {} },
    missing: () => `${A}/workflows/nope/steps/`,
  },
  {
    family: "steps",
    method: "PATCH",
    path: () => `${A}/workflows/wf/steps/${ids.step}/`,
    body: { name: "renamed" },
    missing: () => `${A}/workflows/wf/steps/999999/`,
  },
  {
    family: "steps",
    method: "DELETE",
    path: () => `${A}/workflows/wf/steps/${ids.step}/`,
    missing: () => `${A}/workflows/wf/steps/999999/`,
  },
  {
    family: "schemas",
    method: "POST",
    path: () => `${A}/schemas/`,
    body: { uri: "https://example.com/b.json", schema: {} },
  },
  {
    family: "schemas",
    method: "PUT",
    path: () => `${A}/schemas/${ids.schema}/`,
    body: { uri: "https://example.com/a.json", schema: { type: "array" } },
    missing: () => `${A}/schemas/999999/`,
  },
  {
    family: "schemas",
    method: "DELETE",
    path: () => `${A}/schemas/${ids.schema}/`,
    missing: () => `${A}/schemas/999999/`,
  },
  { family: "runs", method: "POST", path: () => `${A}/workflows/wf/runs/`, body: { content: { a: 2 } } },
  // With a query string: the framework's path, not the sync-run lane's (src/http/threads/lane.ts).
  {
    family: "runs",
    method: "POST",
    path: () => `${A}/workflows/wf/runs/?version=1`,
    body: { content: { a: 3 } },
  },
  {
    family: "runs",
    method: "POST",
    path: () => `${A}/runs/${ids.run}/cancel/`,
    missing: () => `${A}/runs/0191f0e0-0000-7000-8000-000000000000/cancel/`,
    // The run has ended: its cancel is the 409 it would be without the headers (a held run's
    // cancel is a 412: below).
    without: errorBody(409, "conflict", "The run is already succeeded."),
  },
  {
    family: "webhooks",
    method: "POST",
    path: () => `${A}/webhooks/`,
    body: { url: "http://127.0.0.1:9/other" },
  },
  {
    family: "webhooks",
    method: "PATCH",
    path: () => `${A}/webhooks/${ids.hook}/`,
    body: { is_active: false },
    missing: () => `${A}/webhooks/999999/`,
  },
  {
    family: "webhooks",
    method: "DELETE",
    path: () => `${A}/webhooks/${ids.hook}/`,
    missing: () => `${A}/webhooks/999999/`,
  },
  {
    family: "webhooks",
    method: "POST",
    path: () => `${A}/webhooks/${ids.hook}/rotate-secret/`,
    missing: () => `${A}/webhooks/999999/rotate-secret/`,
  },
  {
    family: "webhooks",
    method: "POST",
    path: () => `${A}/webhooks/${ids.hook}/ping/`,
    missing: () => `${A}/webhooks/999999/ping/`,
  },
  {
    family: "webhooks",
    method: "POST",
    path: () => `${A}/webhooks/${ids.hook}/deliveries/${ids.delivery}/redeliver/`,
    missing: () => `${A}/webhooks/${ids.hook}/deliveries/0191f0e0-0000-7000-8000-000000000000/redeliver/`,
  },
  {
    family: "admin",
    method: "POST",
    path: () => "/api/v1/admin/users/",
    body: { username: "newbie" },
  },
  {
    family: "admin",
    method: "DELETE",
    path: () => "/api/v1/admin/users/victim/",
    missing: () => "/api/v1/admin/users/nobody/",
  },
  {
    family: "admin",
    method: "POST",
    path: () => "/api/v1/admin/orgs/",
    body: { org_slug: "neworg", name: "N" },
  },
  {
    family: "admin",
    method: "POST",
    path: () => "/api/v1/admin/orgs/other/suspend/",
    missing: () => "/api/v1/admin/orgs/nope/suspend/",
  },
  {
    family: "admin",
    method: "POST",
    path: () => "/api/v1/admin/orgs/other/restore/",
    missing: () => "/api/v1/admin/orgs/nope/restore/",
  },
  {
    family: "admin",
    method: "DELETE",
    path: () => "/api/v1/admin/orgs/other/",
    missing: () => "/api/v1/admin/orgs/nope/",
  },
  {
    family: "admin",
    method: "PATCH",
    path: () => "/api/v1/admin/settings/",
    body: { token_default_ttl_days: 30 },
  },
  {
    family: "web",
    method: "POST",
    path: () => "/api/v1/auth/login/",
    body: { username: "root", password: "wrong password" },
  },
  { family: "web", method: "POST", path: () => "/api/v1/auth/logout/" },
  {
    family: "web",
    method: "POST",
    path: () => "/api/v1/users/me/password/",
    body: { current_password: "x", new_password: "a long new password 1" },
  },
];

const send = (c: Case, headers: Record<string, string>, path = c.path()) =>
  call(s, c.method, path, { token: s.rootToken, body: c.body, headers });

describe("a false condition is a 412 that changes nothing", () => {
  for (const c of CASES)
    test(`${c.family}: ${c.method} ${c.path
      .toString()
      .replace(/^\(\) => /, "")
      .replaceAll(/[`"]/g, "")}`, async () => {
      const before = await state();
      for (const [headers, expected] of [
        [{ "if-match": '"x"' }, NO_TAG],
        [{ "if-match": 'W/"x", "y"' }, NO_TAG],
        [{ "if-none-match": "*" }, EXISTS],
        // If-Match is judged first (§13.2.2), and holds for `*`: then If-None-Match's refusal.
        [{ "if-match": "*", "if-none-match": "*" }, EXISTS],
      ] as const) {
        const r = await send(c, headers);
        const answer = c.without ?? expected;
        expect([headers, r.status, r.json]).toEqual([headers, answer.status, answer]);
        expect(r.headers.get("content-type")).toStartWith("application/json");
      }
      expect(await state()).toBe(before);
    });
});

describe("the answer the request gets without the headers comes first (§13.2.1)", () => {
  test("a target that does not exist: 404, not 412", async () => {
    for (const c of CASES.filter((x) => x.missing)) {
      const r = await send(c, { "if-match": '"x"' }, c.missing!());
      expect([c.method, c.missing!(), r.status, r.json.code]).toEqual([
        c.method,
        c.missing!(),
        404,
        "not_found",
      ]);
    }
  });

  test("no token: 401; a Viewer's write: 403 — with or without the headers", async () => {
    const before = await state();
    for (const c of CASES.filter((x) => x.path().startsWith(A))) {
      for (const headers of <Record<string, string>[]>[{}, { "if-match": '"x"' }, { "if-none-match": "*" }]) {
        const anon = await call(s, c.method, c.path(), { body: c.body, headers });
        expect([c.method, c.path(), anon.status]).toEqual([c.method, c.path(), 401]);
      }
    }
    for (const c of CASES.filter((x) => x.path().startsWith(A))) {
      const r = await call(s, c.method, c.path(), {
        token: String(ids.mia),
        body: c.body,
        headers: { "if-match": '"x"' },
      });
      expect([c.method, c.path(), r.json]).toEqual([c.method, c.path(), errorBody(403, "permission_denied")]);
    }
    expect(await state()).toBe(before);
  });

  test("an instance that is set up: the setup form's 409 (412 only while it is not)", async () => {
    const body = {
      setup_code: "x",
      username: "admin",
      password: "a long password 1",
      org_slug: "o",
      org_name: "O",
    };
    const done = await call(s, "POST", "/api/v1/setup/", { body, headers: { "if-match": '"x"' } });
    expect(done.status).toBe(409);
    const empty = await startEmptyServer();
    try {
      const r = await call(empty, "POST", "/api/v1/setup/", { body, headers: { "if-match": '"x"' } });
      expect(r.json).toEqual(NO_TAG);
      expect((await call(empty, "GET", "/api/v1/setup/")).json).toEqual({ needed: true });
    } finally {
      await empty.close();
    }
  });

  test("a run's cancel: 409 once it has ended, headers or not; 412 while it runs", async () => {
    await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
    const gate = s.gates.gate();
    try {
      const run = await call(s, "POST", `${A}/workflows/hold/runs/`, {
        token: s.rootToken,
        raw: gate.doc(),
        headers: { "content-type": "application/json", prefer: "respond-async" },
      });
      expect(run.status).toBe(202);
      await gate.held();
      const cancel = `${A}/runs/${run.json.id}/cancel/`;
      const held = await call(s, "POST", cancel, { token: s.rootToken, headers: { "if-match": '"x"' } });
      expect(held.json).toEqual(NO_TAG);
      const canceled = await call(s, "POST", cancel, { token: s.rootToken, headers: { "if-match": "*" } });
      expect([canceled.status, canceled.json.status]).toEqual([200, "canceled"]);
      for (const headers of <Record<string, string>[]>[{}, { "if-match": '"x"' }, { "if-none-match": "*" }]) {
        const again = await call(s, "POST", cancel, { token: s.rootToken, headers });
        expect([headers, again.json]).toEqual([
          headers,
          errorBody(409, "conflict", "The run is already canceled."),
        ]);
      }
    } finally {
      gate.open();
    }
  });
});

describe("a condition that holds lets the request through", () => {
  test('If-Match: * and If-None-Match: "x" on an existing resource: the write is made', async () => {
    const hook = `${A}/webhooks/${ids.hook}/`;
    const r = await call(s, "PATCH", hook, {
      token: s.rootToken,
      body: { url: `${rx.url}/patched` },
      headers: { "if-match": "*", "if-none-match": '"x", W/"y"' },
    });
    expect(r.status).toBe(200);
    expect(r.json.url).toBe(`${rx.url}/patched`);
    const member = await call(s, "PATCH", `${A}/members/mia/`, {
      token: s.rootToken,
      body: { role: "executor" },
      headers: { "if-match": "*" },
    });
    expect([member.status, member.json.role]).toEqual([200, "executor"]);
    const run = await call(s, "POST", `${A}/workflows/wf/runs/`, {
      token: s.rootToken,
      body: { content: { a: 4 } },
      headers: { "if-none-match": '"x"' },
    });
    expect(run.status).toBe(201);
    await delivered();
  });

  test("a header that is neither * nor a list of tags is a 400 naming it, and changes nothing", async () => {
    const before = await state();
    for (const c of CASES) {
      for (const [name, value] of [
        ["If-Match", "x"],
        ["If-None-Match", "W/x"],
      ] as const) {
        const r = await send(c, { [name]: value });
        expect([c.method, c.path(), r.json]).toEqual([c.method, c.path(), c.without ?? malformed(name)]);
      }
    }
    expect(await state()).toBe(before);
  });
});

test("every unsafe route declares how it judges If-Match (src/http/preconditions.ts)", async () => {
  const app = createApp(s.deps);
  const missing = app.routes
    .filter((r) => ["POST", "PUT", "PATCH", "DELETE"].includes(r.method))
    .filter((r) => !declaresPreconditions((r.hooks as { beforeHandle?: unknown }).beforeHandle))
    .map((r) => `${r.method} ${r.path}`);
  expect(missing).toEqual([]);
});
