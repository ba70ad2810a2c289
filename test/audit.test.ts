// The audit log over the API (issue 24): one entry for each kind of change, written with the
// change; nothing for reads or refused requests; no secret in any entry; who and from where.
// Reading it (filters, export, roles, tenants, retention): test/audit-read.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let root: string;
let rootId: number;
const PASSWORD = "correct horse battery";
/** Every secret the test sees: none may appear in any entry. */
const secrets: string[] = [];
const PROXY = { "x-forwarded-for": "198.51.100.7, 203.0.113.9" };

beforeAll(async () => {
  // Behind a proxy of our own: the address recorded is the last X-Forwarded-For hop.
  s = await startTestServer({ webhook_allow_private: true, trust_proxy: true });
  root = s.rootToken;
  secrets.push(root);
  rootId = (await s.deps.users.getByUsername("root"))!.id;
  await createWorkflow(s, root, HOLD_WORKFLOW);
});
afterAll(() => s.close());

type Entry = {
  seq: number;
  action: string;
  actor: Record<string, unknown>;
  target: { type: string; id: string | null; name: string | null };
  changes: Record<string, unknown> | null;
  org_slug: string | null;
};
const headSeq = async () =>
  Number((await s.row<{ n: number }>("SELECT max(seq) AS n FROM audit_log"))?.n ?? 0);
/** Entries after `seq`, oldest first, as the instance admin reads them. */
async function since(seq: number): Promise<Entry[]> {
  const r = await call(s, "GET", "/api/v1/admin/audit/?page_size=100", { token: root });
  return (r.json.results as Entry[]).filter((e) => e.seq > seq).reverse();
}
/** Runs `act`, which must answer `status`, and returns the entries it wrote. */
async function logged(status: number, act: () => Promise<{ status: number; text: string }>) {
  const before = await headSeq();
  const r = await act();
  expect({ status: r.status, text: r.text.slice(0, 300) }).toEqual({ status, text: expect.any(String) });
  return since(before);
}
const as = (token: string) => ({ token, headers: PROXY });

