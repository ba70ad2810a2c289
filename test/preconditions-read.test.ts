// If-Match and If-None-Match on GET and HEAD (RFC 9110 §13.1.1, §13.1.2, §13.2.2). A resource
// without an entity tag (all but a workflow): If-Match with a list of tags is a 412, then
// If-None-Match `*` names the existing resource, so 304 Not Modified; `If-Match: *` and a list in
// If-None-Match leave the 200. The answer without the headers (401, 403, 404) comes first. Lists
// take no part. A workflow's GET judges If-Match against its ETag before If-None-Match. Until
// 2026-11-29 these GETs ignored both headers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { NO_TAG, malformed } from "./helpers/preconditions.ts";

let s: TestServer;
const ids: Record<string, string | number> = {};
const A = "/api/v1/orgs/acme";

beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true });
  const root = s.rootToken;
  await s.user("mia", "acme", "viewer");
  await createWorkflow(s, root, {
    slug: "wf",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  const schema = await call(s, "POST", `${A}/schemas/`, {
    token: root,
    body: { uri: "https://example.com/a.json", schema: { type: "object" } },
  });
  ids.schema = schema.json.id;
  ids.step = (await call(s, "GET", `${A}/workflows/wf/`, { token: root })).json.steps[0].id;
  ids.token = (
    await call(s, "POST", "/api/v1/users/me/tokens/", { token: root, body: { name: "t" } })
  ).json.id;
  // Inactive: its ping is queued and never sent, so the delivery stays as it is.
  const hook = await call(s, "POST", `${A}/webhooks/`, {
    token: root,
    body: { url: "http://127.0.0.1:9/h" },
  });
  ids.hook = hook.json.id;
  ids.delivery = (await call(s, "POST", `${A}/webhooks/${ids.hook}/ping/`, { token: root })).json.id;
  const run = await call(s, "POST", `${A}/workflows/wf/runs/`, { token: root, body: { content: { a: 1 } } });
  expect(run.status).toBe(201);
  ids.run = run.json.id;
});
afterAll(async () => {
  await s?.close();
});

const RESOURCES: { path: () => string; missing?: () => string }[] = [
  { path: () => `${A}/`, missing: () => "/api/v1/orgs/nope/" },
  { path: () => `${A}/members/mia/`, missing: () => `${A}/members/nobody/` },
  { path: () => `${A}/schemas/${ids.schema}/`, missing: () => `${A}/schemas/999999/` },
  { path: () => `${A}/webhooks/${ids.hook}/`, missing: () => `${A}/webhooks/999999/` },
  {
    path: () => `${A}/webhooks/${ids.hook}/deliveries/${ids.delivery}/`,
    missing: () => `${A}/webhooks/${ids.hook}/deliveries/nope/`,
  },
  { path: () => `${A}/runs/${ids.run}/`, missing: () => `${A}/runs/0191f0e0-0000-7000-8000-000000000000/` },
  { path: () => `${A}/workflows/wf/versions/1/`, missing: () => `${A}/workflows/wf/versions/9/` },
  // A step: the one resource whose GET (added 2026-11-28) the 2026-11-29 change left out.
  { path: () => `${A}/workflows/wf/steps/${ids.step}/`, missing: () => `${A}/workflows/wf/steps/999999/` },
  { path: () => `/api/v1/users/me/tokens/${ids.token}/`, missing: () => "/api/v1/users/me/tokens/999999/" },
  { path: () => "/api/v1/users/me/" },
  { path: () => "/api/v1/auth/me/" },
  { path: () => "/api/v1/admin/users/mia/", missing: () => "/api/v1/admin/users/nobody/" },
  { path: () => "/api/v1/admin/orgs/acme/", missing: () => "/api/v1/admin/orgs/nope/" },
  { path: () => "/api/v1/admin/settings/" },
];

const stable = (text: string) => text.replace(/"last_used_at":"[^"]*"/g, "");

