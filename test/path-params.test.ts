// A path segment that is not percent-encoded UTF-8 (%FF, %ED%A0%80: a lone surrogate) names
// nothing: 404 not_found like a path no route matches, on every route with path parameters.
// Until 2026-11-28 the framework decoded it to null: routes with a params schema answered its
// 400 ("Expected property 'workflow' to be string but found: null"), an org route 404.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "w1",
    allowed_file_types: ["JSON"],
    steps: [{ name: "s", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

const notFound = errorBody(404, "not_found", "Not found.");
const BAD = ["%ED%A0%80", "%FF", "%E0%80"];

test("404 not_found on every kind of route, for GET, POST, PATCH and DELETE", async () => {
  const routes: [string, (x: string) => string, unknown?][] = [
    ["GET", (x) => `/api/v1/orgs/${x}/`],
    ["GET", (x) => `/api/v1/orgs/acme/workflows/${x}/`],
    ["POST", (x) => `/api/v1/orgs/acme/workflows/${x}/runs/`, { a: 1 }],
    ["GET", (x) => `/api/v1/orgs/acme/runs/${x}/`],
    ["GET", (x) => `/api/v1/orgs/acme/schemas/${x}/`],
    ["GET", (x) => `/api/v1/orgs/acme/webhooks/${x}/`],
    ["PATCH", (x) => `/api/v1/orgs/acme/members/${x}/`, { role: "viewer" }],
    ["DELETE", (x) => `/api/v1/admin/users/${x}/`],
    ["POST", (x) => `/api/v1/admin/orgs/${x}/restore/`],
  ];
  for (const [method, path, body] of routes)
    for (const x of BAD) {
      const r = await call(s, method, path(x), { token: s.rootToken, body });
      expect({ path: path(x), method, status: r.status, json: r.json }).toEqual({
        path: path(x),
        method,
        status: 404,
        json: notFound,
      });
    }
});

test("the token is still checked: 401 with a bad one", async () => {
  const r = await call(s, "GET", "/api/v1/orgs/acme/workflows/%FF/", { token: "nope" });
  expect(r.status).toBe(401);
  expect(r.json).toEqual(errorBody(401, "authentication_required"));
});

test("a well-formed escape still names what it decodes to", async () => {
  const r = await call(s, "GET", "/api/v1/orgs/acme/workflows/%77%31/", { token: s.rootToken });
  expect(r.status).toBe(200);
  expect(r.json.slug).toBe("w1");
});
