// GET of one step: the Location a step's POST answers (src/workflows/routes.ts, getStep).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
let viewer: string;
let outsider: string;
beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("alice", "acme", "author")).token;
  viewer = (await s.user("vic", "acme", "viewer")).token;
  outsider = (await s.user("olga", "other", "admin")).token;
  for (const slug of ["one", "two"])
    await call(s, "POST", base, {
      token: author,
      body: {
        slug,
        name: slug,
        allowed_file_types: ["JSON"],
        steps: [{ name: "syntax", validator: "syntax" }],
      },
    });
});
afterAll(() => s.close());

const base = "/api/v1/orgs/acme/workflows/";

test("200 the Location of a new step answers the step, as the workflow's detail shows it", async () => {
  const add = await call(s, "POST", `${base}one/steps/`, {
    token: author,
    body: { name: "schema", validator: "json_schema", config: { schema: { type: "object" } } },
  });
  expect(add.status).toBe(201);
  const location = add.headers.get("location")!;
  expect(location).toBe(`${s.url}${base}one/steps/${add.json.id}/`);
  const r = await call(s, "GET", location.slice(s.url.length), { token: viewer });
  expect(r.status).toBe(200);
  const detail = await call(s, "GET", `${base}one/`, { token: viewer });
  expect(r.json).toEqual(detail.json.steps[1]);
  expect(r.json).toEqual(add.json);
});

test("404 for an unknown step or another workflow's step; 403 for a non-member", async () => {
  const two = (await call(s, "GET", `${base}two/`, { token: author })).json.steps[0].id;
  const one = (await call(s, "GET", `${base}one/`, { token: author })).json.steps[0].id;
  for (const path of [`${base}one/steps/999999/`, `${base}one/steps/${two}/`, `${base}one/steps/x/`]) {
    const r = await call(s, "GET", path, { token: viewer });
    expect(r.json).toEqual(errorBody(404, "not_found", "Step not found."));
  }
  const r = await call(s, "GET", `${base}one/steps/${one}/`, { token: outsider });
  expect(r.json).toEqual(errorBody(403, "permission_denied", expect.any(String)));
});
