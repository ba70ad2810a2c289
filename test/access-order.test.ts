// Access is decided before the request's body and query are validated: a caller who may not use
// a route gets 404/403 — never a 400 that describes a body it may not send — and an outsider
// learns nothing of another org's state (CONTRACT §6: a deleted, suspended or non-member org is the
// same 403). Validation still answers callers with access.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let viewer: string;
let outsider: string;
let admin: string;
beforeAll(async () => {
  s = await startTestServer();
  viewer = (await s.user("ao-viewer", "acme", "viewer")).token;
  outsider = (await s.user("ao-outsider", "elsewhere", "admin")).token;
  admin = (await s.user("ao-admin", "acme", "admin")).token;
});
afterAll(() => s.close());

const notMember = errorBody(403, "permission_denied", "You are not a member of this organization.");
const badBody = { slug: 7, steps: "x" };

describe("access before validation", () => {
  test("a member below the route's role: 403, whatever the body", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: viewer, body: badBody });
    expect(r.json).toEqual(
      errorBody(403, "permission_denied", "This action needs the author role or higher."),
    );
    const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", { token: viewer, body: { url: 7 } });
    expect(hook.json).toEqual(
      errorBody(403, "permission_denied", "This action needs the admin role or higher."),
    );
  });

  test("a non-member: 403 for a bad body or a bad query; an unknown org: 404", async () => {
    for (const [method, path, body] of [
      ["POST", "/api/v1/orgs/acme/workflows/", badBody],
      ["PATCH", "/api/v1/orgs/acme/workflows/anything/", { status: "paused" }],
      ["GET", "/api/v1/orgs/acme/schemas/?kind=bogus", undefined],
      ["GET", "/api/v1/orgs/acme/runs/?page=0", undefined],
    ] as const)
      expect((await call(s, method, path, { token: outsider, body })).json).toEqual(notMember);
    expect(
      (await call(s, "POST", "/api/v1/orgs/nowhere/workflows/", { token: outsider, body: badBody })).json,
    ).toEqual(errorBody(404, "not_found", "Organization not found."));
  });

  test("not an instance admin: 403 on /admin/, whatever the body", async () => {
    const r = await call(s, "PATCH", "/api/v1/admin/settings/", {
      token: admin,
      body: { token_max_ttl_days: "x" },
    });
    expect(r.json).toEqual(
      errorBody(403, "permission_denied", "This action needs an instance administrator."),
    );
  });

  test("a caller with access still gets the 400 naming the fields", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: admin, body: badBody });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ status: 400, code: "invalid_request" });
    expect(r.json.errors.length).toBeGreaterThan(0);
    const q = await call(s, "GET", "/api/v1/orgs/acme/schemas/?kind=bogus", { token: viewer });
    expect(q.json).toMatchObject({ status: 400, code: "invalid_request" });
  });
});

describe("another org's state", () => {
  test("an outsider gets the same 403 for a suspended or deleted org as for any other; members are told", async () => {
    const member = (await s.user("ao-member", "shut", "viewer")).token;
    const path = "/api/v1/orgs/shut/workflows/";
    const root = { token: s.rootToken };
    expect((await call(s, "GET", path, { token: outsider })).json).toEqual(notMember);
    expect((await call(s, "POST", "/api/v1/admin/orgs/shut/suspend/", root)).status).toBe(200);
    expect((await call(s, "GET", path, { token: outsider })).json).toEqual(notMember);
    expect((await call(s, "GET", path, { token: member })).json).toEqual(
      errorBody(403, "permission_denied", "The organization is suspended."),
    );
    expect((await call(s, "DELETE", "/api/v1/admin/orgs/shut/", root)).status).toBe(204);
    expect((await call(s, "GET", path, { token: outsider })).json).toEqual(notMember);
    expect((await call(s, "GET", path, { token: member })).json).toEqual(
      errorBody(403, "permission_denied", "The organization has been deleted."),
    );
  });
});

