// Webhook endpoints API (issue 7, CONTRACT §2 Webhook, §3): create with the secret shown once,
// list, detail, PATCH, DELETE, rotate-secret, limits, roles and tenant isolation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let admin: string;
let author: string;
let otherAdmin: string;
const base = "/api/v1/orgs/acme/webhooks/";
const hook = (extra: Record<string, unknown> = {}) => ({ url: "http://127.0.0.1:9/hook", ...extra });
const SECRET_RE = /^whsec_[A-Za-z0-9+/]{43}=$/;

beforeAll(async () => {
  // Receivers of these tests are never called; private targets are allowed so URLs are local.
  s = await startTestServer({ webhook_allow_private: true });
  admin = s.rootToken;
  author = (await s.user("alice", "acme", "author")).token;
  otherAdmin = (await s.user("olga", "other", "admin")).token;
  await createWorkflow(s, admin, {
    slug: "orders",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

describe("create and read", () => {
  test("201 with the whsec_ secret shown once, defaults, Location", async () => {
    const r = await call(s, "POST", base, { token: admin, body: hook() });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      url: "http://127.0.0.1:9/hook",
      events: ["run.completed"],
      workflow_slugs: [],
      is_active: true,
      disabled_reason: null,
      disabled_at: null,
      previous_secret_expires_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      secret: expect.stringMatching(SECRET_RE),
    });
    expect(Buffer.from(r.json.secret.slice(6), "base64").length).toBe(32);
    expect(r.headers.get("location")).toBe(`${s.url}${base}${r.json.id}/`);
    const { secret, ...shown } = r.json;
    const detail = await call(s, "GET", `${base}${r.json.id}/`, { token: admin });
    expect(detail.json).toEqual(shown);
    const list = await call(s, "GET", base, { token: admin });
    expect(list.status).toBe(200);
    expect(list.json.results).toContainEqual(shown);
    expect(list.text).not.toContain(secret);
  });
  test("201 keeps events and workflow filters, duplicates removed", async () => {
    const r = await call(s, "POST", base, {
      token: admin,
      body: hook({
        events: ["run.failed", "run.error", "run.failed"],
        workflow_slugs: ["orders", "orders"],
        is_active: false,
      }),
    });
    expect(r.status).toBe(201);
    expect([r.json.events, r.json.workflow_slugs, r.json.is_active]).toEqual([
      ["run.failed", "run.error"],
      ["orders"],
      false,
    ]);
  });
  test("200 list is paginated", async () => {
    const r = await call(s, "GET", `${base}?page_size=1`, { token: admin });
    expect(r.json).toEqual({
      count: 2,
      next: `${s.url}${base}?page_size=1&page=2`,
      previous: null,
      results: [expect.objectContaining({ url: "http://127.0.0.1:9/hook" })],
    });
  });
});

describe("validation", () => {
  const refused = async (body: unknown, errors: unknown[]) => {
    const before = await s.count("webhooks");
    const r = await call(s, "POST", base, { token: admin, body });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(errorBody(400, "invalid_request", expect.any(String), errors));
    expect(await s.count("webhooks")).toBe(before);
  };
  const item = (field: string, code: string) => ({ field, code, message: expect.any(String) });
  test("400 for a scheme other than http(s)", () =>
    refused(hook({ url: "ftp://127.0.0.1/x" }), [item("url", "invalid")]));
  test("400 for a URL that is not absolute", () =>
    refused(hook({ url: "/relative" }), [item("url", "invalid")]));
  test("400 for a URL with spaces or a tab (the parser would drop them: not the URL called)", async () => {
    const errors = [
      {
        field: "url",
        code: "invalid",
        message: "The URL may not contain spaces, tabs or other control characters.",
      },
    ];
    for (const url of ["  http://127.0.0.1/x  ", "http://127.0.0.1/\t/x", "http://127.0.0.1/a b"])
      await refused(hook({ url }), errors);
    const r = await call(s, "POST", base, { token: admin, body: hook({ url: "http://127.0.0.1/a b" }) });
    expect(r.json).toEqual(errorBody(400, "invalid_request", "The webhook is invalid.", errors));
  });
  test("400 for a URL over 2048 characters", () =>
    refused(hook({ url: `http://127.0.0.1/${"a".repeat(2040)}` }), [item("url", "too_long")]));
  // Characters are code points, as the document's maxLength counts (until 2026-11-29 the server
  // counted UTF-16 code units, and the document stated no bound).
  test("2048 characters are taken, astral ones counted once; the document states the bound", async () => {
    const prefix = "http://127.0.0.1/";
    const url = `${prefix}${"\u{1F600}".repeat(2048 - prefix.length)}`;
    const r = await call(s, "POST", base, { token: admin, body: hook({ url }) });
    expect([r.status, r.json.url]).toEqual([201, url]);
    await refused(hook({ url: `${url}a` }), [item("url", "too_long")]);
    const doc = (await call(s, "GET", "/api/v1/openapi.json")).json;
    for (const name of ["WebhookInput", "WebhookPatch"])
      expect(doc.components.schemas[name].properties.url).toMatchObject({ type: "string", maxLength: 2048 });
    expect((await call(s, "DELETE", `${base}${r.json.id}/`, { token: admin })).status).toBe(204);
  });
  test("400 for a host name that does not resolve", () =>
    refused(hook({ url: "http://no-such-host.invalid/" }), [item("url", "unresolvable")]));
  test("400 for an unknown workflow slug, naming its position", () =>
    refused(hook({ workflow_slugs: ["orders", "nope"] }), [item("workflow_slugs[1]", "unknown_workflow")]));
  test("400 for an unknown event", () =>
    refused(hook({ events: ["run.started"] }), [item("events[0]", "invalid")]));
  test("400 for an empty event list", () => refused(hook({ events: [] }), [item("events", "invalid")]));
  test("400 for an unknown field", async () => {
    const r = await call(s, "POST", base, { token: admin, body: hook({ secret: "whsec_mine" }) });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe("invalid_request");
  });
});

describe("change, rotate, delete", () => {
  test("200 PATCH changes the fields it names", async () => {
    const id = (await call(s, "POST", base, { token: admin, body: hook() })).json.id;
    const r = await call(s, "PATCH", `${base}${id}/`, {
      token: admin,
      body: { url: "http://127.0.0.1:10/new", events: ["run.succeeded"], workflow_slugs: ["orders"] },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      url: "http://127.0.0.1:10/new",
      events: ["run.succeeded"],
      workflow_slugs: ["orders"],
      is_active: true,
    });
    const off = await call(s, "PATCH", `${base}${id}/`, { token: admin, body: { is_active: false } });
    expect([off.json.is_active, off.json.url]).toEqual([false, "http://127.0.0.1:10/new"]);
  });
  test("200 PATCH that changes nothing writes nothing: updated_at, audit log, failure streak", async () => {
    const created = (
      await call(s, "POST", base, { token: admin, body: hook({ events: ["run.failed", "ping"] }) })
    ).json;
    const { secret, ...shown } = created;
    // An active endpoint two failed deliveries into a streak (the dispatcher's columns).
    await s.sql(
      "UPDATE webhooks SET failed_streak = 2, failing_since = '2026-01-01T00:00:00.000Z' WHERE id = ?",
      created.id,
    );
    const entries = async () =>
      (
        await call(s, "GET", `/api/v1/orgs/acme/audit/?target_type=webhook&target_id=${created.id}`, {
          token: admin,
        })
      ).json.count;
    const logged = await entries();
    for (const body of [
      {},
      { url: created.url },
      { events: ["run.failed", "ping"] },
      { events: ["run.failed", "ping", "ping"] },
      { workflow_slugs: [] },
      { is_active: true },
      { url: created.url, events: ["run.failed", "ping"], workflow_slugs: [], is_active: true },
    ]) {
      const r = await call(s, "PATCH", `${base}${created.id}/`, { token: admin, body });
      expect([r.status, r.json]).toEqual([200, shown]);
    }
    expect((await call(s, "GET", `${base}${created.id}/`, { token: admin })).json).toEqual(shown);
    expect(await entries()).toBe(logged);
    expect(await s.row("SELECT failed_streak, failing_since FROM webhooks WHERE id = ?", created.id)).toEqual(
      { failed_streak: 2, failing_since: "2026-01-01T00:00:00.000Z" },
    );
    // A real change is still saved and logged.
    const off = await call(s, "PATCH", `${base}${created.id}/`, { token: admin, body: { is_active: false } });
    expect([off.status, off.json.is_active, off.json.updated_at > created.updated_at]).toEqual([
      200,
      false,
      true,
    ]);
    expect(await entries()).toBe(logged + 1);
  });
  test("400 PATCH checks the URL like creation does", async () => {
    const id = (await call(s, "POST", base, { token: admin, body: hook() })).json.id;
    const r = await call(s, "PATCH", `${base}${id}/`, { token: admin, body: { url: "gopher://x" } });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The webhook is invalid.", [
        { field: "url", code: "invalid", message: "The URL must use https or http." },
      ]),
    );
  });
  test("200 rotate-secret returns a new secret once; the old one signs for 24 h", async () => {
    const created = (await call(s, "POST", base, { token: admin, body: hook() })).json;
    const r = await call(s, "POST", `${base}${created.id}/rotate-secret/`, { token: admin });
    expect(r.status).toBe(200);
    expect(r.json.secret).toMatch(SECRET_RE);
    expect(r.json.secret).not.toBe(created.secret);
    const left = Date.parse(r.json.previous_secret_expires_at) - Date.now();
    expect(left).toBeGreaterThan(23.9 * 3600_000);
    expect(left).toBeLessThanOrEqual(24 * 3600_000);
    const detail = await call(s, "GET", `${base}${created.id}/`, { token: admin });
    expect(detail.json.secret).toBeUndefined();
  });
  test("204 DELETE, then 404", async () => {
    const id = (await call(s, "POST", base, { token: admin, body: hook() })).json.id;
    expect((await call(s, "DELETE", `${base}${id}/`, { token: admin })).status).toBe(204);
    const r = await call(s, "GET", `${base}${id}/`, { token: admin });
    expect(r.json).toEqual(errorBody(404, "not_found", "Webhook not found."));
  });
});