describe("a resource without an ETag", () => {
  for (const method of ["GET", "HEAD"])
    test(`${method}: If-Match with tags 412, If-None-Match: * 304, the rest 200`, async () => {
      for (const res of RESOURCES) {
        const path = res.path();
        const plain = await call(s, method, path, { token: s.rootToken });
        expect([path, plain.status]).toEqual([path, 200]);
        for (const headers of <Record<string, string>[]>[
          { "if-match": '"x"' },
          { "if-match": 'W/"x", "y"', "if-none-match": "*" },
        ]) {
          const r = await call(s, method, path, { token: s.rootToken, headers });
          expect([path, headers, r.status]).toEqual([path, headers, 412]);
          if (method === "GET") expect(r.json).toEqual(NO_TAG);
        }
        for (const headers of <Record<string, string>[]>[
          { "if-none-match": "*" },
          { "if-match": "*", "if-none-match": "*" },
        ]) {
          const r = await call(s, method, path, { token: s.rootToken, headers });
          expect([path, headers, r.status, r.text, r.headers.get("content-type")]).toEqual([
            path,
            headers,
            304,
            "",
            null,
          ]);
          // Not cached by a shared cache, as the 200 is not.
          expect(r.headers.get("cache-control")).toBe("no-store");
        }
        for (const headers of <Record<string, string>[]>[
          { "if-match": "*" },
          { "if-none-match": '"x", W/"y"' },
        ]) {
          const r = await call(s, method, path, { token: s.rootToken, headers });
          // The same answer (the token's last use moves with each request).
          expect([path, headers, r.status, stable(r.text)]).toEqual([path, headers, 200, stable(plain.text)]);
        }
      }
    });

  test("a malformed header: the 400 naming it", async () => {
    for (const res of RESOURCES) {
      const path = res.path();
      for (const [headers, answer] of [
        [{ "if-match": "x" }, malformed("If-Match")],
        [{ "if-none-match": "W/x" }, malformed("If-None-Match")],
      ] as const) {
        const r = await call(s, "GET", path, { token: s.rootToken, headers });
        expect([path, r.status, r.json]).toEqual([path, 400, answer]);
      }
    }
  });

  test("the answer without the headers first: 404, 403, 401", async () => {
    const outsider = (await s.user("vera")).token;
    for (const res of RESOURCES) {
      for (const headers of <Record<string, string>[]>[{ "if-match": '"x"' }, { "if-none-match": "*" }]) {
        if (res.missing) {
          const r = await call(s, "GET", res.missing(), { token: s.rootToken, headers });
          expect([res.missing(), r.status, r.json.code]).toEqual([res.missing(), 404, "not_found"]);
        }
        const anon = await call(s, "GET", res.path(), { headers });
        expect([res.path(), anon.status]).toEqual([res.path(), 401]);
      }
    }
    // A user of no org: 403 for the org's resources (404 for an admin's, which hide them).
    const r = await call(s, "GET", `${A}/members/mia/`, {
      token: outsider,
      headers: { "if-none-match": "*" },
    });
    expect([r.status, r.json.code]).toEqual([403, "permission_denied"]);
  });

  test("lists take no part: the 200, whatever the headers", async () => {
    for (const path of [`${A}/members/`, `${A}/webhooks/`, `${A}/runs/`, "/api/v1/users/me/tokens/"])
      for (const headers of <Record<string, string>[]>[{ "if-match": '"x"' }, { "if-none-match": "*" }]) {
        const r = await call(s, "GET", path, { token: s.rootToken, headers });
        expect([path, headers, r.status]).toEqual([path, headers, 200]);
      }
  });
});

describe("a workflow's GET judges If-Match against its ETag", () => {
  const path = `${A}/workflows/wf/`;
  const stale = errorBody(
    412,
    "precondition_failed",
    `If-Match names another version than the workflow's current one (ETag "1"): read it again.`,
  );
  test("412 unless it names the current version; before If-None-Match", async () => {
    for (const method of ["GET", "HEAD"]) {
      for (const headers of <Record<string, string>[]>[
        { "if-match": '"9"' },
        { "if-match": 'W/"1"' },
        { "if-match": '"9"', "if-none-match": '"1"' },
      ]) {
        const r = await call(s, method, path, { token: s.rootToken, headers });
        expect([method, headers, r.status]).toEqual([method, headers, 412]);
        if (method === "GET") expect(r.json).toEqual(stale);
      }
      for (const headers of [{ "if-match": '"1"' }, { "if-match": '"9", "1"' }, { "if-match": "*" }]) {
        const r = await call(s, method, path, { token: s.rootToken, headers });
        expect([method, headers, r.status, r.headers.get("etag")]).toEqual([method, headers, 200, '"1"']);
      }
      const both = await call(s, method, path, {
        token: s.rootToken,
        headers: { "if-match": '"1"', "if-none-match": '"1"' },
      });
      expect([both.status, both.text, both.headers.get("etag")]).toEqual([304, "", '"1"']);
    }
    const bad = await call(s, "GET", path, { token: s.rootToken, headers: { "if-match": "1" } });
    expect([bad.status, bad.json]).toEqual([400, malformed("If-Match")]);
    const missing = await call(s, "GET", `${A}/workflows/nope/`, {
      token: s.rootToken,
      headers: { "if-match": '"9"' },
    });
    expect([missing.status, missing.json.code]).toEqual([404, "not_found"]);
  });
});

test("the OpenAPI document lists 304 and 412 on these GETs", async () => {
  const doc = (await call(s, "GET", "/api/v1/openapi.json")).json;
  const conditional: string[] = [];
  for (const ops of Object.values(doc.paths) as Record<string, { operationId: string; responses: object }>[])
    if (ops.get && "304" in ops.get.responses && "412" in ops.get.responses)
      conditional.push(ops.get.operationId);
  expect(conditional.sort()).toEqual(
    [
      "adminGetOrg",
      "adminGetUser",
      "getAuthMe",
      "getDelivery",
      "getMe",
      "getMember",
      "getOrg",
      "getRun",
      // An ETag of their own (test/run-content-report-etag.test.ts).
      "getRunContent",
      "getRunReport",
      "getSchema",
      "getSettings",
      "getStep",
      "getToken",
      "getWebhook",
      "getWorkflow",
      "getWorkflowVersion",
    ].sort(),
  );
});
