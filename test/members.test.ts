// Members and org management (Admin): roles act on the next request; the last Admin stays.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

/** A new org with an Admin; returns the admin's token and the members URL. */
async function orgWithAdmin(slug: string) {
  const admin = await s.user(`${slug}-admin`, slug, "admin");
  return { admin, members: `/api/v1/orgs/${slug}/members/`, org: `/api/v1/orgs/${slug}/` };
}
const notMember = errorBody(403, "permission_denied", "You are not a member of this organization.");
const lastAdmin = (verb: string) =>
  errorBody(
    409,
    "conflict",
    `The last admin of an organization cannot be ${verb}; make another member admin first.`,
  );

describe("GET /api/v1/orgs/{org_slug}/members/{username}/", () => {
  test("the Location of an added member answers the member, as the list has it, to any member", async () => {
    const o = await orgWithAdmin("gm1");
    const v = await s.user("gm1-viewer", "gm1", "viewer");
    await s.user("gm1-new");
    const r = await call(s, "POST", o.members, {
      token: o.admin.token,
      body: { username: "gm1-new", role: "executor" },
    });
    expect(r.status).toBe(201);
    const location = new URL(r.headers.get("location")!);
    expect(location.pathname).toBe("/api/v1/orgs/gm1/members/gm1-new/");
    const got = await call(s, "GET", location.pathname, { token: v.token });
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r.json);
    const list = await call(s, "GET", o.members, { token: v.token });
    expect(got.json).toEqual(list.json.results.find((m: { username: string }) => m.username === "gm1-new"));
  });
  test("404 for a user who is not a member; 403 for a member of another org, whoever is named", async () => {
    await orgWithAdmin("gm2");
    const v = await s.user("gm2-viewer", "gm2", "viewer");
    await s.user("gm2-loner");
    expect((await call(s, "GET", "/api/v1/orgs/gm2/members/gm2-loner/", { token: v.token })).json).toEqual(
      errorBody(404, "not_found", "Member not found."),
    );
    const other = await orgWithAdmin("gm3");
    for (const who of ["gm2-viewer", "gm2-loner", "ghost"]) {
      const r = await call(s, "GET", `/api/v1/orgs/gm2/members/${who}/`, { token: other.admin.token });
      expect([who, r.status, r.json]).toEqual([who, 403, notMember]);
    }
  });
});

describe("GET/POST /api/v1/orgs/{org_slug}/members/", () => {
  test("201 adds a member; a viewer lists members and roles", async () => {
    const o = await orgWithAdmin("m1");
    const v = await s.user("m1-viewer", "m1", "viewer");
    await s.user("m1-new");
    const r = await call(s, "POST", o.members, {
      token: o.admin.token,
      body: { username: "m1-new", role: "author" },
    });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ username: "m1-new", name: "", role: "author", created_at: expect.any(String) });
    const list = await call(s, "GET", o.members, { token: v.token });
    expect(list.status).toBe(200);
    expect(list.json.results.map((m: { username: string; role: string }) => [m.username, m.role])).toEqual([
      ["m1-admin", "admin"],
      ["m1-new", "author"],
      ["m1-viewer", "viewer"],
    ]);
  });
  test("409 conflict for an existing member; 400 for an unknown user and an unknown role", async () => {
    const o = await orgWithAdmin("m2");
    const dup = await call(s, "POST", o.members, {
      token: o.admin.token,
      body: { username: "m2-admin", role: "viewer" },
    });
    const taken = "The user is already a member of this organization.";
    expect(dup.json).toEqual(
      errorBody(409, "conflict", taken, [{ field: "username", code: "unique", message: taken }]),
    );
    const ghost = await call(s, "POST", o.members, {
      token: o.admin.token,
      body: { username: "ghost", role: "viewer" },
    });
    expect(ghost.json).toEqual(
      errorBody(400, "invalid_request", "No such user.", [
        { field: "username", code: "not_found", message: 'There is no user "ghost".' },
      ]),
    );
    const role = await call(s, "POST", o.members, {
      token: o.admin.token,
      body: { username: "m2-admin", role: "owner" },
    });
    expect(role.json).toEqual(
      errorBody(400, "invalid_request", "The request is invalid.", [
        { field: "role", code: "invalid", message: "must be one of viewer, executor, author, admin" },
      ]),
    );
  });
});

