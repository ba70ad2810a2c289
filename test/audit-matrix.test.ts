// The audit matrix (docs/audit.md): every operation of the OpenAPI document that changes state,
// done once successfully and once in each way it is refused. A success writes exactly the
// documented entries, one after the other, naming the caller (user, token or session, address),
// the org and the target, with no secret in them; a refusal writes nothing (a failed sign-in writes
// its `auth.login_failed`, as documented). The operation list is read from the running server's
// OpenAPI document, so an operation added without a row here fails the first test. Beyond the
// table: the CLI's write commands and `assay init`, the first-run form, changes the server makes
// itself, no-op and repeated changes, writers in parallel (`assay audit verify` after them), and
// reading: filters that name nothing, a deleted org's and user's entries.
// Reading the log (filters, export, tenants): test/audit-read.test.ts; tampering: audit-verify.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { AUDIT_ACTIONS } from "../src/audit/types.ts";
import { testConfig } from "../src/config.ts";
import { openDb } from "../src/db/open.ts";
import { all } from "../src/db/program.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { runAssay } from "./helpers/cli.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, startEmptyServer, startTestServer } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";
import { eventually, startReceiver } from "./helpers/webhook-receiver.ts";

let s: TestServer;
let root: string;
let rootId: number;
let rootTokenId: number;
/** A Viewer of acme: every org-scoped write it tries is a 403. */
let viewer: string;
/** A user who is no instance admin: every admin write it tries is a 403. */
let plain: string;
const PASSWORD = "matrix audit password";
let passwordHash: string;
let n = 0;
const uniq = () => `${Date.now().toString(36)}${++n}`;

type Vals = Record<string, string>;
interface Req {
  method: string;
  path: string;
  body?: unknown;
  token?: string | null;
  headers?: Record<string, string>;
  raw?: string;
}
interface Entry {
  seq: number;
  action: string;
  actor: {
    type: string;
    user_id: number | null;
    username: string | null;
    token_id: number | null;
    session_id: number | null;
    ip: string | null;
  };
  target: { type: string; id: string | null; name: string | null };
  changes: Record<string, unknown> | null;
  org_slug: string | null;
}
/** An expected entry: action, org (null: instance-wide), target type and name. */
type Want = [action: string, org: string | null, targetType: string, targetName: string | null];
interface Refusal {
  status: number;
  code: string;
  prep?: () => Promise<Vals>;
  req: (v: Vals) => Req;
  /** Entries a refusal writes by design (a failed sign-in). */
  log?: Want[];
}
interface Op {
  ok: {
    status: number;
    prep?: () => Promise<Vals>;
    req: (v: Vals) => Req;
    log: (v: Vals) => Want[];
    /** The caller, if not root's token: a session, or nobody. */
    actor?: "session" | "anonymous";
    /** The first entry's `changes`, where the row checks them. */
    changes?: (v: Vals) => unknown;
  };
  refused: Refusal[];
}

const wfBody = (slug: string) => ({
  slug,
  name: `Workflow ${slug}`,
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
});
const make = {
  async workflow(): Promise<Vals> {
    const slug = `w-${uniq()}`;
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: root, body: wfBody(slug) });
    expect(r.status).toBe(201);
    return { wf: slug, step: String(r.json.steps[0].id), etag: r.headers.get("etag") ?? "" };
  },
  async workflowV2(): Promise<Vals> {
    const v = await make.workflow();
    const r = await call(s, "PATCH", `/api/v1/orgs/acme/workflows/${v.wf}/`, {
      token: root,
      body: { description: "second" },
    });
    expect(r.status).toBe(200);
    return v;
  },
  async user(role?: "viewer"): Promise<Vals> {
    const username = `u-${uniq()}`;
    await s.user(username, role && "acme", role);
    return { username };
  },
  async org(): Promise<Vals> {
    const slug = `o-${uniq()}`;
    await s.deps.orgs.addMember(await s.org(slug), rootId, "admin", SYSTEM);
    return { org: slug };
  },
  async schema(): Promise<Vals> {
    const r = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
      token: root,
      body: { uri: `urn:audit:${uniq()}`, schema: { type: "object" } },
    });
    expect(r.status).toBe(201);
    return { id: String(r.json.id), uri: r.json.uri };
  },
  async webhook(): Promise<Vals> {
    const r = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: root,
      body: { url: "https://1.1.1.1/audit-hook", is_active: false },
    });
    expect(r.status).toBe(201);
    const delivery = `msg_audit${uniq()}`;
    const at = new Date().toISOString();
    await s.sql(
      "INSERT INTO webhook_deliveries (id, webhook_id, event, payload, status, created_at, finished_at) VALUES (?, ?, 'ping', '{}', 'failed', ?, ?)",
      delivery,
      r.json.id,
      at,
      at,
    );
    return { id: String(r.json.id), delivery };
  },
  async token(): Promise<Vals> {
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", {
      token: root,
      body: { name: `t-${uniq()}` },
    });
    expect(r.status).toBe(201);
    return { id: String(r.json.id), name: r.json.name };
  },
  async heldRun(): Promise<Vals> {
    const gate = s.gates.gate();
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: root,
      raw: gate.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    await gate.held();
    return { run: r.json.id };
  },
  async finishedRun(): Promise<Vals> {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/plain/runs/", {
      token: root,
      raw: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(201);
    return { run: r.json.id };
  },
  /** A user with a password and a signed-in session (cookie and CSRF token). */
  async session(): Promise<Vals> {
    const { username } = await make.user();
    const u = (await s.deps.users.getByUsername(username))!;
    await s.deps.users.setPassword(u.id, passwordHash, SYSTEM);
    const r = await call(s, "POST", "/api/v1/auth/login/", { body: { username, password: PASSWORD } });
    expect(r.status).toBe(200);
    const cookie = /^assay_session=[^;]*/.exec(r.headers.get("set-cookie") ?? "")![0];
    return { username, cookie, csrf: r.json.csrf_token };
  },
};
const session = (v: Vals) => ({ cookie: v.cookie!, "x-csrf-token": v.csrf! });
const A = "/api/v1/orgs/acme";