describe("limits and access", () => {
  test("409 conflict for the 21st webhook of an org", async () => {
    const org = "busy";
    const token = (await s.user("bea", org, "admin")).token;
    for (let i = 0; i < 20; i++)
      expect((await call(s, "POST", `/api/v1/orgs/${org}/webhooks/`, { token, body: hook() })).status).toBe(
        201,
      );
    const r = await call(s, "POST", `/api/v1/orgs/${org}/webhooks/`, { token, body: hook() });
    expect(r.json).toEqual(errorBody(409, "conflict", "An organization can have at most 20 webhooks."));
  });
  test("403 permission_denied below Admin", async () => {
    const r = await call(s, "GET", base, { token: author });
    expect(r.json).toEqual(
      errorBody(403, "permission_denied", "This action needs the admin role or higher."),
    );
  });
  test("401 authentication_required without a token", async () => {
    const r = await call(s, "POST", base, { body: hook() });
    expect(r.status).toBe(401);
    expect(r.json).toEqual(errorBody(401, "authentication_required"));
  });
  test("404 for another org's webhook, and for an id that is not a number", async () => {
    const theirs = await call(s, "POST", "/api/v1/orgs/other/webhooks/", { token: otherAdmin, body: hook() });
    for (const path of [`${base}${theirs.json.id}/`, `${base}abc/`, `${base}${theirs.json.id}/deliveries/`]) {
      const r = await call(s, "GET", path, { token: admin });
      expect(r.json).toEqual(errorBody(404, "not_found", "Webhook not found."));
    }
    const patch = await call(s, "PATCH", `${base}${theirs.json.id}/`, {
      token: admin,
      body: { is_active: false },
    });
    expect(patch.status).toBe(404);
    const mine = await call(s, "GET", `/api/v1/orgs/other/webhooks/${theirs.json.id}/`, {
      token: otherAdmin,
    });
    expect(mine.json.is_active).toBe(true);
  });
});
