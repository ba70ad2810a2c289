// Instance administration: users and orgs through /api/v1/admin/ and through the CLI on the data
// dir of the running server. Every change acts on the very next request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SYSTEM } from "../src/audit/actor.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const root = () => ({ token: s.rootToken });
const me = (token: string) => call(s, "GET", "/api/v1/users/me/", { token });
const invalidToken = errorBody(401, "authentication_required", "Invalid token.");
const suspended = errorBody(403, "permission_denied", "The organization is suspended.");
const deleted = errorBody(403, "permission_denied", "The organization has been deleted.");
function run(args: string[], stdin?: string) {
  const p = Bun.spawnSync([process.execPath, join(import.meta.dir, "../src/main.ts"), ...args], {
    env: {
      ...process.env,
      ASSAY_DATA_DIR: s.dataDir,
      ...(s.databaseUrl ? { ASSAY_DATABASE_URL: s.databaseUrl } : {}),
    },
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}
const assay = Object.assign((...args: string[]) => run(args), {
  /** With `stdin` as the process's standard input (a FILE given as -). */
  withStdin: (stdin: string, ...args: string[]) => run(args, stdin),
});

describe("/api/v1/admin/users/", () => {
  test("201 creates, 200 lists; 409 for a taken name, 400 for a bad one", async () => {
    const r = await call(s, "POST", "/api/v1/admin/users/", {
      ...root(),
      body: { username: "newbie", name: "New" },
    });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      username: "newbie",
      name: "New",
      email: "",
      is_admin: false,
      created_at: expect.any(String),
    });
    const list = await call(s, "GET", "/api/v1/admin/users/", root());
    expect(list.json.results.map((u: { username: string }) => u.username)).toContain("newbie");
    const taken = 'The username "newbie" is taken.';
    expect(
      (await call(s, "POST", "/api/v1/admin/users/", { ...root(), body: { username: "newbie" } })).json,
    ).toEqual(errorBody(409, "conflict", taken, [{ field: "username", code: "unique", message: taken }]));
    // The same name in another case is taken too (one name to people: member lists, the audit log);
    // nothing is created.
    const users = await s.count("users");
    for (const other of ["Newbie", "NEWBIE"]) {
      const twin = `The username "${other}" is taken (as "newbie").`;
      expect(
        (await call(s, "POST", "/api/v1/admin/users/", { ...root(), body: { username: other } })).json,
      ).toEqual(errorBody(409, "conflict", twin, [{ field: "username", code: "unique", message: twin }]));
    }
    expect(await s.count("users")).toBe(users);
    // A password tried first is refused with the user (NIST SP 800-63B: common, the username).
    for (const [password, message] of [
      ["password1", "This password is one of the most common; attackers try it first. Choose another."],
      ["xnewbie2x-99", "A password must not contain the username."],
    ]) {
      const weak = await call(s, "POST", "/api/v1/admin/users/", {
        ...root(),
        body: { username: "xnewbie2x", password },
      });
      expect(weak.json).toEqual(
        errorBody(400, "invalid_request", "Invalid value for password.", [
          { field: "password", code: "invalid", message },
        ]),
      );
    }
    expect(await s.count("users")).toBe(users);
    const bad = await call(s, "POST", "/api/v1/admin/users/", { ...root(), body: { username: "no spaces" } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual([{ field: "username", code: "invalid", message: expect.any(String) }]);
  });
  test("204 deletes a user: their token is 401 on the very next request", async () => {
    const u = await s.user("leaver", "acme", "admin");
    expect((await me(u.token)).status).toBe(200);
    expect((await call(s, "DELETE", "/api/v1/admin/users/leaver/", root())).status).toBe(204);
    expect((await me(u.token)).json).toEqual(invalidToken);
    expect((await call(s, "DELETE", "/api/v1/admin/users/leaver/", root())).json).toEqual(
      errorBody(404, "not_found", "User not found."),
    );
  });
  test("409 conflict when deleting the last instance administrator", async () => {
    const r = await call(s, "DELETE", "/api/v1/admin/users/root/", root());
    expect(r.json).toEqual(
      errorBody(
        409,
        "conflict",
        "The last instance administrator cannot be deleted; make another user admin first.",
      ),
    );
    await s.user("second-admin", undefined, undefined, { is_admin: true });
    expect((await call(s, "DELETE", "/api/v1/admin/users/second-admin/", root())).status).toBe(204);
  });
});

describe("/api/v1/admin/orgs/", () => {
  test("201 creates an org whose first Admin is the caller, or the user named in admin", async () => {
    const mine = await call(s, "POST", "/api/v1/admin/orgs/", {
      ...root(),
      body: { org_slug: "made", name: "Made" },
    });
    expect(mine.json).toEqual({
      org_slug: "made",
      name: "Made",
      status: "active",
      deleted_at: null,
      created_at: expect.any(String),
    });
    expect((await call(s, "GET", "/api/v1/orgs/made/", root())).json.role).toBe("admin");
    const lead = await s.user("lead");
    await call(s, "POST", "/api/v1/admin/orgs/", { ...root(), body: { org_slug: "theirs", admin: "lead" } });
    expect(
      (await call(s, "GET", "/api/v1/orgs/theirs/members/", { token: lead.token })).json.results,
    ).toEqual([expect.objectContaining({ username: "lead", role: "admin" })]);
  });
  test("400 for an unknown admin or a bad slug, 409 for a taken slug", async () => {
    const post = (body: unknown) => call(s, "POST", "/api/v1/admin/orgs/", { ...root(), body });
    expect((await post({ org_slug: "nobodys", admin: "ghost" })).json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for admin.", [
        { field: "admin", code: "not_found", message: 'There is no user "ghost".' },
      ]),
    );
    expect((await post({ org_slug: "Bad Slug" })).json.errors[0].field).toBe("org_slug");
    expect((await post({ org_slug: "acme" })).json).toMatchObject({ status: 409, code: "conflict" });
  });
  test("suspend: 403 on the members' next request; restore: 200 again; deleted orgs too", async () => {
    const v = await s.user("susp-viewer", "sus", "viewer");
    const path = "/api/v1/orgs/sus/workflows/";
    const r = await call(s, "POST", "/api/v1/admin/orgs/sus/suspend/", root());
    expect(r.json).toMatchObject({ org_slug: "sus", status: "suspended" });
    expect((await call(s, "GET", path, { token: v.token })).json).toEqual(suspended);
    expect((await call(s, "POST", "/api/v1/admin/orgs/sus/restore/", root())).json.status).toBe("active");
    expect((await call(s, "GET", path, { token: v.token })).status).toBe(200);
    expect((await call(s, "DELETE", "/api/v1/admin/orgs/sus/", root())).status).toBe(204);
    expect((await call(s, "GET", path, { token: v.token })).json).toEqual(deleted);
    const all = await call(s, "GET", "/api/v1/admin/orgs/", root());
    expect(all.json.results.find((o: { org_slug: string }) => o.org_slug === "sus").deleted_at).toEqual(
      expect.any(String),
    );
    await call(s, "POST", "/api/v1/admin/orgs/sus/restore/", root());
    expect((await call(s, "GET", path, { token: v.token })).status).toBe(200);
  });
  test("409 conflict for suspending a deleted org, which stays as it was; restore still brings it back", async () => {
    const v = await s.user("gone-viewer", "gone", "viewer");
    const path = "/api/v1/orgs/gone/";
    expect((await call(s, "DELETE", "/api/v1/admin/orgs/gone/", root())).status).toBe(204);
    const was = (await call(s, "GET", "/api/v1/admin/orgs/gone/", root())).json;
    expect(was).toMatchObject({ status: "active", deleted_at: expect.any(String) });
    const entries = await s.count("audit_log");
    const r = await call(s, "POST", "/api/v1/admin/orgs/gone/suspend/", root());
    expect(r.status).toBe(409);
    expect(r.headers.get("content-type")).toStartWith("application/json");
    expect(r.json).toEqual(
      errorBody(
        409,
        "conflict",
        'The organization "gone" has been deleted; restore it first (POST /api/v1/admin/orgs/gone/restore/).',
      ),
    );
    // Nothing changed, nothing logged; the members' answer is still the deleted org's.
    expect((await call(s, "GET", "/api/v1/admin/orgs/gone/", root())).json).toEqual(was);
    expect(await s.count("audit_log")).toBe(entries);
    expect((await call(s, "GET", path, { token: v.token })).json).toEqual(deleted);
    // Restore is what a deleted org takes; then it can be suspended as any other.
    const back = await call(s, "POST", "/api/v1/admin/orgs/gone/restore/", root());
    expect(back.status).toBe(200);
    const live = { ...was, deleted_at: null };
    expect(back.json).toEqual(live);
    expect((await call(s, "GET", path, { token: v.token })).status).toBe(200);
    const sus = await call(s, "POST", "/api/v1/admin/orgs/gone/suspend/", root());
    expect(sus.json).toEqual({ ...live, status: "suspended" });
    expect((await call(s, "GET", path, { token: v.token })).json).toEqual(suspended);
  });
  test("404 not_found for an unknown org", async () => {
    const r = await call(s, "POST", "/api/v1/admin/orgs/nowhere/suspend/", root());
    expect(r.json).toEqual(errorBody(404, "not_found", "Organization not found."));
  });
  test("Location of a created org is its admin view, which the creator can GET though not a member", async () => {
    await s.user("loc-lead");
    const r = await call(s, "POST", "/api/v1/admin/orgs/", {
      ...root(),
      body: { org_slug: "loc-org", name: "Loc", admin: "loc-lead" },
    });
    expect(r.status).toBe(201);
    const location = new URL(r.headers.get("location")!);
    expect(location.pathname).toBe("/api/v1/admin/orgs/loc-org/");
    const got = await call(s, "GET", location.pathname, root());
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r.json);
    // The item of the admin list, deleted orgs included.
    await call(s, "DELETE", location.pathname, root());
    const after = await call(s, "GET", location.pathname, root());
    const listed = (await call(s, "GET", "/api/v1/admin/orgs/?page_size=100", root())).json.results;
    expect(after.json).toEqual(listed.find((o: { org_slug: string }) => o.org_slug === "loc-org"));
    expect(after.json.deleted_at).toEqual(expect.any(String));
    expect((await call(s, "GET", "/api/v1/admin/orgs/nowhere/", root())).json).toEqual(
      errorBody(404, "not_found", "Organization not found."),
    );
    const lead = await s.user("loc-other", "acme", "admin");
    expect((await call(s, "GET", location.pathname, { token: lead.token })).json).toEqual(
      errorBody(403, "permission_denied", "This action needs an instance administrator."),
    );
  });
});