// ─── The table ─────────────────────────────────────────────────────────────────────────────
// TO ADD AN OPERATION: one row keyed "METHOD /path" as the OpenAPI document names it: the success
// (its preparation, request, status and the entries it must write) and each refusal.
const OPS: Record<string, Op> = {
  "POST /api/v1/users/me/tokens/": {
    ok: {
      status: 201,
      req: () => ({ method: "POST", path: "/api/v1/users/me/tokens/", body: { name: "matrix-token" } }),
      log: () => [["token.create", null, "token", "matrix-token"]],
      changes: () => ({
        after: { name: "matrix-token", expires_at: null },
        owner: "root",
        owner_id: rootId,
        prefix: expect.stringMatching(/^assay_/),
      }),
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "POST", path: "/api/v1/users/me/tokens/", body: { name: "" } }),
      },
    ],
  },
  "DELETE /api/v1/users/me/tokens/{id}/": {
    ok: {
      status: 204,
      prep: make.token,
      req: (v) => ({ method: "DELETE", path: `/api/v1/users/me/tokens/${v.id}/` }),
      log: (v) => [["token.revoke", null, "token", v.name!]],
    },
    refused: [
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "DELETE", path: "/api/v1/users/me/tokens/999999/" }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "DELETE", path: "/api/v1/users/me/tokens/x/" }),
      },
    ],
  },
  "DELETE /api/v1/orgs/{org_slug}/": {
    ok: {
      status: 204,
      prep: make.org,
      req: (v) => ({ method: "DELETE", path: `/api/v1/orgs/${v.org}/` }),
      log: (v) => [["org.delete", v.org!, "org", v.org!]],
      changes: (v) => ({
        before: { slug: v.org, name: v.org!.toUpperCase(), status: "active", deleted_at: null },
        after: { deleted_at: expect.any(String) },
      }),
    },
    refused: [
      {
        status: 403,
        code: "permission_denied",
        req: () => ({ method: "DELETE", path: `${A}/`, token: viewer }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "DELETE", path: "/api/v1/orgs/no-such-org/" }),
      },
    ],
  },
  "PATCH /api/v1/orgs/{org_slug}/": {
    ok: {
      status: 200,
      prep: make.org,
      req: (v) => ({ method: "PATCH", path: `/api/v1/orgs/${v.org}/`, body: { name: "Renamed" } }),
      log: (v) => [["org.update", v.org!, "org", v.org!]],
      changes: (v) => ({ before: { name: v.org!.toUpperCase() }, after: { name: "Renamed" } }),
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "PATCH", path: `${A}/`, body: { name: 5 } }),
      },
      {
        status: 403,
        code: "permission_denied",
        req: () => ({ method: "PATCH", path: `${A}/`, token: viewer, body: { name: "X" } }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "PATCH", path: "/api/v1/orgs/no-such-org/", body: { name: "X" } }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/members/": {
    ok: {
      status: 201,
      prep: () => make.user(),
      req: (v) => ({ method: "POST", path: `${A}/members/`, body: { username: v.username, role: "viewer" } }),
      log: (v) => [["member.add", "acme", "member", v.username!]],
      changes: () => ({ after: { role: "viewer" } }),
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "POST", path: `${A}/members/`, body: { username: "root", role: "boss" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: () => make.user(),
        req: (v) => ({
          method: "POST",
          path: `${A}/members/`,
          token: viewer,
          body: { username: v.username, role: "viewer" },
        }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({
          method: "POST",
          path: "/api/v1/orgs/no-such-org/members/",
          body: { username: "root", role: "viewer" },
        }),
      },
      {
        status: 409,
        code: "conflict",
        req: () => ({ method: "POST", path: `${A}/members/`, body: { username: "root", role: "viewer" } }),
      },
    ],
  },
  "DELETE /api/v1/orgs/{org_slug}/members/{username}/": {
    ok: {
      status: 204,
      prep: () => make.user("viewer"),
      req: (v) => ({ method: "DELETE", path: `${A}/members/${v.username}/` }),
      log: (v) => [["member.remove", "acme", "member", v.username!]],
      changes: () => ({ before: { role: "viewer" } }),
    },
    refused: [
      {
        status: 403,
        code: "permission_denied",
        prep: () => make.user("viewer"),
        req: (v) => ({ method: "DELETE", path: `${A}/members/${v.username}/`, token: viewer }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "DELETE", path: `${A}/members/nobody-here/` }),
      },
      // The org's last Admin stays.
      {
        status: 409,
        code: "conflict",
        prep: make.org,
        req: (v) => ({ method: "DELETE", path: `/api/v1/orgs/${v.org}/members/root/` }),
      },
    ],
  },
  "PATCH /api/v1/orgs/{org_slug}/members/{username}/": {
    ok: {
      status: 200,
      prep: () => make.user("viewer"),
      req: (v) => ({ method: "PATCH", path: `${A}/members/${v.username}/`, body: { role: "author" } }),
      log: (v) => [["member.update", "acme", "member", v.username!]],
      changes: () => ({ before: { role: "viewer" }, after: { role: "author" } }),
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        prep: () => make.user("viewer"),
        req: (v) => ({ method: "PATCH", path: `${A}/members/${v.username}/`, body: { role: "boss" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: () => make.user("viewer"),
        req: (v) => ({
          method: "PATCH",
          path: `${A}/members/${v.username}/`,
          token: viewer,
          body: { role: "author" },
        }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "PATCH", path: `${A}/members/nobody-here/`, body: { role: "author" } }),
      },
      {
        status: 409,
        code: "conflict",
        prep: make.org,
        req: (v) => ({
          method: "PATCH",
          path: `/api/v1/orgs/${v.org}/members/root/`,
          body: { role: "viewer" },
        }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/workflows/": {
    ok: {
      status: 201,
      req: () => ({ method: "POST", path: `${A}/workflows/`, body: wfBody("made-here") }),
      log: () => [["workflow.create", "acme", "workflow", "made-here"]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "POST", path: `${A}/workflows/`, body: { ...wfBody("x"), slug: "Bad Slug" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        req: () => ({ method: "POST", path: `${A}/workflows/`, token: viewer, body: wfBody("x") }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "POST", path: "/api/v1/orgs/no-such-org/workflows/", body: wfBody("x") }),
      },
      {
        status: 409,
        code: "conflict",
        req: () => ({ method: "POST", path: `${A}/workflows/`, body: wfBody("hold") }),
      },
    ],
  },
  "PUT /api/v1/orgs/{org_slug}/workflows/{workflow}/": {
    ok: {
      status: 200,
      prep: make.workflow,
      req: (v) => ({
        method: "PUT",
        path: `${A}/workflows/${v.wf}/`,
        body: { ...wfBody(v.wf!), name: "Put" },
      }),
      log: (v) => [["workflow.update", "acme", "workflow", v.wf!]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        prep: make.workflow,
        req: (v) => ({ method: "PUT", path: `${A}/workflows/${v.wf}/`, body: { slug: v.wf } }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.workflow,
        req: (v) => ({ method: "PUT", path: `${A}/workflows/${v.wf}/`, token: viewer, body: wfBody(v.wf!) }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "PUT", path: `${A}/workflows/nope/`, body: wfBody("nope") }),
      },
      {
        status: 409,
        code: "conflict",
        prep: make.workflow,
        req: (v) => ({ method: "PUT", path: `${A}/workflows/${v.wf}/`, body: wfBody("hold") }),
      },
      {
        status: 412,
        code: "precondition_failed",
        prep: make.workflow,
        req: (v) => ({
          method: "PUT",
          path: `${A}/workflows/${v.wf}/`,
          headers: { "if-match": '"99"' },
          body: { ...wfBody(v.wf!), name: "P" },
        }),
      },
    ],
  },
  "DELETE /api/v1/orgs/{org_slug}/workflows/{workflow}/": {
    ok: {
      status: 204,
      prep: make.workflow,
      req: (v) => ({ method: "DELETE", path: `${A}/workflows/${v.wf}/` }),
      log: (v) => [["workflow.delete", "acme", "workflow", v.wf!]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        prep: make.workflow,
        req: (v) => ({ method: "DELETE", path: `${A}/workflows/${v.wf}/`, headers: { "if-match": "7" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.workflow,
        req: (v) => ({ method: "DELETE", path: `${A}/workflows/${v.wf}/`, token: viewer }),
      },
      { status: 404, code: "not_found", req: () => ({ method: "DELETE", path: `${A}/workflows/nope/` }) },
      {
        status: 412,
        code: "precondition_failed",
        prep: make.workflow,
        req: (v) => ({ method: "DELETE", path: `${A}/workflows/${v.wf}/`, headers: { "if-match": '"99"' } }),
      },
    ],
  },
  "PATCH /api/v1/orgs/{org_slug}/workflows/{workflow}/": {
    ok: {
      status: 200,
      prep: make.workflow,
      req: (v) => ({ method: "PATCH", path: `${A}/workflows/${v.wf}/`, body: { description: "patched" } }),
      log: (v) => [["workflow.update", "acme", "workflow", v.wf!]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        prep: make.workflow,
        req: (v) => ({ method: "PATCH", path: `${A}/workflows/${v.wf}/`, body: { status: "gone" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.workflow,
        req: (v) => ({
          method: "PATCH",
          path: `${A}/workflows/${v.wf}/`,
          token: viewer,
          body: { description: "x" },
        }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "PATCH", path: `${A}/workflows/nope/`, body: { description: "x" } }),
      },
      {
        status: 409,
        code: "conflict",
        prep: make.workflow,
        req: (v) => ({ method: "PATCH", path: `${A}/workflows/${v.wf}/`, body: { slug: "hold" } }),
      },
      {
        status: 412,
        code: "precondition_failed",
        prep: make.workflow,
        req: (v) => ({
          method: "PATCH",
          path: `${A}/workflows/${v.wf}/`,
          headers: { "if-match": '"99"' },
          body: { description: "x" },
        }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/workflows/{workflow}/steps/": {
    ok: {
      status: 201,
      prep: make.workflow,
      req: (v) => ({
        method: "POST",
        path: `${A}/workflows/${v.wf}/steps/`,
        body: { name: "more", validator: "syntax", config: {} },
      }),
      log: (v) => [["step.create", "acme", "workflow", v.wf!]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        prep: make.workflow,
        req: (v) => ({
          method: "POST",
          path: `${A}/workflows/${v.wf}/steps/`,
          body: { name: "more", validator: "no-such", config: {} },
        }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.workflow,
        req: (v) => ({
          method: "POST",
          path: `${A}/workflows/${v.wf}/steps/`,
          token: viewer,
          body: { name: "more", validator: "syntax", config: {} },
        }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({
          method: "POST",
          path: `${A}/workflows/nope/steps/`,
          body: { name: "more", validator: "syntax", config: {} },
        }),
      },
    ],
  },
  "DELETE /api/v1/orgs/{org_slug}/workflows/{workflow}/steps/{step_id}/": {
    ok: {
      status: 204,
      prep: make.workflow,
      req: (v) => ({ method: "DELETE", path: `${A}/workflows/${v.wf}/steps/${v.step}/` }),
      log: (v) => [["step.delete", "acme", "workflow", v.wf!]],
    },
    refused: [
      {
        status: 404,
        code: "not_found",
        prep: make.workflow,
        req: (v) => ({ method: "DELETE", path: `${A}/workflows/${v.wf}/steps/x/` }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.workflow,
        req: (v) => ({ method: "DELETE", path: `${A}/workflows/${v.wf}/steps/${v.step}/`, token: viewer }),
      },
      {
        status: 404,
        code: "not_found",
        prep: make.workflow,
        req: (v) => ({ method: "DELETE", path: `${A}/workflows/${v.wf}/steps/999999/` }),
      },
    ],
  },
  "PATCH /api/v1/orgs/{org_slug}/workflows/{workflow}/steps/{step_id}/": {
    ok: {
      status: 200,
      prep: make.workflow,
      req: (v) => ({
        method: "PATCH",
        path: `${A}/workflows/${v.wf}/steps/${v.step}/`,
        body: { name: "renamed" },
      }),
      log: (v) => [["step.update", "acme", "workflow", v.wf!]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        prep: make.workflow,
        req: (v) => ({ method: "PATCH", path: `${A}/workflows/${v.wf}/steps/${v.step}/`, body: { name: 5 } }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.workflow,
        req: (v) => ({
          method: "PATCH",
          path: `${A}/workflows/${v.wf}/steps/${v.step}/`,
          token: viewer,
          body: { name: "r" },
        }),
      },
      {
        status: 404,
        code: "not_found",
        prep: make.workflow,
        req: (v) => ({ method: "PATCH", path: `${A}/workflows/${v.wf}/steps/999999/`, body: { name: "r" } }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/workflows/{workflow}/versions/{version}/restore/": {
    ok: {
      status: 201,
      prep: make.workflowV2,
      req: (v) => ({ method: "POST", path: `${A}/workflows/${v.wf}/versions/1/restore/` }),
      log: (v) => [["workflow.restore", "acme", "workflow", v.wf!]],
    },
    refused: [
      {
        status: 404,
        code: "not_found",
        prep: make.workflowV2,
        req: (v) => ({ method: "POST", path: `${A}/workflows/${v.wf}/versions/x/restore/` }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.workflowV2,
        req: (v) => ({ method: "POST", path: `${A}/workflows/${v.wf}/versions/1/restore/`, token: viewer }),
      },
      {
        status: 404,
        code: "not_found",
        prep: make.workflowV2,
        req: (v) => ({ method: "POST", path: `${A}/workflows/${v.wf}/versions/9/restore/` }),
      },
      {
        status: 412,
        code: "precondition_failed",
        prep: make.workflowV2,
        req: (v) => ({
          method: "POST",
          path: `${A}/workflows/${v.wf}/versions/1/restore/`,
          headers: { "if-match": '"99"' },
        }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/schemas/": {
    ok: {
      status: 201,
      req: () => ({
        method: "POST",
        path: `${A}/schemas/`,
        body: { uri: "urn:audit:made", schema: { type: "object" } },
      }),
      log: () => [["schema.create", "acme", "schema", "urn:audit:made"]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "POST", path: `${A}/schemas/`, body: { uri: "urn:audit:bad" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        req: () => ({
          method: "POST",
          path: `${A}/schemas/`,
          token: viewer,
          body: { uri: "urn:audit:v", schema: {} },
        }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({
          method: "POST",
          path: "/api/v1/orgs/no-such-org/schemas/",
          body: { uri: "urn:audit:v", schema: {} },
        }),
      },
      {
        status: 409,
        code: "conflict",
        prep: make.schema,
        req: (v) => ({ method: "POST", path: `${A}/schemas/`, body: { uri: v.uri, schema: {} } }),
      },
    ],
  },
  "PUT /api/v1/orgs/{org_slug}/schemas/{id}/": {
    ok: {
      status: 200,
      prep: make.schema,
      req: (v) => ({
        method: "PUT",
        path: `${A}/schemas/${v.id}/`,
        body: { uri: v.uri, schema: { type: "string" } },
      }),
      log: (v) => [["schema.update", "acme", "schema", v.uri!]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        prep: make.schema,
        req: (v) => ({ method: "PUT", path: `${A}/schemas/${v.id}/`, body: { uri: v.uri } }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.schema,
        req: (v) => ({
          method: "PUT",
          path: `${A}/schemas/${v.id}/`,
          token: viewer,
          body: { uri: v.uri, schema: {} },
        }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({
          method: "PUT",
          path: `${A}/schemas/999999/`,
          body: { uri: "urn:audit:n", schema: {} },
        }),
      },
      {
        status: 409,
        code: "conflict",
        prep: async () => ({ ...(await make.schema()), other: (await make.schema()).uri! }),
        req: (v) => ({ method: "PUT", path: `${A}/schemas/${v.id}/`, body: { uri: v.other, schema: {} } }),
      },
    ],
  },
  "DELETE /api/v1/orgs/{org_slug}/schemas/{id}/": {
    ok: {
      status: 204,
      prep: make.schema,
      req: (v) => ({ method: "DELETE", path: `${A}/schemas/${v.id}/` }),
      log: (v) => [["schema.delete", "acme", "schema", v.uri!]],
    },
    refused: [
      { status: 404, code: "not_found", req: () => ({ method: "DELETE", path: `${A}/schemas/x/` }) },
      {
        status: 403,
        code: "permission_denied",
        prep: make.schema,
        req: (v) => ({ method: "DELETE", path: `${A}/schemas/${v.id}/`, token: viewer }),
      },
      { status: 404, code: "not_found", req: () => ({ method: "DELETE", path: `${A}/schemas/999999/` }) },
    ],
  },
  // Runs started are recorded as runs, not in the log (docs/audit.md).
  "POST /api/v1/orgs/{org_slug}/workflows/{workflow}/runs/": {
    ok: {
      status: 201,
      req: () => ({
        method: "POST",
        path: `${A}/workflows/plain/runs/`,
        raw: "{}",
        headers: { "content-type": "application/json" },
      }),
      log: () => [],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({
          method: "POST",
          path: `${A}/workflows/plain/runs/?version=x`,
          raw: "{}",
          headers: { "content-type": "application/json" },
        }),
      },
      {
        status: 403,
        code: "permission_denied",
        req: () => ({
          method: "POST",
          path: `${A}/workflows/plain/runs/`,
          token: viewer,
          raw: "{}",
          headers: { "content-type": "application/json" },
        }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({
          method: "POST",
          path: `${A}/workflows/nope/runs/`,
          raw: "{}",
          headers: { "content-type": "application/json" },
        }),
      },
      {
        status: 409,
        code: "workflow_version_unavailable",
        req: () => ({
          method: "POST",
          path: `${A}/workflows/plain/runs/?version=99`,
          raw: "{}",
          headers: { "content-type": "application/json" },
        }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/runs/{run_id}/cancel/": {
    ok: {
      status: 200,
      prep: make.heldRun,
      req: (v) => ({ method: "POST", path: `${A}/runs/${v.run}/cancel/` }),
      log: () => [["run.cancel", "acme", "run", "hold"]],
      changes: () => ({ before: { status: "running" }, after: { status: "canceled" }, workflow_version: 1 }),
    },
    refused: [
      {
        status: 403,
        code: "permission_denied",
        prep: make.finishedRun,
        req: (v) => ({ method: "POST", path: `${A}/runs/${v.run}/cancel/`, token: viewer }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "POST", path: `${A}/runs/00000000-0000-4000-8000-000000000000/cancel/` }),
      },
      {
        status: 409,
        code: "conflict",
        prep: make.finishedRun,
        req: (v) => ({ method: "POST", path: `${A}/runs/${v.run}/cancel/` }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/webhooks/": {
    ok: {
      status: 201,
      req: () => ({
        method: "POST",
        path: `${A}/webhooks/`,
        body: { url: "https://1.1.1.1/made", is_active: false },
      }),
      log: () => [["webhook.create", "acme", "webhook", "https://1.1.1.1/made"]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "POST", path: `${A}/webhooks/`, body: { url: "not a url" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        req: () => ({
          method: "POST",
          path: `${A}/webhooks/`,
          token: viewer,
          body: { url: "https://1.1.1.1/v" },
        }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({
          method: "POST",
          path: "/api/v1/orgs/no-such-org/webhooks/",
          body: { url: "https://1.1.1.1/v" },
        }),
      },
    ],
  },
  "DELETE /api/v1/orgs/{org_slug}/webhooks/{id}/": {
    ok: {
      status: 204,
      prep: make.webhook,
      req: (v) => ({ method: "DELETE", path: `${A}/webhooks/${v.id}/` }),
      log: () => [["webhook.delete", "acme", "webhook", "https://1.1.1.1/audit-hook"]],
    },
    refused: [
      { status: 404, code: "not_found", req: () => ({ method: "DELETE", path: `${A}/webhooks/x/` }) },
      {
        status: 403,
        code: "permission_denied",
        prep: make.webhook,
        req: (v) => ({ method: "DELETE", path: `${A}/webhooks/${v.id}/`, token: viewer }),
      },
      { status: 404, code: "not_found", req: () => ({ method: "DELETE", path: `${A}/webhooks/999999/` }) },
    ],
  },
  "PATCH /api/v1/orgs/{org_slug}/webhooks/{id}/": {
    ok: {
      status: 200,
      prep: make.webhook,
      req: (v) => ({ method: "PATCH", path: `${A}/webhooks/${v.id}/`, body: { events: ["run.failed"] } }),
      log: () => [["webhook.update", "acme", "webhook", "https://1.1.1.1/audit-hook"]],
      changes: () => ({ before: { events: ["run.completed"] }, after: { events: ["run.failed"] } }),
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        prep: make.webhook,
        req: (v) => ({ method: "PATCH", path: `${A}/webhooks/${v.id}/`, body: { url: "not a url" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.webhook,
        req: (v) => ({
          method: "PATCH",
          path: `${A}/webhooks/${v.id}/`,
          token: viewer,
          body: { is_active: false },
        }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "PATCH", path: `${A}/webhooks/999999/`, body: { is_active: false } }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/webhooks/{id}/rotate-secret/": {
    ok: {
      status: 200,
      prep: make.webhook,
      req: (v) => ({ method: "POST", path: `${A}/webhooks/${v.id}/rotate-secret/` }),
      log: () => [["webhook.rotate_secret", "acme", "webhook", "https://1.1.1.1/audit-hook"]],
    },
    refused: [
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "POST", path: `${A}/webhooks/x/rotate-secret/` }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.webhook,
        req: (v) => ({ method: "POST", path: `${A}/webhooks/${v.id}/rotate-secret/`, token: viewer }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "POST", path: `${A}/webhooks/999999/rotate-secret/` }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/webhooks/{id}/ping/": {
    ok: {
      status: 202,
      prep: async () => {
        const w = await make.webhook();
        const r = await call(s, "PATCH", `${A}/webhooks/${w.id}/`, {
          token: root,
          body: { is_active: true },
        });
        expect(r.status).toBe(200);
        return w;
      },
      req: (v) => ({ method: "POST", path: `${A}/webhooks/${v.id}/ping/` }),
      log: () => [["webhook.ping", "acme", "webhook", "https://1.1.1.1/audit-hook"]],
    },
    refused: [
      { status: 404, code: "not_found", req: () => ({ method: "POST", path: `${A}/webhooks/x/ping/` }) },
      {
        status: 403,
        code: "permission_denied",
        prep: make.webhook,
        req: (v) => ({ method: "POST", path: `${A}/webhooks/${v.id}/ping/`, token: viewer }),
      },
      { status: 404, code: "not_found", req: () => ({ method: "POST", path: `${A}/webhooks/999999/ping/` }) },
      {
        status: 409,
        code: "conflict",
        prep: make.webhook,
        req: (v) => ({ method: "POST", path: `${A}/webhooks/${v.id}/ping/` }),
      },
    ],
  },
  "POST /api/v1/orgs/{org_slug}/webhooks/{id}/deliveries/{delivery_id}/redeliver/": {
    ok: {
      status: 202,
      prep: async () => {
        const w = await make.webhook();
        const r = await call(s, "PATCH", `${A}/webhooks/${w.id}/`, {
          token: root,
          body: { is_active: true },
        });
        expect(r.status).toBe(200);
        return w;
      },
      req: (v) => ({ method: "POST", path: `${A}/webhooks/${v.id}/deliveries/${v.delivery}/redeliver/` }),
      log: () => [["webhook.redeliver", "acme", "webhook", "https://1.1.1.1/audit-hook"]],
      // Which delivery: the target is the webhook.
      changes: (v) => ({
        delivery_id: v.delivery,
        before: { status: "failed" },
        after: { status: "pending" },
      }),
    },
    refused: [
      {
        status: 403,
        code: "permission_denied",
        prep: make.webhook,
        req: (v) => ({
          method: "POST",
          path: `${A}/webhooks/${v.id}/deliveries/${v.delivery}/redeliver/`,
          token: viewer,
        }),
      },
      {
        status: 404,
        code: "not_found",
        prep: make.webhook,
        req: (v) => ({ method: "POST", path: `${A}/webhooks/${v.id}/deliveries/msg_none/redeliver/` }),
      },
      {
        status: 409,
        code: "conflict",
        prep: make.webhook,
        req: (v) => ({ method: "POST", path: `${A}/webhooks/${v.id}/deliveries/${v.delivery}/redeliver/` }),
      },
    ],
  },
  "POST /api/v1/admin/users/": {
    ok: {
      status: 201,
      req: () => ({
        method: "POST",
        path: "/api/v1/admin/users/",
        body: { username: "made-user", password: PASSWORD },
      }),
      log: () => [["user.create", null, "user", "made-user"]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "POST", path: "/api/v1/admin/users/", body: { username: "" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        req: () => ({
          method: "POST",
          path: "/api/v1/admin/users/",
          token: plain,
          body: { username: "x-user" },
        }),
      },
      {
        status: 409,
        code: "conflict",
        req: () => ({ method: "POST", path: "/api/v1/admin/users/", body: { username: "root" } }),
      },
    ],
  },
  "DELETE /api/v1/admin/users/{username}/": {
    ok: {
      status: 204,
      prep: () => make.user("viewer"),
      req: (v) => ({ method: "DELETE", path: `/api/v1/admin/users/${v.username}/` }),
      log: (v) => [
        ["user.delete", null, "user", v.username!],
        ["member.remove", "acme", "member", v.username!],
      ],
    },
    refused: [
      {
        status: 403,
        code: "permission_denied",
        prep: () => make.user(),
        req: (v) => ({ method: "DELETE", path: `/api/v1/admin/users/${v.username}/`, token: plain }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "DELETE", path: "/api/v1/admin/users/nobody-here/" }),
      },
      // The caller itself.
      { status: 409, code: "conflict", req: () => ({ method: "DELETE", path: "/api/v1/admin/users/root/" }) },
    ],
  },
  "POST /api/v1/admin/orgs/": {
    ok: {
      status: 201,
      req: () => ({ method: "POST", path: "/api/v1/admin/orgs/", body: { org_slug: "made-org" } }),
      log: () => [
        ["org.create", "made-org", "org", "made-org"],
        ["member.add", "made-org", "member", "root"],
      ],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "POST", path: "/api/v1/admin/orgs/", body: { org_slug: "Bad Slug" } }),
      },
      {
        status: 403,
        code: "permission_denied",
        req: () => ({
          method: "POST",
          path: "/api/v1/admin/orgs/",
          token: plain,
          body: { org_slug: "x-org" },
        }),
      },
      {
        status: 409,
        code: "conflict",
        req: () => ({ method: "POST", path: "/api/v1/admin/orgs/", body: { org_slug: "acme" } }),
      },
    ],
  },
  "DELETE /api/v1/admin/orgs/{org_slug}/": {
    ok: {
      status: 204,
      prep: make.org,
      req: (v) => ({ method: "DELETE", path: `/api/v1/admin/orgs/${v.org}/` }),
      log: (v) => [["org.delete", v.org!, "org", v.org!]],
      changes: (v) => ({
        before: { slug: v.org, name: v.org!.toUpperCase(), status: "active", deleted_at: null },
        after: { deleted_at: expect.any(String) },
      }),
    },
    refused: [
      {
        status: 403,
        code: "permission_denied",
        prep: make.org,
        req: (v) => ({ method: "DELETE", path: `/api/v1/admin/orgs/${v.org}/`, token: plain }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "DELETE", path: "/api/v1/admin/orgs/no-such-org/" }),
      },
    ],
  },
  "POST /api/v1/admin/orgs/{org_slug}/suspend/": {
    ok: {
      status: 200,
      prep: make.org,
      req: (v) => ({ method: "POST", path: `/api/v1/admin/orgs/${v.org}/suspend/` }),
      log: (v) => [["org.suspend", v.org!, "org", v.org!]],
    },
    refused: [
      {
        status: 403,
        code: "permission_denied",
        prep: make.org,
        req: (v) => ({ method: "POST", path: `/api/v1/admin/orgs/${v.org}/suspend/`, token: plain }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "POST", path: "/api/v1/admin/orgs/no-such-org/suspend/" }),
      },
      {
        status: 409,
        code: "conflict",
        prep: async () => {
          const v = await make.org();
          expect((await call(s, "DELETE", `/api/v1/orgs/${v.org}/`, { token: root })).status).toBe(204);
          return v;
        },
        req: (v) => ({ method: "POST", path: `/api/v1/admin/orgs/${v.org}/suspend/` }),
      },
    ],
  },
  "POST /api/v1/admin/orgs/{org_slug}/restore/": {
    ok: {
      status: 200,
      prep: async () => {
        const v = await make.org();
        expect((await call(s, "DELETE", `/api/v1/orgs/${v.org}/`, { token: root })).status).toBe(204);
        return v;
      },
      req: (v) => ({ method: "POST", path: `/api/v1/admin/orgs/${v.org}/restore/` }),
      log: (v) => [["org.restore", v.org!, "org", v.org!]],
    },
    refused: [
      {
        status: 403,
        code: "permission_denied",
        prep: make.org,
        req: (v) => ({ method: "POST", path: `/api/v1/admin/orgs/${v.org}/restore/`, token: plain }),
      },
      {
        status: 404,
        code: "not_found",
        req: () => ({ method: "POST", path: "/api/v1/admin/orgs/no-such-org/restore/" }),
      },
    ],
  },
  "PATCH /api/v1/admin/settings/": {
    ok: {
      status: 200,
      req: () => ({ method: "PATCH", path: "/api/v1/admin/settings/", body: { audit_retention_days: 4000 } }),
      log: () => [["settings.update", null, "settings", null]],
      changes: () => ({ before: { audit_retention_days: null }, after: { audit_retention_days: 4000 } }),
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "PATCH", path: "/api/v1/admin/settings/", body: { audit_retention_days: -1 } }),
      },
      {
        status: 403,
        code: "permission_denied",
        req: () => ({
          method: "PATCH",
          path: "/api/v1/admin/settings/",
          token: plain,
          body: { audit_retention_days: 5 },
        }),
      },
    ],
  },
  "POST /api/v1/auth/login/": {
    ok: {
      status: 200,
      actor: "session",
      prep: async () => {
        const v = await make.user();
        const u = (await s.deps.users.getByUsername(v.username!))!;
        await s.deps.users.setPassword(u.id, passwordHash, SYSTEM);
        return v;
      },
      req: (v) => ({
        method: "POST",
        path: "/api/v1/auth/login/",
        token: null,
        body: { username: v.username, password: PASSWORD },
      }),
      log: (v) => [["auth.login", null, "user", v.username!]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        req: () => ({ method: "POST", path: "/api/v1/auth/login/", token: null, body: { username: "" } }),
      },
      {
        status: 401,
        code: "authentication_required",
        req: () => ({
          method: "POST",
          path: "/api/v1/auth/login/",
          token: null,
          body: { username: "nobody-here", password: "x" },
        }),
        log: [["auth.login_failed", null, "user", "nobody-here"]],
      },
    ],
  },
  "POST /api/v1/auth/logout/": {
    ok: {
      status: 204,
      actor: "session",
      prep: make.session,
      req: (v) => ({ method: "POST", path: "/api/v1/auth/logout/", token: null, headers: session(v) }),
      log: (v) => [["auth.logout", null, "user", v.username!]],
    },
    refused: [
      {
        status: 403,
        code: "permission_denied",
        prep: make.session,
        req: (v) => ({
          method: "POST",
          path: "/api/v1/auth/logout/",
          token: null,
          headers: { cookie: v.cookie! },
        }),
      },
    ],
  },
  "POST /api/v1/users/me/password/": {
    ok: {
      status: 204,
      actor: "session",
      prep: make.session,
      req: (v) => ({
        method: "POST",
        path: "/api/v1/users/me/password/",
        token: null,
        headers: session(v),
        body: { current_password: PASSWORD, new_password: "matrix audit password 2" },
      }),
      log: (v) => [["user.password_change", null, "user", v.username!]],
    },
    refused: [
      {
        status: 400,
        code: "invalid_request",
        prep: make.session,
        req: (v) => ({
          method: "POST",
          path: "/api/v1/users/me/password/",
          token: null,
          headers: session(v),
          body: { current_password: "wrong one", new_password: "matrix audit password 3" },
        }),
      },
      {
        status: 403,
        code: "permission_denied",
        prep: make.session,
        req: (v) => ({
          method: "POST",
          path: "/api/v1/users/me/password/",
          token: null,
          headers: { cookie: v.cookie! },
          body: { current_password: PASSWORD, new_password: "matrix audit password 3" },
        }),
      },
    ],
  },
  // The first-run form: an instance with users refuses it (its success: "setup" below).
  "POST /api/v1/setup/": {
    ok: { status: 0, req: () => ({ method: "POST", path: "/api/v1/setup/" }), log: () => [] },
    refused: [
      {
        status: 409,
        code: "conflict",
        req: () => ({
          method: "POST",
          path: "/api/v1/setup/",
          token: null,
          body: { setup_code: "AAAA-AAAA", username: "x", password: "x", org_slug: "x" },
        }),
      },
    ],
  },
};

// ─── The run ───────────────────────────────────────────────────────────────────────────────
const headSeq = async () =>
  Number((await s.row<{ n: number }>("SELECT max(seq) AS n FROM audit_log"))?.n ?? 0);
async function since(seq: number): Promise<Entry[]> {
  const r = await call(s, "GET", "/api/v1/admin/audit/?page_size=100", { token: root });
  expect(r.status).toBe(200);
  return (r.json.results as Entry[]).filter((e) => e.seq > seq).reverse();
}
const send = (r: Req) =>
  call(s, r.method, r.path, {
    token: r.token === undefined ? root : r.token,
    body: r.body,
    raw: r.raw,
    headers: r.headers,
  });
const FORBIDDEN_KEYS = new Set([
  "password",
  "password_hash",
  "token",
  "digest",
  "secret",
  "previous_secret",
  "csrf",
]);
function keysOf(v: unknown, out: string[] = []): string[] {
  if (v && typeof v === "object")
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      keysOf(x, out);
    }
  return out;
}
/** Every secret a test saw (tokens, webhook secrets, cookies, CSRF tokens): none may be logged. */
const seen: string[] = [];

beforeAll(async () => {
  s = await startTestServer();
  root = s.rootToken;
  seen.push(root);
  rootId = (await s.deps.users.getByUsername("root"))!.id;
  rootTokenId = Number(
    (await s.row<{ id: number }>("SELECT id FROM api_tokens WHERE user_id = ? ORDER BY id", rootId))!.id,
  );
  viewer = (await s.user("matrix-viewer", "acme", "viewer")).token;
  plain = (await s.user("matrix-plain")).token;
  passwordHash = await Bun.password.hash(PASSWORD);
  await createWorkflow(s, root, HOLD_WORKFLOW);
  await createWorkflow(s, root, {
    slug: "plain",
    allowed_file_types: ["JSON"],
    steps: [{ name: "s", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

/** The operations of the OpenAPI document that change state, as "METHOD /path". */
async function writeOperations(): Promise<string[]> {
  const r = await call(s, "GET", "/api/v1/openapi.json");
  const ops: string[] = [];
  for (const [path, item] of Object.entries(r.json.paths as Record<string, Record<string, unknown>>))
    for (const m of Object.keys(item))
      if (["post", "put", "patch", "delete"].includes(m)) ops.push(`${m.toUpperCase()} ${path}`);
  return ops.sort();
}

describe("the matrix", () => {
  test("every operation that changes state has a row (and no row names a gone one)", async () => {
    expect(Object.keys(OPS).sort()).toEqual(await writeOperations());
  });

  for (const [op, row] of Object.entries(OPS)) {
    if (row.ok.status)
      test(`${op}: a success writes exactly its entries, contiguous, with who and where`, async () => {
        const v = (await row.ok.prep?.()) ?? {};
        const before = await headSeq();
        const r = await send(row.ok.req(v));
        expect({ op, status: r.status, body: r.text.slice(0, 400) }).toEqual({
          op,
          status: row.ok.status,
          body: expect.any(String),
        });
        for (const k of ["token", "secret"]) if (typeof r.json?.[k] === "string") seen.push(r.json[k]);
        const entries = await since(before);
        const want = row.ok.log(v);
        expect(entries.map((e) => [e.action, e.org_slug, e.target.type, e.target.name])).toEqual(want);
        // One request's entries follow each other.
        expect(entries.map((e) => e.seq)).toEqual(want.map((_, i) => before + 1 + i));
        if (row.ok.changes) expect(entries[0]!.changes).toEqual(row.ok.changes(v) as Record<string, unknown>);
        for (const e of entries) {
          expect(e.actor.ip).toBe("127.0.0.1");
          if (!row.ok.actor)
            expect(e.actor).toMatchObject({
              type: "user",
              user_id: rootId,
              username: "root",
              token_id: rootTokenId,
              session_id: null,
            });
          else
            expect(e.actor).toMatchObject({
              type: "user",
              username: v.username,
              token_id: null,
              session_id: expect.any(Number),
            });
          expect(keysOf(e.changes).filter((k) => FORBIDDEN_KEYS.has(k))).toEqual([]);
        }
      });
    test(`${op}: each refusal (${row.refused.map((x) => x.status).join(", ")}) writes nothing`, async () => {
      for (const x of row.refused) {
        const v = (await x.prep?.()) ?? {};
        const before = await headSeq();
        const r = await send(x.req(v));
        expect({ op, status: r.status, code: r.json?.code }).toEqual({ op, status: x.status, code: x.code });
        expect(r.json).toEqual(errorBody(x.status, x.code, expect.any(String), expect.any(Array)));
        const entries = await since(before);
        expect({
          op,
          status: x.status,
          logged: entries.map((e) => [e.action, e.org_slug, e.target.type, e.target.name]),
        }).toEqual({
          op,
          status: x.status,
          logged: x.log ?? [],
        });
      }
    });
  }
});

// The CLI's administration commands that write (CONTRACT §1), on the server's database: the actor
// is the operating-system account (type cli, no user, token or address); a refused command
// (exit 1) writes nothing. `set-password` reads stdin (test/cli.test.ts).
describe("the CLI", () => {
  const assay = (...args: string[]) => runAssay([...args, ...s.cliArgs]);
  test("each write command: exactly its entries, by the CLI; refusals write nothing", async () => {
    // The account by its user id, as `id -un` names it (not $USER, unset here).
    const account = Bun.spawnSync(["id", "-un"]).stdout.toString().trim();
    const slug = `cli-${uniq()}`;
    const user = `cli-u-${uniq()}`;
    const file = `${testTempDir("assay-audit-cli-")}/wf.json`;
    await Bun.write(file, JSON.stringify({ ...wfBody("cli-imported"), status: "active" }));
    // The same workflow imported again with another description: a replacement, not a creation.
    const changed = file.replace(/wf\.json$/, "wf-changed.json");
    await Bun.write(
      changed,
      JSON.stringify({ ...wfBody("cli-imported"), status: "active", description: "again" }),
    );
    const invalid = file.replace(/wf\.json$/, "wf-invalid.json");
    await Bun.write(invalid, JSON.stringify({ ...wfBody("cli-imported"), status: "weird" }));
    let tokenId = "";
    const rows: [args: () => string[], code: number, log: Want[]][] = [
      [() => ["users", "create", user], 0, [["user.create", null, "user", user]]],
      [() => ["users", "create", user], 1, []],
      [() => ["orgs", "create", slug], 0, [["org.create", slug, "org", slug]]],
      [() => ["orgs", "create", slug], 1, []],
      [() => ["members", "add", slug, user, "viewer"], 0, [["member.add", slug, "member", user]]],
      [() => ["members", "add", slug, user, "viewer"], 1, []],
      [() => ["members", "set-role", slug, user, "author"], 0, [["member.update", slug, "member", user]]],
      [() => ["members", "set-role", slug, "nobody-here", "author"], 1, []],
      [
        () => ["tokens", "create", user, "--name", "cli-token"],
        0,
        [["token.create", null, "token", "cli-token"]],
      ],
      [() => ["tokens", "revoke", tokenId], 0, [["token.revoke", null, "token", "cli-token"]]],
      [() => ["tokens", "revoke", "999999"], 1, []],
      [
        () => ["settings", "set", "audit_retention_days", "3650"],
        0,
        [["settings.update", null, "settings", null]],
      ],
      [() => ["settings", "set", "audit_retention_days", "-4"], 2, []],
      [() => ["workflows", "import", slug, file], 0, [["workflow.create", slug, "workflow", "cli-imported"]]],
      [() => ["workflows", "import", slug, file], 0, []],
      [
        () => ["workflows", "import", slug, changed],
        0,
        [["workflow.update", slug, "workflow", "cli-imported"]],
      ],
      [() => ["workflows", "import", slug, invalid], 1, []],
      [() => ["orgs", "suspend", slug], 0, [["org.suspend", slug, "org", slug]]],
      [() => ["orgs", "restore", slug], 0, [["org.restore", slug, "org", slug]]],
      [() => ["members", "remove", slug, user], 0, [["member.remove", slug, "member", user]]],
      [() => ["members", "remove", slug, user], 1, []],
      [() => ["orgs", "delete", slug], 0, [["org.delete", slug, "org", slug]]],
      [() => ["orgs", "suspend", slug], 1, []],
      [() => ["users", "delete", user], 0, [["user.delete", null, "user", user]]],
      [() => ["users", "delete", user], 1, []],
      [() => ["init", "--org", "x", "--admin", "x"], 1, []],
    ];
    for (const [args, code, want] of rows) {
      const before = await headSeq();
      const r = await assay(...args());
      expect({ args: args(), code: r.code }).toEqual({ args: args(), code });
      if (args()[0] === "tokens" && args()[1] === "create")
        tokenId = String((await s.row<{ id: number }>("SELECT max(id) AS id FROM api_tokens"))!.id);
      const entries = await since(before);
      expect({
        args: args(),
        log: entries.map((e) => [e.action, e.org_slug, e.target.type, e.target.name]),
      }).toEqual({
        args: args(),
        log: want,
      });
      expect(entries.map((e) => e.seq)).toEqual(want.map((_, i) => before + 1 + i));
      for (const e of entries)
        expect(e.actor).toEqual({
          type: "cli",
          user_id: null,
          username: account,
          token_id: null,
          session_id: null,
          ip: null,
        });
    }
  });
});

describe("the CLI with a password on stdin", () => {
  test("users create --password-stdin and set-password: by the CLI, the password in no entry", async () => {
    const { MAIN } = await import("./helpers/cli.ts");
    const withStdin = async (args: string[], input: string) => {
      const p = Bun.spawn([process.execPath, MAIN, ...args, ...s.cliArgs], {
        stdin: new TextEncoder().encode(input),
        stdout: "pipe",
        stderr: "pipe",
      });
      return { code: await p.exited, err: await new Response(p.stderr).text() };
    };
    const user = `pw-${uniq()}`;
    const before = await headSeq();
    expect(await withStdin(["users", "create", user, "--password-stdin"], `${PASSWORD} one\n`)).toEqual({
      code: 0,
      err: "",
    });
    expect(await withStdin(["users", "set-password", user, "--password-stdin"], `${PASSWORD} two\n`)).toEqual(
      {
        code: 0,
        err: "",
      },
    );
    const entries = await since(before);
    expect(entries.map((e) => [e.action, e.actor.type, e.target.name, e.changes])).toEqual([
      [
        "user.create",
        "cli",
        user,
        { after: { username: user, name: "", email: "", is_admin: false, has_password: true } },
      ],
      ["user.set_password", "cli", user, { after: { password_set: true } }],
    ]);
    expect(JSON.stringify(await s.sql("SELECT * FROM audit_log"))).not.toContain(PASSWORD);
  });
});

describe("changes the system makes", () => {
  test("a webhook the receiver asks to stop (410): one webhook.update by the system, with the reason", async () => {
    const w = await startTestServer({ webhook_allow_private: true });
    const rx = startReceiver();
    try {
      rx.respond(() => new Response("gone", { status: 410 }));
      const made = await call(w, "POST", "/api/v1/orgs/acme/webhooks/", {
        token: w.rootToken,
        body: { url: `${rx.url}/hook?key=abc`, events: ["ping"] },
      });
      expect(made.status).toBe(201);
      const before = Number((await w.row<{ n: number }>("SELECT max(seq) AS n FROM audit_log"))!.n);
      const ping = await call(w, "POST", `/api/v1/orgs/acme/webhooks/${made.json.id}/ping/`, {
        token: w.rootToken,
      });
      expect(ping.status).toBe(202);
      const off = await eventually(async () => {
        const r = await call(w, "GET", "/api/v1/admin/audit/?action=webhook.update", { token: w.rootToken });
        return r.json.results[0];
      });
      expect(off).toMatchObject({
        org_slug: "acme",
        actor: { type: "system", user_id: null, username: null, token_id: null, session_id: null, ip: null },
        action: "webhook.update",
        target: { type: "webhook", id: String(made.json.id), name: `${rx.url}/hook?key=***` },
        changes: {
          before: { is_active: true },
          after: { is_active: false },
          reason: expect.stringContaining("410 Gone"),
        },
      });
      // The ping's entry, then the deactivation: nothing else.
      const all = await call(w, "GET", "/api/v1/admin/audit/", { token: w.rootToken });
      expect(all.json.results.filter((e: Entry) => e.seq > before).map((e: Entry) => e.action)).toEqual([
        "webhook.update",
        "webhook.ping",
      ]);
      const v = await runAssay(["audit", "verify", ...w.cliArgs]);
      expect({ code: v.code, err: v.err }).toEqual({ code: 0, err: "" });
    } finally {
      await rx.stop();
      await w.close();
    }
  });
});

describe("the first run", () => {
  test("assay init: its user, org, membership and token, by the CLI; the token in no entry", async () => {
    const dir = testTempDir("assay-audit-init-");
    const pg = onPostgres ? await freshPgDatabase() : null;
    const where = pg ? ["--database-url", pg.url] : ["--data-dir", dir];
    try {
      const r = await runAssay(["init", "--org", "first", "--admin", "ada", ...where]);
      expect(r.code).toBe(0);
      const token = r.out.trim().split("\n").at(-1)!;
      const v = await runAssay(["audit", "verify", ...where]);
      expect(v.code).toBe(0);
      const db = await openDb(testConfig({ data_dir: dir, database_url: pg?.url ?? null }));
      try {
        const rows = await db.exec(
          all<{
            action: string;
            actor_type: string;
            actor_username: string;
            target_name: string;
            changes: string;
          }>("SELECT action, actor_type, actor_username, target_name, changes FROM audit_log ORDER BY seq"),
        );
        const account = Bun.spawnSync(["id", "-un"]).stdout.toString().trim();
        expect(rows.map((x) => [x.action, x.actor_type, x.actor_username, x.target_name])).toEqual([
          ["user.create", "cli", account, "ada"],
          ["org.create", "cli", account, "first"],
          ["member.add", "cli", account, "ada"],
          ["token.create", "cli", account, expect.any(String)],
        ]);
        expect(JSON.stringify(rows)).not.toContain(token);
      } finally {
        await db.close();
      }
    } finally {
      await pg?.drop();
    }
  });

  test("the setup form: its user, org and membership, by the anonymous caller from its address; a wrong code writes nothing", async () => {
    const e = await startEmptyServer();
    try {
      const form = { setup_code: e.setupCode, username: "ada", password: PASSWORD, org_slug: "first" };
      const wrong = await call(e, "POST", "/api/v1/setup/", { body: { ...form, setup_code: "AAAA-AAAA" } });
      expect(wrong.status).toBe(400);
      const r = await call(e, "POST", "/api/v1/setup/", { body: form });
      expect(r.status).toBe(201);
      const cookie = /^assay_session=[^;]*/.exec(r.headers.get("set-cookie") ?? "")![0];
      const log = await call(e, "GET", "/api/v1/admin/audit/", { headers: { cookie } });
      expect(log.status).toBe(200);
      const entries = (log.json.results as Entry[]).reverse();
      expect(entries.map((x) => [x.seq, x.action, x.org_slug, x.target.type, x.target.name])).toEqual([
        [1, "user.create", null, "user", "ada"],
        [2, "org.create", "first", "org", "first"],
        [3, "member.add", "first", "member", "ada"],
        [4, "auth.login", null, "user", "ada"],
      ]);
      for (const x of entries.slice(0, 3))
        expect(x.actor).toEqual({
          type: "anonymous",
          user_id: null,
          username: "ada",
          token_id: null,
          session_id: null,
          ip: "127.0.0.1",
        });
      expect(keysOf(entries.map((x) => x.changes)).filter((k) => FORBIDDEN_KEYS.has(k))).toEqual([]);
      expect(JSON.stringify(entries)).not.toContain(PASSWORD);
    } finally {
      await e.close();
    }
  });
});

describe("reading it: filters", () => {
  test("a target_type or action that names none is a 400, not an empty page; every entry's is one of them", async () => {
    for (const path of ["/api/v1/admin/audit/", `${A}/audit/`, "/api/v1/admin/audit/?format=csv&"]) {
      const r = await call(s, "GET", `${path}${path.endsWith("&") ? "" : "?"}target_type=workflows`, {
        token: root,
      });
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", "Invalid filters.", [
          {
            field: "target_type",
            code: "invalid",
            message:
              "target_type is one of workflow, member, token, user, org, webhook, run, schema, settings, audit_log.",
          },
        ]),
      );
    }
    const typo = await call(s, "GET", `${A}/audit/?action=workflow.updated&target_type=workflow`, {
      token: root,
    });
    expect(typo.json).toEqual(
      errorBody(400, "invalid_request", "Invalid filters.", [
        {
          field: "action",
          code: "invalid",
          message:
            "action is an action such as workflow.update (docs/audit.md), or a kind such as workflow.*; kinds: workflow, step, schema, webhook, member, token, user, org, settings, auth, run, audit.",
        },
      ]),
    );
    for (const action of ["workflow.update", "workflow.*", "workflow.", "auth.*"]) {
      const r = await call(s, "GET", `/api/v1/admin/audit/?action=${action}`, { token: root });
      expect({ action, status: r.status }).toEqual({ action, status: 200 });
    }
    for (const action of ["workflows.*", "*", ".*", "workflow", "workflow.update.*"]) {
      const r = await call(s, "GET", `/api/v1/admin/audit/?action=${action}`, { token: root });
      expect({ action, status: r.status, field: r.json.errors?.[0]?.field }).toEqual({
        action,
        status: 400,
        field: "action",
      });
    }
    // The actions the filter knows are those docs/audit.md lists, and every entry written is one.
    const doc = await Bun.file(`${import.meta.dir}/../docs/audit.md`).text();
    const table = doc.slice(doc.indexOf("| Kind | Actions |"), doc.indexOf("Runs started are not logged"));
    const documented = [...table.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1]);
    expect([...documented].sort()).toEqual([...AUDIT_ACTIONS].sort());
    const written = await s.sql<{ a: string }>("SELECT DISTINCT action AS a FROM audit_log");
    for (const { a } of written)
      expect({ a, known: (AUDIT_ACTIONS as readonly string[]).includes(a) }).toEqual({ a, known: true });
    const types = await s.sql<{ t: string }>("SELECT DISTINCT target_type AS t FROM audit_log");
    for (const { t } of types) {
      const r = await call(s, "GET", `/api/v1/admin/audit/?target_type=${t}&page_size=1`, { token: root });
      expect({ t, status: r.status, count: r.json.count > 0 }).toEqual({ t, status: 200, count: true });
    }
  });
});

describe("reading it after deletions", () => {
  test("a deleted org's and a deleted user's entries stay readable with the names they had", async () => {
    const org = `gone-${uniq()}`;
    const made = await call(s, "POST", "/api/v1/admin/orgs/", {
      token: root,
      body: { org_slug: org, name: "Gone Inc" },
    });
    expect(made.status).toBe(201);
    const u = await s.user(`leaver-${uniq()}`, org, "author");
    const username = (await s.row<{ username: string }>("SELECT username FROM users WHERE id = ?", u.id))!
      .username;
    for (const slug of ["one", "two", "three"])
      expect(
        (await call(s, "POST", `/api/v1/orgs/${org}/workflows/`, { token: u.token, body: wfBody(slug) }))
          .status,
      ).toBe(201);
    expect((await call(s, "DELETE", `/api/v1/admin/users/${username}/`, { token: root })).status).toBe(204);
    expect((await call(s, "DELETE", `/api/v1/admin/orgs/${org}/`, { token: root })).status).toBe(204);
    // By org and actor, paged: the next page keeps the filters.
    const first = await call(s, "GET", `/api/v1/admin/audit/?org=${org}&actor=${username}&page_size=2`, {
      token: root,
    });
    expect(first.status).toBe(200);
    expect(first.json.count).toBe(3);
    expect(
      first.json.results.map((e: Entry) => [
        e.action,
        e.org_slug,
        e.actor.username,
        e.actor.user_id,
        e.target.name,
      ]),
    ).toEqual([
      ["workflow.create", org, username, u.id, "three"],
      ["workflow.create", org, username, u.id, "two"],
    ]);
    const next = await call(s, "GET", new URL(first.json.next).pathname + new URL(first.json.next).search, {
      token: root,
    });
    expect(next.json.results.map((e: Entry) => e.target.name)).toEqual(["one"]);
    const all = await call(s, "GET", `/api/v1/admin/audit/?org=${org}`, { token: root });
    expect(all.json.results.map((e: Entry) => [e.action, e.org_slug, e.target.name]).reverse()).toEqual([
      ["org.create", org, org],
      ["member.add", org, "root"],
      ["member.add", org, username],
      ["workflow.create", org, "one"],
      ["workflow.create", org, "two"],
      ["workflow.create", org, "three"],
      ["member.remove", org, username],
      ["org.delete", org, org],
    ]);
    // The deletion records the org as it was, name included.
    expect(all.json.results[0].changes).toEqual({
      before: { slug: org, name: "Gone Inc", status: "active", deleted_at: null },
      after: { deleted_at: expect.any(String) },
    });
    const exported = await call(s, "GET", `/api/v1/admin/audit/?org=${org}&format=jsonl`, { token: root });
    expect(
      exported.text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).org_slug),
    ).toEqual(Array(8).fill(org));
    // The deleted user's own entry keeps its name.
    const gone = await call(s, "GET", `/api/v1/admin/audit/?action=user.delete&target_id=${u.id}`, {
      token: root,
    });
    expect(gone.json.results.map((e: Entry) => [e.target.name, e.changes?.before])).toEqual([
      [username, { username, name: "", email: "", is_admin: false }],
    ]);
  });
});

describe("without valid credentials", () => {
  test("every operation that needs a caller: 401 with a bogus token, nothing written", async () => {
    const any = new Proxy({} as Vals, { get: () => "1" });
    let checked = 0;
    for (const [op, row] of Object.entries(OPS)) {
      const req = row.ok.req(any);
      if (req.token === null || op === "POST /api/v1/setup/") continue; // public: sign-in, sign-out, session routes
      const before = await headSeq();
      const r = await send({ ...req, token: "assay_bogusbogusbogusbogusbogus" });
      expect({ op, status: r.status, code: r.json?.code }).toEqual({
        op,
        status: 401,
        code: "authentication_required",
      });
      expect({ op, head: await headSeq() }).toEqual({ op, head: before });
      checked++;
    }
    expect(checked).toBe(Object.keys(OPS).length - 4);
  });
});

describe("beyond one request", () => {
  test("an idempotent replay of a run logs nothing, nor does the run", async () => {
    const before = await headSeq();
    const req = {
      token: root,
      raw: "{}",
      headers: { "content-type": "application/json", "idempotency-key": `k-${uniq()}` },
    };
    const a = await call(s, "POST", `${A}/workflows/plain/runs/`, req);
    const b = await call(s, "POST", `${A}/workflows/plain/runs/`, req);
    expect([a.status, b.status, b.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"]);
    expect(await headSeq()).toBe(before);
  });

  test("a workflow renamed: its entry and one webhook.update per webhook whose filter names it, together", async () => {
    const w = await make.workflow();
    // One after the other: the entries name them in id order.
    const hooks = [];
    for (const _ of [1, 2])
      hooks.push(
        await call(s, "POST", `${A}/webhooks/`, {
          token: root,
          body: { url: "https://1.1.1.1/renamed", is_active: false, workflow_slugs: [w.wf] },
        }),
      );
    expect(hooks.map((h) => h.status)).toEqual([201, 201]);
    const before = await headSeq();
    const r = await call(s, "PATCH", `${A}/workflows/${w.wf}/`, {
      token: root,
      body: { slug: `${w.wf}-new` },
    });
    expect(r.status).toBe(200);
    const entries = await since(before);
    expect(
      entries.map((e) => [e.seq, e.action, e.target.type, e.target.id, e.changes?.reason ?? null]),
    ).toEqual([
      [before + 1, "webhook.update", "webhook", String(hooks[0]!.json.id), "workflow.rename"],
      [before + 2, "webhook.update", "webhook", String(hooks[1]!.json.id), "workflow.rename"],
      [before + 3, "workflow.update", "workflow", expect.any(String), null],
    ]);
    expect(entries[0]!.changes).toMatchObject({
      before: { workflow_slugs: [w.wf] },
      after: { workflow_slugs: [`${w.wf}-new`] },
    });
  });

  test("a write in a web session names the session, not a token", async () => {
    const v = await make.session();
    const u = (await s.deps.users.getByUsername(v.username!))!;
    await s.deps.orgs.addMember(await s.org("acme"), u.id, "author", SYSTEM);
    const sessionId = Number(
      (await s.row<{ id: number }>("SELECT max(id) AS id FROM web_sessions WHERE user_id = ?", u.id))!.id,
    );
    const before = await headSeq();
    const r = await call(s, "POST", `${A}/workflows/`, {
      headers: session(v),
      body: wfBody(`sess-${uniq()}`),
    });
    expect(r.status).toBe(201);
    const [e, ...rest] = await since(before);
    expect(rest).toEqual([]);
    expect(e!.actor).toEqual({
      type: "user",
      user_id: u.id,
      username: v.username,
      token_id: null,
      session_id: sessionId,
      ip: "127.0.0.1",
    });
  });

  test("no-op changes write nothing", async () => {
    const w = await make.workflow();
    const m = await make.user("viewer");
    const h = await make.webhook();
    const before = await headSeq();
    for (const [method, path, body] of [
      ["PATCH", `${A}/workflows/${w.wf}/`, {}],
      ["PATCH", `${A}/workflows/${w.wf}/steps/${w.step}/`, {}],
      ["PATCH", `${A}/members/${m.username}/`, { role: "viewer" }],
      ["PATCH", `${A}/`, {}],
      ["POST", "/api/v1/admin/orgs/acme/restore/", undefined],
      ["PATCH", "/api/v1/admin/settings/", {}],
      // The same definition again (workflows as code, applied twice).
      ["PUT", `${A}/workflows/${w.wf}/`, wfBody(w.wf!)],
      // Onto the version it already equals.
      ["POST", `${A}/workflows/${w.wf}/versions/1/restore/`, undefined],
      ["PATCH", `${A}/webhooks/${h.id}/`, { is_active: false }],
    ] as const) {
      const r = await call(s, method, path, { token: root, body });
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
    }
    expect(await headSeq()).toBe(before);
    // Again what was done already: a token revoked twice, an org suspended twice.
    const tk = await make.token();
    const o = await make.org();
    for (const [method, path, status] of [
      ["DELETE", `/api/v1/users/me/tokens/${tk.id}/`, 204],
      ["POST", `/api/v1/admin/orgs/${o.org}/suspend/`, 200],
    ] as const) {
      expect((await call(s, method, path, { token: root })).status).toBe(status);
      const once = await headSeq();
      const r = await call(s, method, path, { token: root });
      expect({ path, status: r.status, head: await headSeq() }).toEqual({ path, status, head: once });
    }
  });

  test("parallel writers of every kind: each request's entries contiguous, the chain verifies", async () => {
    const orgs = await Promise.all([1, 2, 3].map(() => make.org()));
    const users = await Promise.all([1, 2, 3].map(() => make.user("viewer")));
    const wfs = await Promise.all([1, 2, 3].map(() => make.workflow()));
    const joiners = await Promise.all([1, 2, 3].map(() => make.user()));
    const held = await Promise.all([1, 2].map(() => make.heldRun()));
    const before = await headSeq();
    const results = await Promise.all([
      ...users.map((u) => call(s, "DELETE", `/api/v1/admin/users/${u.username}/`, { token: root })),
      ...orgs.map((o, i) =>
        call(s, "POST", "/api/v1/admin/orgs/", { token: root, body: { org_slug: `${o.org}-p${i}` } }),
      ),
      ...wfs.map((w) =>
        call(s, "PATCH", `${A}/workflows/${w.wf}/`, { token: root, body: { description: "parallel" } }),
      ),
      ...wfs.map((w) =>
        call(s, "POST", `${A}/workflows/${w.wf}/steps/`, {
          token: root,
          body: { name: "p", validator: "syntax", config: {} },
        }),
      ),
      ...[1, 2, 3].map(() =>
        call(s, "POST", "/api/v1/users/me/tokens/", { token: root, body: { name: "parallel" } }),
      ),
      ...[1, 2, 3].map(() =>
        call(s, "POST", `${A}/workflows/plain/runs/`, {
          token: root,
          raw: "{}",
          headers: { "content-type": "application/json" },
        }),
      ),
      ...[1, 2, 3].map((i) =>
        call(s, "POST", `${A}/schemas/`, {
          token: root,
          body: { uri: `urn:parallel:${uniq()}${i}`, schema: {} },
        }),
      ),
      ...[1, 2, 3].map(() =>
        call(s, "POST", `${A}/webhooks/`, {
          token: root,
          body: { url: "https://1.1.1.1/p", is_active: false },
        }),
      ),
      ...joiners.map((u) =>
        call(s, "POST", `${A}/members/`, { token: root, body: { username: u.username, role: "viewer" } }),
      ),
      ...held.map((h) => call(s, "POST", `${A}/runs/${h.run}/cancel/`, { token: root })),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      ...Array(3).fill(204),
      ...Array(3).fill(201),
      ...Array(3).fill(200),
      ...Array(18).fill(201),
      ...Array(2).fill(200),
    ]);
    const entries = await since(before);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => before + 1 + i));
    expect(entries.length).toBe(3 * 2 + 3 * 2 + 3 + 3 + 3 + 3 + 3 + 3 + 2);
    // A user's delete and its member.remove, an org's create and its member.add: side by side.
    for (const [i, e] of entries.entries()) {
      if (e.action === "user.delete")
        expect([entries[i + 1]?.action, entries[i + 1]?.target.name]).toEqual([
          "member.remove",
          e.target.name,
        ]);
      if (e.action === "org.create")
        expect([entries[i + 1]?.action, entries[i + 1]?.org_slug]).toEqual(["member.add", e.org_slug]);
    }
    const v = await runAssay(["audit", "verify", ...s.cliArgs]);
    expect({ code: v.code, err: v.err }).toEqual({ code: 0, err: "" });
    expect(v.out).toStartWith("Intact: ");
  });

  // On PostgreSQL a token's creation locked its owner's row FOR UPDATE, which waits for the
  // key-share lock of every foreign key naming the user (a workflow version it saves): tokens
  // created while their owner saved workflows deadlocked, a 503 (found by the test above).
  test("tokens created while their owner saves workflows: every request succeeds, each logged once", async () => {
    const wfs = await Promise.all([1, 2, 3].map(() => make.workflow()));
    const before = await headSeq();
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all([
        ...[1, 2, 3].map(() =>
          call(s, "POST", "/api/v1/users/me/tokens/", { token: root, body: { name: "racing" } }),
        ),
        ...wfs.map((w, i) =>
          call(s, "PATCH", `${A}/workflows/${w.wf}/`, {
            token: root,
            body: { description: `${round} ${i}` },
          }),
        ),
      ]);
      expect({ round, statuses: results.map((r) => r.status) }).toEqual({
        round,
        statuses: [201, 201, 201, 200, 200, 200],
      });
    }
    const entries = await call(s, "GET", `/api/v1/admin/audit/?page_size=100`, { token: root });
    const mine = (entries.json.results as Entry[]).filter((e) => e.seq > before);
    expect(mine.length).toBe(60);
    expect(mine.filter((e) => e.action === "token.create").length).toBe(30);
  });

  test("no secret the test saw is in any stored entry", async () => {
    const all = JSON.stringify(await s.sql("SELECT * FROM audit_log"));
    for (const x of seen)
      expect({ leaked: all.includes(x), x: x.slice(0, 6) }).toEqual({ leaked: false, x: x.slice(0, 6) });
    expect(all).not.toMatch(/whsec_|\$argon2|assay_session=/);
  });
});