describe("an entry for each kind of change", () => {
  test("workflows and steps: create, update, steps added, changed, removed, delete", async () => {
    const [c] = await logged(201, () =>
      call(s, "POST", "/api/v1/orgs/acme/workflows/", {
        ...as(root),
        body: {
          slug: "wf",
          name: "WF",
          allowed_file_types: ["JSON"],
          steps: [{ name: "a", validator: "syntax", config: {} }],
        },
      }),
    );
    expect(c).toMatchObject({
      action: "workflow.create",
      org_slug: "acme",
      actor: { type: "user", user_id: rootId, username: "root", ip: "203.0.113.9", session_id: null },
      target: { type: "workflow", name: "wf" },
      changes: { after: { slug: "wf", name: "WF", version: 1 } },
    });
    expect(c!.actor.token_id).toEqual(expect.any(Number));
    const wf = "/api/v1/orgs/acme/workflows/wf/";
    const u = await logged(200, () => call(s, "PATCH", wf, { ...as(root), body: { name: "WF 2" } }));
    expect(u).toHaveLength(1);
    expect(u[0]).toMatchObject({
      action: "workflow.update",
      changes: { before: { name: "WF", version: 1 }, after: { name: "WF 2", version: 2 } },
    });
    // Only what changed: the unchanged fields are not repeated.
    expect(Object.keys(u[0]!.changes!.before as object).sort()).toEqual(["name", "version"]);
    // The new version's stored definition is vouched for by its digest (the versions API serves it).
    expect(Object.keys(u[0]!.changes!.after as object).sort()).toEqual([
      "definition_sha256",
      "name",
      "version",
    ]);
    const [a] = await logged(201, () =>
      call(s, "POST", `${wf}steps/`, { ...as(root), body: { name: "b", validator: "syntax", config: {} } }),
    );
    expect(a).toMatchObject({ action: "step.create", target: { type: "workflow", name: "wf" } });
    const stepId = (await call(s, "GET", wf, { token: root })).json.steps[1].id;
    const [p] = await logged(200, () =>
      call(s, "PATCH", `${wf}steps/${stepId}/`, { ...as(root), body: { is_active: false } }),
    );
    expect(p).toMatchObject({
      action: "step.update",
      changes: {
        before: { steps: { [stepId]: { is_active: true } } },
        after: { steps: { [stepId]: { is_active: false } } },
      },
    });
    const [d] = await logged(204, () => call(s, "DELETE", `${wf}steps/${stepId}/`, as(root)));
    expect(d).toMatchObject({
      action: "step.delete",
      changes: { before: { steps: { [stepId]: { name: "b" } } } },
    });
    const last = (await call(s, "GET", wf, { token: root })).json;
    const [x] = await logged(204, () => call(s, "DELETE", wf, as(root)));
    expect(x).toMatchObject({ action: "workflow.delete", target: { type: "workflow", name: "wf" } });
    // The whole record, as a create's: its settings and its steps' digests (step a, as created).
    const created = c!.changes!.after as Record<string, unknown>;
    expect(x!.changes).toEqual({
      before: {
        slug: "wf",
        name: "WF 2",
        description: "",
        status: "active",
        allowed_file_types: ["JSON"],
        fail_fast: true,
        retention_days: null,
        version: last.version,
        steps: created.steps,
      },
    });
  });

  test("an unchanged PATCH saves nothing and logs nothing", async () => {
    await createWorkflow(s, root, {
      slug: "same",
      allowed_file_types: ["JSON"],
      steps: [{ name: "a", validator: "syntax", config: {} }],
    });
    expect(
      await logged(200, () =>
        call(s, "PATCH", "/api/v1/orgs/acme/workflows/same/", { token: root, body: {} }),
      ),
    ).toEqual([]);
  });

  test("stored schemas: create, replace, delete (by digest, not text)", async () => {
    const body = { uri: "https://example.com/s.json", schema: { type: "object" } };
    const [c] = await logged(201, () => call(s, "POST", "/api/v1/orgs/acme/schemas/", { ...as(root), body }));
    expect(c).toMatchObject({
      action: "schema.create",
      target: { type: "schema", name: body.uri },
      changes: { after: { uri: body.uri, schema: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } } },
    });
    const path = `/api/v1/orgs/acme/schemas/${c!.target.id}/`;
    const [r] = await logged(200, () =>
      call(s, "PUT", path, { ...as(root), body: { ...body, schema: { type: "array" } } }),
    );
    expect(r!.action).toBe("schema.update");
    const [d] = await logged(204, () => call(s, "DELETE", path, as(root)));
    expect(d!.action).toBe("schema.delete");
  });

  test("webhooks and their secrets: create, update, rotate, ping, delete; never the secret", async () => {
    const [c] = await logged(201, () =>
      call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
        ...as(root),
        body: { url: "http://127.0.0.1:9/hook" },
      }),
    );
    expect(c).toMatchObject({
      action: "webhook.create",
      target: { type: "webhook", name: "http://127.0.0.1:9/hook" },
    });
    const path = `/api/v1/orgs/acme/webhooks/${c!.target.id}/`;
    const created = await call(s, "GET", path, { token: root });
    expect(created.status).toBe(200);
    const [u] = await logged(200, () => call(s, "PATCH", path, { ...as(root), body: { is_active: false } }));
    expect(u!.action).toBe("webhook.update");
    let rotated = "";
    const [r] = await logged(200, async () => {
      const x = await call(s, "POST", `${path}rotate-secret/`, as(root));
      rotated = x.json.secret;
      return x;
    });
    expect(rotated).toMatch(/^whsec_/);
    secrets.push(rotated);
    expect(r!.action).toBe("webhook.rotate_secret");
    await call(s, "PATCH", path, { token: root, body: { is_active: true } });
    const [p] = await logged(202, () => call(s, "POST", `${path}ping/`, as(root)));
    expect(p!.action).toBe("webhook.ping");
    const [d] = await logged(204, () => call(s, "DELETE", path, as(root)));
    expect(d!.action).toBe("webhook.delete");
  });

  test("a webhook URL's user-info and query values are masked (the log is kept for good)", async () => {
    const url = "http://hook-user:s3cr3t-pass@127.0.0.1:9/hook/path?token=q-s3cr3t&v=2";
    secrets.push("s3cr3t-pass", "q-s3cr3t");
    const [c] = await logged(201, () =>
      call(s, "POST", "/api/v1/orgs/acme/webhooks/", { ...as(root), body: { url } }),
    );
    const masked = "http://***@127.0.0.1:9/hook/path?token=***&v=***";
    expect(c).toMatchObject({
      action: "webhook.create",
      target: { type: "webhook", name: masked },
      changes: { after: { url: masked } },
    });
    const path = `/api/v1/orgs/acme/webhooks/${c!.target.id}/`;
    // The webhook itself keeps its URL whole: its org's Admins need it.
    expect((await call(s, "GET", path, { token: root })).json.url).toBe(url);
    const [u] = await logged(200, () =>
      call(s, "PATCH", path, { ...as(root), body: { url: "https://127.0.0.1:9/other#frag-s3cr3t" } }),
    );
    secrets.push("frag-s3cr3t");
    expect(u!.changes).toEqual({
      before: expect.objectContaining({ url: masked }),
      after: expect.objectContaining({ url: "https://127.0.0.1:9/other#***" }),
    });
    // A change in the masked parts alone (a new query value, new credentials) is a change too:
    // the entry says the masked parts changed, without them.
    const creds = "https://u:p-2-s3cr3t@127.0.0.1:9/other?to=q-2-s3cr3t";
    secrets.push("frag-2-s3cr3t", "p-2-s3cr3t", "p-3-s3cr3t", "q-2-s3cr3t", "q-3-s3cr3t");
    await logged(200, () => call(s, "PATCH", path, { ...as(root), body: { url: creds } }));
    const hidden = [
      "https://u:p-3-s3cr3t@127.0.0.1:9/other?to=q-2-s3cr3t",
      "https://u:p-3-s3cr3t@127.0.0.1:9/other?to=q-3-s3cr3t",
      "https://u:p-3-s3cr3t@127.0.0.1:9/other?to=q-3-s3cr3t#frag-2-s3cr3t",
    ];
    for (const next of hidden) {
      const [m] = await logged(200, () => call(s, "PATCH", path, { ...as(root), body: { url: next } }));
      expect(m).toMatchObject({ action: "webhook.update" });
      // A fragment added shows in the masked URL itself; the other changes only as "changed".
      expect(m!.changes).toEqual(
        next.includes("#")
          ? {
              before: { url: "https://***@127.0.0.1:9/other?to=***" },
              after: { url: "https://***@127.0.0.1:9/other?to=***#***" },
            }
          : { before: { url_masked_parts: "previous" }, after: { url_masked_parts: "changed" } },
      );
    }
    await logged(204, () => call(s, "DELETE", path, as(root)));
  });

  test("members and roles: add, change role, remove", async () => {
    await s.user("mia");
    const m = "/api/v1/orgs/acme/members/";
    const [a] = await logged(201, () =>
      call(s, "POST", m, { ...as(root), body: { username: "mia", role: "viewer" } }),
    );
    expect(a).toMatchObject({
      action: "member.add",
      target: { type: "member", name: "mia" },
      changes: { after: { role: "viewer" } },
    });
    const [u] = await logged(200, () =>
      call(s, "PATCH", `${m}mia/`, { ...as(root), body: { role: "author" } }),
    );
    expect(u).toMatchObject({
      action: "member.update",
      changes: { before: { role: "viewer" }, after: { role: "author" } },
    });
    const [d] = await logged(204, () => call(s, "DELETE", `${m}mia/`, as(root)));
    expect(d).toMatchObject({ action: "member.remove", changes: { before: { role: "author" } } });
  });

  test("tokens: create and revoke, by id and name, never the token", async () => {
    let token = "";
    const [c] = await logged(201, async () => {
      const r = await call(s, "POST", "/api/v1/users/me/tokens/", { ...as(root), body: { name: "ci" } });
      token = r.json.token;
      return r;
    });
    secrets.push(token);
    expect(c).toMatchObject({ action: "token.create", target: { type: "token", name: "ci" } });
    const [d] = await logged(204, () =>
      call(s, "DELETE", `/api/v1/users/me/tokens/${c!.target.id}/`, as(root)),
    );
    expect(d).toMatchObject({ action: "token.revoke", target: { type: "token", id: c!.target.id } });
  });

  test("users, orgs and settings (instance admin)", async () => {
    const [u] = await logged(201, () =>
      call(s, "POST", "/api/v1/admin/users/", { ...as(root), body: { username: "ugo", password: PASSWORD } }),
    );
    expect(u).toMatchObject({
      action: "user.create",
      org_slug: null,
      target: { type: "user", name: "ugo" },
      changes: { after: { username: "ugo", is_admin: false, has_password: true } },
    });
    const o = await logged(201, () =>
      call(s, "POST", "/api/v1/admin/orgs/", { ...as(root), body: { org_slug: "beta" } }),
    );
    expect(o.map((e) => [e.action, e.org_slug, e.target.name])).toEqual([
      ["org.create", "beta", "beta"],
      ["member.add", "beta", "root"],
    ]);
    const [r] = await logged(200, () =>
      call(s, "PATCH", "/api/v1/orgs/beta/", { ...as(root), body: { name: "Beta" } }),
    );
    expect(r).toMatchObject({
      action: "org.update",
      changes: { before: { name: "beta" }, after: { name: "Beta" } },
    });
    for (const [verb, action] of [
      ["suspend", "org.suspend"],
      ["restore", "org.restore"],
    ] as const) {
      const [e] = await logged(200, () => call(s, "POST", `/api/v1/admin/orgs/beta/${verb}/`, as(root)));
      expect(e!.action).toBe(action);
    }
    const [del] = await logged(204, () => call(s, "DELETE", "/api/v1/admin/orgs/beta/", as(root)));
    expect(del).toMatchObject({ action: "org.delete", target: { type: "org", name: "beta" } });
    const [st] = await logged(200, () =>
      call(s, "PATCH", "/api/v1/admin/settings/", { ...as(root), body: { audit_retention_days: 400 } }),
    );
    expect(st).toMatchObject({
      action: "settings.update",
      target: { type: "settings" },
      changes: { before: { audit_retention_days: null }, after: { audit_retention_days: 400 } },
    });
    const [ud] = await logged(204, () => call(s, "DELETE", "/api/v1/admin/users/ugo/", as(root)));
    expect(ud).toMatchObject({ action: "user.delete", target: { type: "user", name: "ugo" } });
  });

  test("a request that changes nothing writes no entry", async () => {
    await s.user("noop", "acme", "viewer");
    const head = await headSeq();
    for (const [method, path, body, status] of [
      ["PATCH", "/api/v1/orgs/acme/members/noop/", { role: "viewer" }, 200],
      ["PATCH", "/api/v1/orgs/acme/", {}, 200],
      ["POST", "/api/v1/admin/orgs/acme/restore/", undefined, 200],
      ["PATCH", "/api/v1/admin/settings/", {}, 200],
    ] as const) {
      const r = await call(s, method, path, { ...as(root), body });
      expect({ path, status: r.status }).toEqual({ path, status });
    }
    expect(await headSeq()).toBe(head);
    // A real change still writes its one entry.
    const [e] = await logged(200, () =>
      call(s, "PATCH", "/api/v1/orgs/acme/members/noop/", { ...as(root), body: { role: "author" } }),
    );
    expect(e).toMatchObject({
      action: "member.update",
      changes: { before: { role: "viewer" }, after: { role: "author" } },
    });
  });

  test("a deleted user's memberships: one member.remove in each org's log", async () => {
    await s.user("uli");
    const added = await call(s, "POST", "/api/v1/orgs/acme/members/", {
      token: root,
      body: { username: "uli", role: "author" },
    });
    expect(added.status).toBe(201);
    const entries = await logged(204, () => call(s, "DELETE", "/api/v1/admin/users/uli/", as(root)));
    expect(entries.map((e) => [e.action, e.org_slug, e.target.type, e.target.name])).toEqual([
      ["user.delete", null, "user", "uli"],
      ["member.remove", "acme", "member", "uli"],
    ]);
    expect(entries[1]!.changes).toEqual({ before: { role: "author" }, reason: "user.delete" });
    const orgLog = await call(s, "GET", "/api/v1/orgs/acme/audit/?action=member.remove", { token: root });
    expect(orgLog.json.results[0]).toMatchObject({ action: "member.remove", target: { name: "uli" } });
  });

  test("sign-in successes and failures, sign-out and a password change", async () => {
    const w = await s.user("wes");
    await s.deps.users.setPassword(
      w.id,
      await Bun.password.hash(PASSWORD),
      (await import("../src/audit/actor.ts")).SYSTEM,
    );
    const login = (username: string, password: string) =>
      call(s, "POST", "/api/v1/auth/login/", { body: { username, password }, headers: PROXY });
    const [bad] = await logged(401, () => login("wes", "wrong password"));
    expect(bad).toMatchObject({
      action: "auth.login_failed",
      actor: { type: "anonymous", username: "wes", user_id: null, ip: "203.0.113.9" },
      target: { type: "user", id: String(w.id), name: "wes" },
      changes: { reason: "wrong_password" },
    });
    const [nobody] = await logged(401, () => login("nobody", "whatever"));
    expect(nobody).toMatchObject({
      action: "auth.login_failed",
      target: { id: null, name: "nobody" },
      changes: { reason: "unknown_user" },
    });
    let cookie = "";
    let csrf = "";
    const [ok] = await logged(200, async () => {
      const r = await login("wes", PASSWORD);
      cookie = /^assay_session=[^;]*/.exec(r.headers.get("set-cookie") ?? "")![0];
      csrf = r.json.csrf_token;
      return r;
    });
    secrets.push(cookie.split("=")[1]!, csrf);
    expect(ok).toMatchObject({
      action: "auth.login",
      actor: { type: "user", username: "wes", token_id: null },
    });
    expect(ok!.actor.session_id).toEqual(expect.any(Number));
    const session = { cookie, "x-csrf-token": csrf, ...PROXY };
    let renewed = "";
    const [pw] = await logged(204, async () => {
      const r = await call(s, "POST", "/api/v1/users/me/password/", {
        headers: session,
        body: { current_password: PASSWORD, new_password: "another long password" },
      });
      renewed = /^assay_session=[^;]*/.exec(r.headers.get("set-cookie") ?? "")![0];
      return r;
    });
    expect(pw).toMatchObject({ action: "user.password_change", actor: { session_id: ok!.actor.session_id } });
    // The browser's session was replaced by the change (one entry: the change itself).
    const now = await call(s, "GET", "/api/v1/auth/session/", { headers: { cookie: renewed } });
    secrets.push(renewed.split("=")[1]!, now.json.csrf_token);
    const [out] = await logged(204, () =>
      call(s, "POST", "/api/v1/auth/logout/", {
        headers: { cookie: renewed, "x-csrf-token": now.json.csrf_token, ...PROXY },
      }),
    );
    expect(out).toMatchObject({ action: "auth.logout", actor: { username: "wes" } });
    expect(out!.actor.session_id).toEqual(expect.any(Number));
    expect(out!.actor.session_id).not.toBe(ok!.actor.session_id);
  });

  test("run cancels", async () => {
    const gate = s.gates.gate();
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: root,
      raw: gate.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    await gate.held();
    const [c] = await logged(200, () =>
      call(s, "POST", `/api/v1/orgs/acme/runs/${r.json.id}/cancel/`, as(root)),
    );
    expect(c).toMatchObject({
      action: "run.cancel",
      target: { type: "run", id: r.json.id, name: "hold" },
      changes: { after: { status: "canceled" }, workflow_version: 1 },
    });
  });
});

