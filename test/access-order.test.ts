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
