// A retry with the same Idempotency-Key and the same request gets the first answer whatever
// happened since, as long as the key is kept (docs/decisions.md, "Idempotency keys"): the
// workflow deleted, its slug taken by a new one, the caller now a Viewer. What a GET of the run
// would refuse (removed from the org, the org suspended, the token revoked) the replay refuses
// the same way. On one thread and on two HTTP threads, each by the lane (a plain run path:
// src/http/threads/lane.ts) and by the framework (a query string), with the same answers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { fresh, via } from "./helpers/threads.ts";

let one: TestServer;
let two: TestServer;
let oneApp: TestServer;
let twoApp: TestServer;
const JSON_CT = { "content-type": "application/json" };
const WF = (slug: string) => ({
  slug,
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
});
const REPLAYED = "idempotent-replayed";

beforeAll(async () => {
  [one, two, oneApp, twoApp] = await Promise.all([
    startTestServer(),
    startTestServer({ http_threads: 2 }),
    startTestServer(),
    startTestServer({ http_threads: 2 }),
  ]);
});
afterAll(() => Promise.all([one, two, oneApp, twoApp].map((s) => s?.close())));

describe.each([
  ["one thread, the lane", () => one, ""],
  ["two HTTP threads, the lane", () => two, ""],
  ["one thread, the framework", () => oneApp, "?via=app"],
  ["two HTTP threads, the framework", () => twoApp, "?via=app"],
])("%s", (_name, server, query) => {
  const runs = (wf: string, org = "acme") => `/api/v1/orgs/${org}/workflows/${wf}/runs/${query}`;
  const post = (
    s: TestServer,
    wf: string,
    token: string,
    key: string | null,
    raw = '{"id":1}',
    org = "acme",
  ) =>
    call(
      s,
      "POST",
      runs(wf, org),
      fresh({ token, raw, headers: key === null ? JSON_CT : { ...JSON_CT, "idempotency-key": key } }),
    );
  const del = (s: TestServer, wf: string) =>
    call(s, "DELETE", `/api/v1/orgs/acme/workflows/${wf}/`, { token: s.rootToken });

  test("the workflow deleted: the retry replays; another body or no key gets the 404", async () => {
    const s = server();
    const { token } = await s.user("del-exec", "acme", "executor");
    await createWorkflow(s, s.rootToken, WF("del-wf"));
    const a = await post(s, "del-wf", token, "k-del");
    expect(a.status).toBe(201);
    expect((await del(s, "del-wf")).status).toBe(204);
    const before = await s.count("runs");
    for (let i = 0; i < 4; i++) {
      const b = await post(s, "del-wf", token, "k-del");
      expect([b.status, b.headers.get(REPLAYED), b.headers.get("location")]).toEqual([
        201,
        "true",
        a.json.url,
      ]);
      expect(b.json).toEqual(a.json);
    }
    if (s === two || s === twoApp) {
      // By thread 1 too: its lane, or relayed to the framework, answered alike.
      const r = await via(s, 1, query ? "relay" : "lane", () => post(s, "del-wf", token, "k-del"));
      expect([r.status, r.headers.get(REPLAYED), r.json]).toEqual([201, "true", a.json]);
    }
    const gone = errorBody(404, "not_found", "Workflow not found.");
    expect((await post(s, "del-wf", token, "k-del", '{"id":2}')).json).toEqual(gone);
    expect((await post(s, "del-wf", token, null)).json).toEqual(gone);
    // By its id too (the URL may name a workflow by id).
    const byId = await post(s, String(a.json.workflow.id), token, "k-del");
    expect([byId.status, byId.headers.get(REPLAYED)]).toEqual([201, "true"]);
    expect(await s.count("runs")).toBe(before);
  });

  test("the slug taken by a new workflow: the retry replays the first run; another body is 422", async () => {
    const s = server();
    const { token } = await s.user("reuse-exec", "acme", "executor");
    await createWorkflow(s, s.rootToken, WF("reuse-wf"));
    const a = await post(s, "reuse-wf", token, "k-reuse");
    expect(a.status).toBe(201);
    expect((await del(s, "reuse-wf")).status).toBe(204);
    await createWorkflow(s, s.rootToken, WF("reuse-wf"));
    const before = await s.count("runs");
    const b = await post(s, "reuse-wf", token, "k-reuse");
    expect([b.status, b.headers.get(REPLAYED)]).toEqual([201, "true"]);
    expect(b.json).toEqual(a.json);
    expect(await s.count("runs")).toBe(before);
    const reused = errorBody(
      422,
      "idempotency_key_reused",
      "This Idempotency-Key was used with a different request.",
    );
    expect((await post(s, "reuse-wf", token, "k-reuse", '{"id":2}')).json).toEqual(reused);
    // A new key, or none, starts a run of the new workflow.
    const c = await post(s, "reuse-wf", token, "k-reuse-2");
    expect([c.status, c.json.workflow.id === a.json.workflow.id]).toEqual([201, false]);
  });

  test("the key on another workflow or another org is 422, the first workflow deleted or not", async () => {
    const s = server();
    await s.org("other");
    const { token: otherAdmin } = await s.user("other-admin", "other", "admin");
    const { token } = await s.user("cross-exec", "acme", "executor");
    const member = await call(s, "POST", "/api/v1/orgs/other/members/", {
      token: otherAdmin,
      body: { username: "cross-exec", role: "executor" },
    });
    expect(member.status).toBe(201);
    await createWorkflow(s, s.rootToken, WF("cross-a"));
    await createWorkflow(s, s.rootToken, WF("cross-b"));
    await createWorkflow(s, otherAdmin, WF("cross-a"), "other");
    expect((await post(s, "cross-a", token, "k-cross")).status).toBe(201);
    const reused = errorBody(
      422,
      "idempotency_key_reused",
      "This Idempotency-Key was used with a different request.",
    );
    for (const deleted of [false, true]) {
      if (deleted) expect((await del(s, "cross-a")).status).toBe(204);
      expect((await post(s, "cross-b", token, "k-cross")).json).toEqual(reused);
      expect((await post(s, "cross-a", token, "k-cross", '{"id":1}', "other")).json).toEqual(reused);
    }
  });

  test("the caller now a Viewer gets the replay, as a GET of the run; a new request is 403", async () => {
    const s = server();
    const { token } = await s.user("low-exec", "acme", "executor");
    await createWorkflow(s, s.rootToken, WF("low-wf"));
    const a = await post(s, "low-wf", token, "k-low");
    expect(a.status).toBe(201);
    const role = await call(s, "PATCH", "/api/v1/orgs/acme/members/low-exec/", {
      token: s.rootToken,
      body: { role: "viewer" },
    });
    expect(role.status).toBe(200);
    expect((await call(s, "GET", new URL(a.json.url).pathname, { token })).status).toBe(200);
    const b = await post(s, "low-wf", token, "k-low");
    expect([b.status, b.headers.get(REPLAYED)]).toEqual([201, "true"]);
    expect(b.json).toEqual(a.json);
    const needs = errorBody(403, "permission_denied", "This action needs the executor role or higher.");
    expect((await post(s, "low-wf", token, "k-low-2")).json).toEqual(needs);
    expect((await post(s, "low-wf", token, "k-low", '{"id":2}')).json).toEqual(needs);
    expect((await post(s, "low-wf", token, null)).json).toEqual(needs);
  });

  test("removed from the org, or the org suspended: the 403 a GET of the run gets", async () => {
    const s = server();
    await s.org("susp");
    const { token: admin } = await s.user("susp-admin", "susp", "admin");
    const { token } = await s.user("susp-exec", "susp", "executor");
    const { token: gone } = await s.user("susp-gone", "susp", "executor");
    await createWorkflow(s, admin, WF("s-wf"), "susp");
    const a = await post(s, "s-wf", token, "k-susp", '{"id":1}', "susp");
    const g = await post(s, "s-wf", gone, "k-gone", '{"id":1}', "susp");
    expect([a.status, g.status]).toEqual([201, 201]);
    expect((await call(s, "DELETE", "/api/v1/orgs/susp/members/susp-gone/", { token: admin })).status).toBe(
      204,
    );
    const outsider = errorBody(403, "permission_denied", "You are not a member of this organization.");
    expect((await call(s, "GET", new URL(g.json.url).pathname, { token: gone })).json).toEqual(outsider);
    expect((await post(s, "s-wf", gone, "k-gone", '{"id":1}', "susp")).json).toEqual(outsider);
    const sus = await call(s, "POST", "/api/v1/admin/orgs/susp/suspend/", { token: s.rootToken });
    expect(sus.status).toBe(200);
    const suspended = errorBody(403, "permission_denied", "The organization is suspended.");
    expect((await call(s, "GET", new URL(a.json.url).pathname, { token })).json).toEqual(suspended);
    expect((await post(s, "s-wf", token, "k-susp", '{"id":1}', "susp")).json).toEqual(suspended);
  });

  test("the token revoked: 401, not the replay; the user's other token replays", async () => {
    const s = server();
    const u = await s.user("rev-exec", "acme", "executor");
    await createWorkflow(s, s.rootToken, WF("rev-wf"));
    const a = await post(s, "rev-wf", u.token, "k-rev");
    expect(a.status).toBe(201);
    const other = await call(s, "POST", "/api/v1/users/me/tokens/", {
      token: u.token,
      body: { name: "second" },
    });
    expect(other.status).toBe(201);
    expect(
      (await call(s, "DELETE", `/api/v1/users/me/tokens/${u.tokenId}/`, { token: u.token })).status,
    ).toBe(204);
    const r = await post(s, "rev-wf", u.token, "k-rev");
    expect([r.status, r.headers.get(REPLAYED)]).toEqual([401, null]);
    expect(r.json).toEqual(errorBody(401, "authentication_required", expect.any(String)));
    const b = await post(s, "rev-wf", other.json.token, "k-rev");
    expect([b.status, b.headers.get(REPLAYED)]).toEqual([201, "true"]);
    expect(b.json).toEqual(a.json);
  });

  test("the first request still in flight: 409 with Retry-After, its workflow deleted or not, then the replay", async () => {
    const s = server();
    const { token } = await s.user("fly-exec", "acme", "executor");
    await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
    const gate = s.gates.gate();
    const h = { ...JSON_CT, "idempotency-key": "k-fly", prefer: "wait=60" };
    const first = call(s, "POST", runs("hold"), fresh({ token, raw: gate.doc(), headers: h }));
    await gate.held();
    const second = await call(s, "POST", runs("hold"), fresh({ token, raw: gate.doc(), headers: h }));
    expect([second.status, second.headers.get("retry-after")]).toEqual([409, "1"]);
    expect(second.json).toEqual(
      errorBody(
        409,
        "idempotency_key_in_progress",
        "A request with this Idempotency-Key is still in progress; retry shortly.",
      ),
    );
    // Its workflow deleted meanwhile: still 409, not 404 (it was a 404).
    expect((await del(s, "hold")).status).toBe(204);
    const third = await call(s, "POST", runs("hold"), fresh({ token, raw: gate.doc(), headers: h }));
    expect([third.status, third.headers.get("retry-after"), third.json]).toEqual([409, "1", second.json]);
    gate.open();
    const a = await first;
    expect(a.status).toBe(201);
    const b = await call(s, "POST", runs("hold"), fresh({ token, raw: gate.doc(), headers: h }));
    expect([b.status, b.headers.get(REPLAYED), b.json]).toEqual([201, "true", a.json]);
  });

  test("the first request in flight and its workflow deactivated: 409 in progress, then the replay", async () => {
    const s = server();
    const { token } = await s.user("off-exec", "acme", "executor");
    await createWorkflow(s, s.rootToken, { ...HOLD_WORKFLOW, slug: "hold-off" });
    const gate = s.gates.gate();
    const h = { ...JSON_CT, "idempotency-key": "k-fly-off", prefer: "wait=60" };
    const send = () => call(s, "POST", runs("hold-off"), fresh({ token, raw: gate.doc(), headers: h }));
    const first = send();
    await gate.held();
    const off = await call(s, "PATCH", "/api/v1/orgs/acme/workflows/hold-off/", {
      token: s.rootToken,
      body: { status: "inactive" },
    });
    expect(off.status).toBe(200);
    const second = await send();
    expect([second.status, second.headers.get("retry-after")]).toEqual([409, "1"]);
    expect(second.json).toEqual(
      errorBody(
        409,
        "idempotency_key_in_progress",
        "A request with this Idempotency-Key is still in progress; retry shortly.",
      ),
    );
    gate.open();
    const a = await first;
    expect(a.status).toBe(201);
    const b = await send();
    expect([b.status, b.headers.get(REPLAYED), b.json]).toEqual([201, "true", a.json]);
  });

  test("a refused request (4xx) stores nothing: the corrected retry with the key runs", async () => {
    const s = server();
    const { token } = await s.user("bad-exec", "acme", "executor");
    await createWorkflow(s, s.rootToken, WF("bad-wf"));
    const bad = await call(
      s,
      "POST",
      runs("bad-wf"),
      fresh({
        token,
        raw: "x",
        headers: { "content-type": "image/png", "idempotency-key": "k-bad" },
      }),
    );
    expect(bad.json).toEqual(errorBody(415, "unsupported_media_type", expect.any(String)));
    expect(await s.row("SELECT 1 AS x FROM idempotency_keys WHERE key = 'k-bad'")).toBeNull();
    const ok = await post(s, "bad-wf", token, "k-bad");
    expect([ok.status, ok.headers.get(REPLAYED)]).toEqual([201, null]);
  });

  test("a key past its 24 h is free: the same request starts a new run, also after a delete", async () => {
    const s = server();
    const { token } = await s.user("old-exec", "acme", "executor");
    await createWorkflow(s, s.rootToken, WF("old-wf"));
    const a = await post(s, "old-wf", token, "k-old");
    const age = () =>
      s.sql(
        "UPDATE idempotency_keys SET created_at = ? WHERE key = 'k-old'",
        new Date(Date.now() - 25 * 3600_000).toISOString(),
      );
    await age();
    const b = await post(s, "old-wf", token, "k-old");
    expect([b.status, b.headers.get(REPLAYED), b.json.id === a.json.id]).toEqual([201, null, false]);
    await age();
    expect((await del(s, "old-wf")).status).toBe(204);
    expect((await post(s, "old-wf", token, "k-old")).json).toEqual(
      errorBody(404, "not_found", "Workflow not found."),
    );
  });
});