describe("PATCH/DELETE /api/v1/orgs/{org_slug}/members/{username}/", () => {
  test("a role change acts on the member's very next request", async () => {
    const o = await orgWithAdmin("m3");
    const a = await s.user("m3-author", "m3", "author");
    const wf = { slug: "w", name: "W", allowed_file_types: ["JSON"] };
    expect((await call(s, "POST", "/api/v1/orgs/m3/workflows/", { token: a.token, body: wf })).status).toBe(
      201,
    );
    const r = await call(s, "PATCH", `${o.members}m3-author/`, {
      token: o.admin.token,
      body: { role: "viewer" },
    });
    expect(r.json).toMatchObject({ username: "m3-author", role: "viewer" });
    const denied = await call(s, "POST", "/api/v1/orgs/m3/workflows/", {
      token: a.token,
      body: { ...wf, slug: "w2" },
    });
    expect(denied.json).toEqual(
      errorBody(403, "permission_denied", "This action needs the author role or higher."),
    );
  });
  test("204 removes a member, whose very next request is 403", async () => {
    const o = await orgWithAdmin("m4");
    const v = await s.user("m4-viewer", "m4", "viewer");
    expect((await call(s, "GET", o.org, { token: v.token })).status).toBe(200);
    expect((await call(s, "DELETE", `${o.members}m4-viewer/`, { token: o.admin.token })).status).toBe(204);
    expect((await call(s, "GET", o.org, { token: v.token })).json).toEqual(notMember);
  });
  test("404 not_found for a user who is not a member of this org", async () => {
    const o = await orgWithAdmin("m5");
    await s.user("m5-elsewhere", "acme", "viewer");
    for (const [method, body] of [
      ["PATCH", { role: "viewer" }],
      ["DELETE", undefined],
    ] as const) {
      const r = await call(s, method, `${o.members}m5-elsewhere/`, { token: o.admin.token, body });
      expect(r.json).toEqual(errorBody(404, "not_found", "Member not found."));
    }
  });
});

describe("a member removed between the lookup and the change (another request, the CLI, another node)", () => {
  test("the change is refused as not a member, and writes no audit entry", async () => {
    const o = await orgWithAdmin("m6r");
    const v = await s.user("m6r-viewer", "m6r", "viewer");
    const orgId = await s.org("m6r");
    expect((await call(s, "DELETE", `${o.members}m6r-viewer/`, { token: o.admin.token })).status).toBe(204);
    // What the service does next, having found the member just before the DELETE committed.
    const entries = await s.count("audit_log");
    expect(await s.deps.orgs.changeMember(orgId, v.id, null, SYSTEM)).toBe("not_member");
    expect(await s.deps.orgs.changeMember(orgId, v.id, "author", SYSTEM)).toBe("not_member");
    expect(await s.count("audit_log")).toBe(entries);
    expect(
      await s.row("SELECT role FROM memberships WHERE org_id = ? AND user_id = ?", orgId, v.id),
    ).toBeNull();
  });
});

describe("the last Admin of an org", () => {
  test("409 conflict when demoting or removing the last Admin", async () => {
    const o = await orgWithAdmin("m6");
    const demote = await call(s, "PATCH", `${o.members}m6-admin/`, {
      token: o.admin.token,
      body: { role: "author" },
    });
    expect(demote.json).toEqual(lastAdmin("demoted"));
    const remove = await call(s, "DELETE", `${o.members}m6-admin/`, { token: o.admin.token });
    expect(remove.json).toEqual(lastAdmin("removed"));
    expect((await call(s, "GET", `${o.members}`, { token: o.admin.token })).json.results[0].role).toBe(
      "admin",
    );
  });
  test("with a second Admin, one may step down; then the other is the last", async () => {
    const o = await orgWithAdmin("m7");
    const b = await s.user("m7-second", "m7", "admin");
    const down = await call(s, "PATCH", `${o.members}m7-admin/`, {
      token: o.admin.token,
      body: { role: "viewer" },
    });
    expect(down.json).toMatchObject({ username: "m7-admin", role: "viewer" });
    const r = await call(s, "DELETE", `${o.members}m7-second/`, { token: b.token });
    expect(r.json).toEqual(lastAdmin("removed"));
  });
});