describe("GET /api/v1/admin/users/{username}/", () => {
  test("the Location of a created user answers the user, as the list has it", async () => {
    const r = await call(s, "POST", "/api/v1/admin/users/", {
      ...root(),
      body: { username: "loc-user", name: "Loc User", email: "loc@example.com" },
    });
    expect(r.status).toBe(201);
    const location = new URL(r.headers.get("location")!);
    expect(location.pathname).toBe("/api/v1/admin/users/loc-user/");
    const got = await call(s, "GET", location.pathname, root());
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r.json);
    const listed = (await call(s, "GET", "/api/v1/admin/users/?page_size=100", root())).json.results;
    expect(got.json).toEqual(listed.find((u: { username: string }) => u.username === "loc-user"));
  });
  test("404 for an unknown user; 403 for a caller who is not an instance admin", async () => {
    expect((await call(s, "GET", "/api/v1/admin/users/ghost-user/", root())).json).toEqual(
      errorBody(404, "not_found", "User not found."),
    );
    const plain = await s.user("loc-plain", "acme", "admin");
    const r = await call(s, "GET", "/api/v1/admin/users/loc-plain/", { token: plain.token });
    expect(r.status).toBe(403);
    expect(r.json).toEqual(
      errorBody(403, "permission_denied", "This action needs an instance administrator."),
    );
  });
});