describe("what is not logged", () => {
  test("reads write nothing", async () => {
    const before = await headSeq();
    for (const path of [
      "/api/v1/orgs/",
      "/api/v1/orgs/acme/",
      "/api/v1/orgs/acme/members/",
      "/api/v1/orgs/acme/workflows/",
      "/api/v1/orgs/acme/workflows/hold/",
      "/api/v1/orgs/acme/workflows/hold/versions/",
      "/api/v1/orgs/acme/workflows/hold/versions/1/",
      "/api/v1/orgs/acme/runs/",
      "/api/v1/orgs/acme/schemas/",
      "/api/v1/orgs/acme/webhooks/",
      "/api/v1/orgs/acme/audit/",
      "/api/v1/admin/audit/",
      "/api/v1/admin/users/",
      "/api/v1/admin/settings/",
      "/api/v1/users/me/",
      "/api/v1/users/me/tokens/",
    ]) {
      const r = await call(s, "GET", path, { token: root });
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
    }
    expect(await headSeq()).toBe(before);
  });
  test("refused changes write nothing (400, 403, 404, 409)", async () => {
    const viewer = (await s.user("vie", "acme", "viewer")).token;
    const before = await headSeq();
    const refused = [
      await call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: root, body: { slug: "Bad Slug" } }),
      await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
        token: viewer,
        body: { slug: "x", name: "x", allowed_file_types: ["JSON"] },
      }),
      await call(s, "DELETE", "/api/v1/orgs/acme/workflows/nope/", { token: root }),
      await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
        token: root,
        body: { slug: "hold", name: "h", allowed_file_types: ["JSON"] },
      }),
    ];
    expect(refused.map((r) => r.status)).toEqual([400, 403, 404, 409]);
    expect(await headSeq()).toBe(before);
  });
});

