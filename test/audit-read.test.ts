// Reading the audit log (issue 24): filters, paging, CSV and JSON Lines export, who may read what
// (org Admin: the org's entries only; instance admin: everything), the head, and retention.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashOf } from "../src/audit/chain.ts";
import { rawRequest } from "./helpers/raw-http.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let root: string;
let adminA: string;
let adminB: string;
let authorA: string;
let viewerA: string;
let executorA: string;
const ORG_A = "/api/v1/orgs/acme/audit/";
const ORG_B = "/api/v1/orgs/beta/audit/";
const ADMIN = "/api/v1/admin/audit/";
type Entry = {
  seq: number;
  created_at: string;
  org_slug: string | null;
  action: string;
  actor: { username: string | null };
  target: { type: string; id: string | null; name: string | null };
};
const actions = (r: { json: { results: Entry[] } }) => r.json.results.map((e) => e.action);

beforeAll(async () => {
  s = await startTestServer();
  root = s.rootToken;
  adminA = (await s.user("ada", "acme", "admin")).token;
  authorA = (await s.user("aut", "acme", "author")).token;
  viewerA = (await s.user("vik", "acme", "viewer")).token;
  executorA = (await s.user("exe", "acme", "executor")).token;
  adminB = (await s.user("bob", "beta", "admin")).token;
  const wf = (slug: string) => ({ slug, name: slug, allowed_file_types: ["JSON"] });
  // In acme: two workflows by two people; in beta: one workflow.
  await call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: adminA, body: wf("a1") });
  await call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: authorA, body: wf("a2") });
  await call(s, "PATCH", "/api/v1/orgs/acme/workflows/a2/", { token: authorA, body: { name: "A two" } });
  await call(s, "POST", "/api/v1/orgs/beta/workflows/", { token: adminB, body: wf("b1") });
});
afterAll(() => s.close());

describe("who may read", () => {
  test("an org Admin reads the org's log; Author, Executor and Viewer get 403; no token 401", async () => {
    expect((await call(s, "GET", ORG_A, { token: adminA })).status).toBe(200);
    for (const [token, role] of [
      [authorA, "admin"],
      [executorA, "admin"],
      [viewerA, "admin"],
    ] as const) {
      const r = await call(s, "GET", ORG_A, { token });
      expect(r.json).toEqual(
        errorBody(403, "permission_denied", `This action needs the ${role} role or higher.`),
      );
    }
    const anon = await call(s, "GET", ORG_A);
    expect(anon.status).toBe(401);
    expect(anon.json.code).toBe("authentication_required");
  });
  test("only instance admins read the whole log and its head; an org Admin gets 403", async () => {
    for (const path of [ADMIN, `${ADMIN}head/`]) {
      expect((await call(s, "GET", path, { token: root })).status).toBe(200);
      const r = await call(s, "GET", path, { token: adminA });
      expect(r.json).toEqual(
        errorBody(403, "permission_denied", "This action needs an instance administrator."),
      );
    }
  });
  test("tenants: org A's admin never sees org B's entries, nor instance-wide ones", async () => {
    const a = await call(s, "GET", `${ORG_A}?page_size=100`, { token: adminA });
    expect(a.json.results.length).toBeGreaterThan(3);
    expect(new Set(a.json.results.map((e: Entry) => e.org_slug))).toEqual(new Set(["acme"]));
    const names = a.json.results.map((e: Entry) => e.target.name);
    expect(names).not.toContain("b1");
    expect(names).not.toContain("bob");
    // Asking for B's target by id from A's log finds nothing.
    const b1 = (await call(s, "GET", "/api/v1/orgs/beta/workflows/b1/", { token: adminB })).json.id;
    const probe = await call(s, "GET", `${ORG_A}?target_type=workflow&target_id=${b1}`, { token: adminA });
    expect(probe.json.results.map((e: Entry) => e.target.name)).not.toContain("b1");
    // A's admin is no member of B: 403, as for any of B's resources.
    const other = await call(s, "GET", ORG_B, { token: adminA });
    expect(other.json).toEqual(
      errorBody(403, "permission_denied", "You are not a member of this organization."),
    );
    const b = await call(s, "GET", `${ORG_B}?page_size=100`, { token: adminB });
    expect(new Set(b.json.results.map((e: Entry) => e.org_slug))).toEqual(new Set(["beta"]));
    // The instance admin sees both, and instance-wide entries (users, tokens) too.
    const all = await call(s, "GET", `${ADMIN}?page_size=100`, { token: root });
    const slugs = new Set(all.json.results.map((e: Entry) => e.org_slug));
    expect(slugs).toEqual(new Set(["acme", "beta", null]));
    const onlyB = await call(s, "GET", `${ADMIN}?org=beta&page_size=100`, { token: root });
    expect(onlyB.json.count).toBe(b.json.count);
    const unknown = await call(s, "GET", `${ADMIN}?org=nope`, { token: root });
    expect(unknown.json).toEqual(errorBody(404, "not_found", "Organization not found."));
  });
});