describe("a body the route cannot take waits for authentication and access too", () => {
  const WORKFLOWS = "/api/v1/orgs/acme/workflows/";
  // Not JSON, not an object, malformed, missing: each is refused only once the caller may send it.
  const bodies: [string, { raw?: string; headers: Record<string, string> }][] = [
    ["malformed JSON", { raw: "{bad", headers: { "content-type": "application/json" } }],
    ["an array", { raw: "[]", headers: { "content-type": "application/json" } }],
    ["null", { raw: "null", headers: { "content-type": "application/json" } }],
    ["no body", { headers: { "content-type": "application/json" } }],
    ["text/plain", { raw: "a=b", headers: { "content-type": "text/plain" } }],
    ["a form", { raw: "a=b", headers: { "content-type": "application/x-www-form-urlencoded" } }],
  ];
  const unauthenticated = errorBody(
    401,
    "authentication_required",
    "Authentication credentials were not provided or are invalid.",
  );

  test("without a token: 401, never a 400 or 415 about the body", async () => {
    for (const [what, b] of bodies) {
      const r = await call(s, "POST", WORKFLOWS, b);
      expect({ what, status: r.status, code: r.json.code }).toEqual({
        what,
        status: 401,
        code: "authentication_required",
      });
    }
    expect((await call(s, "POST", WORKFLOWS, bodies[0]![1])).json).toEqual(unauthenticated);
    const bad = await call(s, "POST", WORKFLOWS, { ...bodies[1]![1], token: "assay_not-a-token" });
    expect(bad.status).toBe(401);
  });

  test("a viewer, an outsider, a non-admin on /admin/: their 403 or 404, whatever the body", async () => {
    for (const [what, b] of bodies) {
      const asViewer = await call(s, "POST", WORKFLOWS, { ...b, token: viewer });
      expect({ what, body: asViewer.json }).toEqual({
        what,
        body: errorBody(403, "permission_denied", "This action needs the author role or higher."),
      });
      const asOutsider = await call(s, "POST", WORKFLOWS, { ...b, token: outsider });
      expect({ what, body: asOutsider.json }).toEqual({ what, body: notMember });
      const unknownOrg = await call(s, "POST", "/api/v1/orgs/nowhere/workflows/", { ...b, token: outsider });
      expect({ what, status: unknownOrg.status }).toEqual({ what, status: 404 });
      const settings = await call(s, "PATCH", "/api/v1/admin/settings/", { ...b, token: admin });
      expect({ what, body: settings.json }).toEqual({
        what,
        body: errorBody(403, "permission_denied", "This action needs an instance administrator."),
      });
    }
  });

  test("a caller with access gets the body's own answer, and nothing is written", async () => {
    const before = await s.count("workflows");
    const answers = [];
    for (const [, b] of bodies) answers.push((await call(s, "POST", WORKFLOWS, { ...b, token: admin })).json);
    expect(answers).toEqual([
      errorBody(400, "invalid_request", "The request body is malformed.", [
        {
          field: "body",
          code: "parse_error",
          message: "The body could not be parsed as its Content-Type says.",
        },
      ]),
      errorBody(400, "invalid_request", "The request body must be a JSON object.", [
        { field: "body", code: "invalid", message: "The body must be a JSON object ({…})." },
      ]),
      errorBody(400, "invalid_request", "The request body must be a JSON object.", [
        { field: "body", code: "invalid", message: "The body must be a JSON object ({…})." },
      ]),
      errorBody(400, "invalid_request", "The request body is missing.", [
        { field: "body", code: "required", message: "This endpoint takes a JSON object ({…})." },
      ]),
      errorBody(
        415,
        "unsupported_media_type",
        'This endpoint takes a JSON object: send it as Content-Type: application/json, not "text/plain".',
      ),
      errorBody(
        415,
        "unsupported_media_type",
        'This endpoint takes a JSON object: send it as Content-Type: application/json, not "application/x-www-form-urlencoded".',
      ),
    ]);
    expect(await s.count("workflows")).toBe(before);
  });

  test("a route without a body ignores one: routing answers 404 or 405, not 415", async () => {
    const text = { raw: "hello", headers: { "content-type": "text/plain" }, token: admin };
    expect((await call(s, "POST", "/api/v1/nothing/", text)).json).toEqual(
      errorBody(404, "not_found", "Not found."),
    );
    const runs = await call(s, "POST", "/api/v1/orgs/acme/runs/", text);
    expect([runs.status, runs.json.code, runs.headers.get("allow")]).toEqual([
      405,
      "method_not_allowed",
      "GET, HEAD, OPTIONS",
    ]);
    const token = await call(s, "DELETE", "/api/v1/users/me/tokens/999999/", text);
    expect([token.status, token.json.code]).toEqual([404, "not_found"]);
  });
});