describe("the CLI on the running server's data dir", () => {
  test("tokens revoke, members remove, orgs suspend, users delete: each acts on the next request", async () => {
    const u = await s.user("cli-target", "clio", "viewer");
    await s.user("cli-admin", "clio", "admin");
    const spare = await s.user("cli-target");
    const path = "/api/v1/orgs/clio/";
    expect(assay("tokens", "revoke", String(u.tokenId)).code).toBe(0);
    expect((await me(u.token)).json).toEqual(
      errorBody(401, "authentication_required", "The token has been revoked."),
    );
    expect((await call(s, "GET", path, { token: spare.token })).status).toBe(200);
    expect(assay("orgs", "suspend", "clio").code).toBe(0);
    expect((await call(s, "GET", path, { token: spare.token })).json).toEqual(suspended);
    expect(assay("orgs", "restore", "clio").code).toBe(0);
    expect(assay("members", "remove", "clio", "cli-target").code).toBe(0);
    expect((await call(s, "GET", path, { token: spare.token })).json).toEqual(
      errorBody(403, "permission_denied", "You are not a member of this organization."),
    );
    expect(assay("users", "delete", "cli-target").code).toBe(0);
    expect((await me(spare.token)).json).toEqual(invalidToken);
  });
  test("a deleted org is refused a suspension, a new member, a role and a workflow (exit 1); restore, remove and list work", async () => {
    await s.user("del-admin", "del-org", "admin");
    const viewer = await s.user("del-viewer", "del-org", "viewer");
    await s.user("del-new");
    expect(assay("orgs", "delete", "del-org").code).toBe(0);
    const org = await s.row("SELECT status, deleted_at FROM orgs WHERE slug = ?", "del-org");
    const members = async () =>
      s.sql(
        "SELECT u.username, m.role FROM memberships m JOIN users u ON u.id = m.user_id JOIN orgs o ON o.id = m.org_id WHERE o.slug = ? ORDER BY u.username",
        "del-org",
      );
    const before = await members();
    const entries = await s.count("audit_log");
    const refused = {
      code: 1,
      out: "",
      err: 'assay REPLACE: The organization "del-org" has been deleted; restore it first (`assay orgs restore del-org`).\n',
    };
    const as = (command: string) => ({ ...refused, err: refused.err.replace("REPLACE", command) });
    expect(assay("orgs", "suspend", "del-org")).toEqual(as("orgs"));
    expect(assay("members", "add", "del-org", "del-new", "viewer")).toEqual(as("members"));
    expect(assay("members", "set-role", "del-org", "del-viewer", "admin")).toEqual(as("members"));
    const doc =
      "slug: w\nname: W\nallowed_file_types: [JSON]\nsteps:\n  - {name: s, validator: syntax, config: {}}\n";
    expect(assay.withStdin(doc, "workflows", "import", "del-org", "-")).toEqual(as("workflows"));
    // Nothing changed and nothing was logged.
    expect(await s.row("SELECT status, deleted_at FROM orgs WHERE slug = ?", "del-org")).toEqual(org);
    expect(await members()).toEqual(before);
    expect(await s.count("audit_log")).toBe(entries);
    // Reading and taking access away still work; a second delete keeps it as it is.
    expect(assay("members", "list", "del-org").code).toBe(0);
    const removed = assay("members", "remove", "del-org", "del-viewer");
    expect([removed.code, removed.err]).toEqual([0, ""]);
    expect(removed.out).toStartWith("Removed del-viewer from del-org (");
    const logged = await s.count("audit_log");
    expect(assay("orgs", "delete", "del-org").code).toBe(0);
    expect(await s.row("SELECT status, deleted_at FROM orgs WHERE slug = ?", "del-org")).toEqual(org);
    // The admin API's delete of it as well: 204, and neither logs a change that did not happen.
    expect((await call(s, "DELETE", "/api/v1/admin/orgs/del-org/", root())).status).toBe(204);
    expect(await s.row("SELECT status, deleted_at FROM orgs WHERE slug = ?", "del-org")).toEqual(org);
    expect(await s.count("audit_log")).toBe(logged);
    // Restored, it takes every change again; the removed member stays out. A second restore
    // changes nothing and logs nothing.
    expect(assay("orgs", "restore", "del-org").code).toBe(0);
    expect(await s.count("audit_log")).toBe(logged + 1);
    expect(assay("orgs", "restore", "del-org").code).toBe(0);
    expect(await s.count("audit_log")).toBe(logged + 1);
    expect((await call(s, "GET", "/api/v1/orgs/del-org/", { token: viewer.token })).json).toEqual(
      errorBody(403, "permission_denied", "You are not a member of this organization."),
    );
    const added = assay("members", "add", "del-org", "del-new", "viewer");
    expect({ ...added, out: added.out.replace(/ \((?:SQLite|PostgreSQL) [^)]*\)\.$/m, ".") }).toEqual({
      code: 0,
      out: "del-new is now viewer of del-org.\n",
      err: "",
    });
    expect(assay("members", "set-role", "del-org", "del-new", "author").code).toBe(0);
    expect(assay("orgs", "suspend", "del-org").code).toBe(0);
  });
  test("tokens revoke: an ID that is not a number is exit 2, a number no token has exit 1; nothing is revoked", async () => {
    const u = await s.user("revoke-keep");
    const entries = await s.count("audit_log");
    for (const id of ["abc", `${u.tokenId}x`, "-1", "1.5", "0x1", "１"])
      expect(assay("tokens", "revoke", id)).toEqual({
        code: 2,
        out: "",
        err: `assay tokens: ID is a token's number, as \`assay tokens list USERNAME\` shows it, not "${id}"\nRun "assay tokens -h" for help.\n`,
      });
    for (const id of ["999999", "1234567890123456789012"])
      expect(assay("tokens", "revoke", id)).toEqual({
        code: 1,
        out: "",
        err: `assay tokens: There is no token ${id}.\n`,
      });
    expect(await s.count("audit_log")).toBe(entries);
    expect((await me(u.token)).status).toBe(200);
  });
  test("users create refuses a name the API refuses (past 200 characters): exit 1, nothing written", async () => {
    const [users, entries] = [await s.count("users"), await s.count("audit_log")];
    const long = "x".repeat(201);
    const api = await call(s, "POST", "/api/v1/admin/users/", {
      ...root(),
      body: { username: "longname", name: long },
    });
    expect(api.status).toBe(400);
    expect(assay("users", "create", "longname", "--name", long)).toEqual({
      code: 1,
      out: "",
      err: "assay users: Invalid value for name.\n  name: A name of at most 200 characters.\n",
    });
    expect([await s.count("users"), await s.count("audit_log")]).toEqual([users, entries]);
    // Characters, not UTF-16 units, as the API counts them: 200 astral ones are a name.
    const wide = "😀".repeat(200);
    const ok = assay("users", "create", "widename", "--name", wide);
    expect(ok.code).toBe(0);
    const made = await call(s, "GET", "/api/v1/admin/users/widename/", root());
    expect(made.json.name).toBe(wide);
  });
  test("tokens revoke of a revoked token says so: exit 0, nothing changed, no second audit entry", async () => {
    const u = await s.user("revoke-twice");
    const first = assay("tokens", "revoke", String(u.tokenId));
    expect(first.code).toBe(0);
    expect(first.out).toStartWith(`Token ${u.tokenId} revoked (`);
    const entries = await s.count("audit_log");
    const again = assay("tokens", "revoke", String(u.tokenId));
    expect(again).toEqual({
      code: 0,
      out: expect.stringMatching(
        new RegExp(
          `^Token ${u.tokenId} was already revoked at \\d{4}-\\d\\d-\\d\\dT[^ ]+Z \\(.+\\); nothing changed\\.\\n$`,
        ),
      ),
      err: "",
    });
    expect(await s.count("audit_log")).toBe(entries);
  });
  test("members remove refuses the last Admin; users delete refuses the last instance admin", async () => {
    await s.user("solo", "solo-org", "admin");
    const m = assay("members", "remove", "solo-org", "solo");
    expect(m.code).toBe(1);
    expect(m.err).toContain("last admin");
    const u = assay("users", "delete", "root");
    expect(u.code).toBe(1);
    expect(u.err).toContain("last instance administrator");
  });
});

describe("the last instance administrator, under concurrent deletions", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  test("two deletions of the last two admins at once: one is refused, one admin is left", async () => {
    // Checked in the deleting transaction: checked before it, both deletions passed (a CLI and
    // an API deletion, or two CLI ones, left the instance without an administrator).
    await t.user("other-admin", undefined, undefined, { is_admin: true });
    const admins = async () =>
      (await t.deps.users.list(1000, 0)).items.filter((u) => u.is_admin).map((u) => u.username);
    expect((await admins()).sort()).toEqual(["other-admin", "root"]);
    const ids = await Promise.all(
      ["root", "other-admin"].map(async (name) => (await t.deps.users.getByUsername(name))!.id),
    );
    const results = await Promise.all(ids.map((id) => t.deps.users.delete(id, SYSTEM)));
    expect(results.map(String).sort()).toEqual(["last_admin", "true"]);
    expect(await admins()).toHaveLength(1);
  });
});