describe("org management (Admin)", () => {
  test("200 PATCH renames; 400 for an empty name", async () => {
    const o = await orgWithAdmin("m8");
    const r = await call(s, "PATCH", o.org, { token: o.admin.token, body: { name: "Eighth" } });
    expect(r.json).toEqual({
      org_slug: "m8",
      name: "Eighth",
      status: "active",
      deleted_at: null,
      created_at: expect.any(String),
      role: "admin",
    });
    expect((await call(s, "PATCH", o.org, { token: o.admin.token, body: { name: " " } })).json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for name.", [
        { field: "name", code: "invalid", message: "A name of 1 to 200 characters." },
      ]),
    );
  });
  test("204 DELETE is soft: members get 403 on the next request and the org leaves their list", async () => {
    const o = await orgWithAdmin("m9");
    const v = await s.user("m9-viewer", "m9", "viewer");
    expect((await call(s, "DELETE", o.org, { token: o.admin.token })).status).toBe(204);
    expect((await call(s, "GET", "/api/v1/orgs/m9/workflows/", { token: v.token })).json).toEqual(
      errorBody(403, "permission_denied", "The organization has been deleted."),
    );
    expect((await call(s, "GET", "/api/v1/orgs/", { token: v.token })).json.count).toBe(0);
    expect(await s.count("orgs")).toBeGreaterThan(0);
  });
});

describe("roles on runs", () => {
  test("an executor cancels their own runs, not another executor's; a viewer reads both", async () => {
    await s.user("m10-admin", "m10", "admin");
    const e1 = await s.user("m10-exec1", "m10", "executor");
    const e2 = await s.user("m10-exec2", "m10", "executor");
    const v = await s.user("m10-viewer", "m10", "viewer");
    const wf = {
      slug: "w",
      name: "W",
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "syntax", config: {} }],
    };
    await s.deps.workflows.create((await s.deps.orgs.getBySlug("m10"))!.id, wf, SYSTEM);
    const run = await call(s, "POST", "/api/v1/orgs/m10/workflows/w/runs/", {
      token: e1.token,
      body: { content: "{}", content_type: "application/json" },
    });
    expect(run.status).toBe(201);
    const cancel = `/api/v1/orgs/m10/runs/${run.json.id}/cancel/`;
    expect((await call(s, "POST", cancel, { token: e2.token })).json).toEqual(
      errorBody(403, "permission_denied", "Only the run's creator or an author can cancel it."),
    );
    // The run already finished: the creator passes the access check and meets the 409.
    expect((await call(s, "POST", cancel, { token: e1.token })).json).toEqual(
      errorBody(409, "conflict", "The run is already succeeded."),
    );
    expect((await call(s, "GET", `/api/v1/orgs/m10/runs/${run.json.id}/`, { token: v.token })).status).toBe(
      200,
    );
    // A viewer cancels no one's run; the creator still may once demoted to viewer (CONTRACT: "the
    // run's creator, or Author").
    expect((await call(s, "POST", cancel, { token: v.token })).json).toEqual(
      errorBody(403, "permission_denied", "Only the run's creator or an author can cancel it."),
    );
    const demoted = await call(s, "PATCH", "/api/v1/orgs/m10/members/m10-exec1/", {
      token: (await s.user("m10-admin2", "m10", "admin")).token,
      body: { role: "viewer" },
    });
    expect(demoted.json).toMatchObject({ role: "viewer" });
    expect((await call(s, "POST", cancel, { token: e1.token })).json).toEqual(
      errorBody(409, "conflict", "The run is already succeeded."),
    );
  });
});