describe("filters and pages", () => {
  test("newest first, paged", async () => {
    const p1 = await call(s, "GET", `${ORG_A}?page_size=2`, { token: adminA });
    const p2 = await call(s, "GET", `${ORG_A}?page_size=2&page=2`, { token: adminA });
    const seqs = [...p1.json.results, ...p2.json.results].map((e: Entry) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => y - x));
    expect(p1.json.next).toContain("page=2");
    expect(p1.json.count).toBe(p2.json.count);
  });
  test("actor, action (exact or prefix), target type and id, combined", async () => {
    const byAut = await call(s, "GET", `${ORG_A}?actor=aut`, { token: adminA });
    expect(actions(byAut)).toEqual(["workflow.update", "workflow.create"]);
    const exact = await call(s, "GET", `${ORG_A}?action=workflow.create`, { token: adminA });
    expect(exact.json.results.map((e: Entry) => e.target.name)).toEqual(["a2", "a1"]);
    const prefix = await call(s, "GET", `${ORG_A}?action=workflow.*`, { token: adminA });
    expect(actions(prefix)).toEqual(["workflow.update", "workflow.create", "workflow.create"]);
    const members = await call(s, "GET", `${ORG_A}?target_type=member`, { token: adminA });
    expect(new Set(actions(members))).toEqual(new Set(["member.add"]));
    const a2 = (await call(s, "GET", "/api/v1/orgs/acme/workflows/a2/", { token: adminA })).json.id;
    const one = await call(s, "GET", `${ORG_A}?target_type=workflow&target_id=${a2}&action=workflow.update`, {
      token: adminA,
    });
    expect(one.json.count).toBe(1);
    expect(one.json.results[0].target).toEqual({ type: "workflow", id: String(a2), name: "a2" });
    const none = await call(s, "GET", `${ORG_A}?actor=nobody`, { token: adminA });
    expect(none.json).toMatchObject({ count: 0, results: [] });
  });
  test("time: created_after (inclusive) and created_before (exclusive)", async () => {
    const all = (await call(s, "GET", `${ORG_A}?page_size=100`, { token: adminA })).json.results as Entry[];
    const mid = all[Math.floor(all.length / 2)]!;
    const after = await call(s, "GET", `${ORG_A}?page_size=100&created_after=${mid.created_at}`, {
      token: adminA,
    });
    const before = await call(s, "GET", `${ORG_A}?page_size=100&created_before=${mid.created_at}`, {
      token: adminA,
    });
    expect(after.json.results.every((e: Entry) => e.created_at >= mid.created_at)).toBe(true);
    expect(before.json.results.every((e: Entry) => e.created_at < mid.created_at)).toBe(true);
    expect(after.json.count + before.json.count).toBe(all.length);
    const future = await call(s, "GET", `${ORG_A}?created_after=2999-01-01T00:00:00Z`, { token: adminA });
    expect(future.json.count).toBe(0);
    const far = (q: string) => call(s, "GET", `${ORG_A}?page_size=100&${q}`, { token: adminA });
    expect((await far("created_after=%2B010000-01-01T00:00:00Z")).json.count).toBe(0);
    expect((await far("created_before=%2B010000-01-01T00:00:00Z")).json.count).toBe(all.length);
  });
  test("bad filters: 400 naming each", async () => {
    const r = await call(s, "GET", `${ORG_A}?created_after=yesterday&format=xml&actor=`, { token: adminA });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "Invalid filters.", [
        { field: "actor", code: "invalid", message: "actor is 1 to 200 characters." },
        {
          field: "created_after",
          code: "invalid",
          message: "created_after must be an ISO 8601 date or date-time.",
        },
        { field: "format", code: "invalid", message: "format is json, csv or jsonl." },
      ]),
    );
  });
  test("a day the month lacks is no date: 400, not the next month's first day", async () => {
    for (const v of ["2026-11-31", "2026-02-29T00:00:00Z"]) {
      const r = await call(s, "GET", `${ORG_A}?created_before=${v}`, { token: adminA });
      expect({ v, status: r.status, body: r.json }).toEqual({
        v,
        status: 400,
        body: errorBody(400, "invalid_request", "Invalid filters.", [
          {
            field: "created_before",
            code: "invalid",
            message: "created_before must be an ISO 8601 date or date-time.",
          },
        ]),
      });
    }
    expect((await call(s, "GET", `${ORG_A}?created_before=2024-02-29`, { token: adminA })).status).toBe(200);
  });
});