describe("secrets", () => {
  test("no token, webhook secret, password, session or CSRF secret in any entry", async () => {
    const rows = await s.sql<{ text: string }>("SELECT * FROM audit_log");
    const all = JSON.stringify(rows);
    expect(rows.length).toBeGreaterThan(30);
    for (const secret of [...secrets, PASSWORD, "another long password"])
      expect({ leaked: all.includes(secret), secret: secret.slice(0, 6) }).toEqual({
        leaked: false,
        secret: secret.slice(0, 6),
      });
    // A token's prefix (its public id, shown in token lists) is recorded; the token never is.
    expect(all).not.toMatch(/whsec_|\$argon2/);
    for (const k of ["secret", "previous_secret", "password", "password_hash", "digest", "csrf", "token"])
      expect(all).not.toContain(`\\"${k}\\"`);
  });
});

describe("from where, without a proxy", () => {
  test("a token's write records the socket's peer (read when the entry is written)", async () => {
    const plain = await startTestServer();
    try {
      const r = await call(plain, "POST", "/api/v1/orgs/acme/workflows/", {
        token: plain.rootToken,
        // A forwarded address from the client itself is not believed without trust_proxy.
        headers: PROXY,
        body: { slug: "peer", name: "Peer", allowed_file_types: ["JSON"] },
      });
      expect(r.status).toBe(201);
      const row = await plain.row<{ client_ip: string | null }>(
        "SELECT client_ip FROM audit_log WHERE action = ? ORDER BY seq DESC",
        "workflow.create",
      );
      expect(row?.client_ip).toBe("127.0.0.1");
    } finally {
      await plain.close();
    }
  });
});