describe("export", () => {
  test("JSON Lines: every matching entry, each line as the API shows it; the hashes recompute", async () => {
    const page = await call(s, "GET", `${ORG_A}?page_size=100`, { token: adminA });
    const r = await fetch(`${s.url}${ORG_A}?format=jsonl`, {
      headers: { authorization: `Bearer ${adminA}` },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/jsonl; charset=utf-8");
    expect(r.headers.get("content-disposition")).toMatch(/^attachment; filename="audit-acme-.*\.jsonl"$/);
    const lines = (await r.text())
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(page.json.results);
    // Anyone holding the export can check each entry's hash (docs/audit.md).
    for (const e of lines) {
      const row = {
        seq: e.seq,
        prev_hash: e.prev_hash,
        created_at: e.created_at,
        org_id: e.org_id,
        actor_type: e.actor.type,
        actor_user_id: e.actor.user_id,
        actor_username: e.actor.username,
        token_id: e.actor.token_id,
        session_id: e.actor.session_id,
        client_ip: e.actor.ip,
        action: e.action,
        target_type: e.target.type,
        target_id: e.target.id,
        target_name: e.target.name,
        changes: (await s.row<{ changes: string | null }>(
          "SELECT changes FROM audit_log WHERE seq = ?",
          e.seq,
        ))!.changes,
      };
      expect(hashOf(row)).toBe(e.hash);
    }
  });
  test("CSV with a header row, filters applied", async () => {
    const r = await fetch(`${s.url}${ORG_A}?format=csv&actor=aut`, {
      headers: { authorization: `Bearer ${adminA}` },
    });
    expect(r.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const rows = (await r.text()).trimEnd().split("\r\n");
    expect(rows[0]).toBe(
      "seq,created_at,org_id,org_slug,actor_type,actor_user_id,actor_username,token_id,session_id,client_ip,action,target_type,target_id,target_name,changes,prev_hash,hash",
    );
    expect(rows).toHaveLength(3);
    expect(rows.slice(1).map((l) => l.split(",")[10])).toEqual(["workflow.update", "workflow.create"]);
  });
  test("an empty export is the header alone; the instance export has every org", async () => {
    const r = await fetch(`${s.url}${ORG_A}?format=csv&actor=nobody`, {
      headers: { authorization: `Bearer ${adminA}` },
    });
    expect((await r.text()).split("\r\n").filter(Boolean)).toHaveLength(1);
    const all = await fetch(`${s.url}${ADMIN}?format=jsonl`, {
      headers: { authorization: `Bearer ${root}` },
    });
    const slugs = new Set(
      (await all.text())
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l).org_slug),
    );
    expect(slugs).toEqual(new Set(["acme", "beta", null]));
  });
  test("export needs the same role as reading", async () => {
    const r = await call(s, "GET", `${ORG_A}?format=csv`, { token: viewerA });
    expect(r.status).toBe(403);
  });
  test("HEAD of an export: GET's headers and framing (chunked, no Content-Length), and no entry read", async () => {
    // Until 2026-11-29 the framework ran the whole export for a HEAD to count its bytes (every
    // entry read and held), and said a Content-Length the streamed GET does not (src/http/head.ts).
    const port = Number(new URL(s.url).port);
    const ask = (method: string, path: string, token: string) =>
      rawRequest(
        port,
        `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
      );
    const same = (h: Record<string, string>) => {
      const { date, "x-request-id": id, "content-disposition": cd, ratelimit, ...rest } = h;
      return { ...rest, "content-disposition": cd?.replace(/-\d{4}-[\dT-]+Z\./, "-<stamp>.") };
    };
    for (const [path, token] of [
      [`${ORG_A}?format=csv`, adminA],
      [`${ORG_A}?format=jsonl&actor=aut`, adminA],
      [`${ADMIN}?format=csv`, root],
    ] as const) {
      const [get, head] = [await ask("GET", path, token), await ask("HEAD", path, token)];
      expect([get.status, head.status, head.body]).toEqual([200, 200, ""]);
      expect(get.headers["transfer-encoding"]).toBe("chunked");
      expect(same(head.headers)).toEqual(same(get.headers));
    }
    const denied = await ask("HEAD", `${ORG_A}?format=csv`, viewerA);
    expect(denied.status).toBe(403);
  });
});

describe("the head, exported", () => {
  test("the newest entry's seq and hash", async () => {
    const h = await call(s, "GET", `${ADMIN}head/`, { token: root });
    const newest = (await call(s, "GET", `${ADMIN}?page_size=1`, { token: root })).json.results[0];
    expect(h.json).toEqual({ seq: newest.seq, hash: newest.hash, created_at: newest.created_at });
  });
});

describe("retention (runs last: it removes entries)", () => {
  test("the setting purges old entries from the start of the chain and logs the purge", async () => {
    const set = await call(s, "PATCH", "/api/v1/admin/settings/", {
      token: root,
      body: { audit_retention_days: 30 },
    });
    expect(set.json.audit_retention_days).toBe(30);
    const bad = await call(s, "PATCH", "/api/v1/admin/settings/", {
      token: root,
      body: { audit_retention_days: 0 },
    });
    expect(bad.status).toBe(400);
    const total = await s.count("audit_log");
    const head = (await call(s, "GET", `${ADMIN}head/`, { token: root })).json;
    // Today's sweep removes nothing: every entry is younger than 30 days.
    await s.retention.sweep();
    expect(await s.count("audit_log")).toBe(total);
    // 31 days on, every entry is older than the retention.
    await s.retention.sweep(new Date(Date.now() + 31 * 86_400_000));
    const left = await call(s, "GET", `${ADMIN}?page_size=100`, { token: root });
    expect(left.json.results.map((e: { action: string }) => e.action)).toEqual(["audit.purge"]);
    expect(left.json.results[0]).toMatchObject({
      seq: head.seq + 1,
      actor: { type: "system" },
      changes: {
        after: { through_seq: head.seq, through_hash: head.hash, removed: total },
        retention_days: 30,
      },
    });
    // null keeps everything again.
    await call(s, "PATCH", "/api/v1/admin/settings/", { token: root, body: { audit_retention_days: null } });
    await s.retention.sweep(new Date(Date.now() + 3650 * 86_400_000));
    expect(await s.count("audit_log")).toBeGreaterThanOrEqual(2);
  });
});
