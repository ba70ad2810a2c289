// A workflow's ETag is its version; If-Match makes a PUT or PATCH conditional (src/workflows/etag.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("alice", "acme", "author")).token;
  const r = await call(s, "POST", base, { token: author, body: body("Original") });
  expect(r.status).toBe(201);
});
afterAll(() => s.close());

const base = "/api/v1/orgs/acme/workflows/";
const path = `${base}tagged/`;
const body = (name: string) => ({ slug: "tagged", name, allowed_file_types: ["JSON"], steps: [] });
const send = (method: string, ifMatch: string | null, b: unknown) =>
  call(s, method, path, { token: author, body: b, headers: ifMatch === null ? {} : { "if-match": ifMatch } });
const failed = (version: number) =>
  errorBody(
    412,
    "precondition_failed",
    `If-Match names another version than the workflow's current one (ETag "${version}"): read it again.`,
  );

test('200 GET, PATCH and PUT answer ETag "<version>"; a matching If-Match saves', async () => {
  const g = await call(s, "GET", path, { token: author });
  expect(g.headers.get("etag")).toBe('"1"');
  const p = await send("PATCH", '"1"', { name: "Patched" });
  expect(p.status).toBe(200);
  expect(p.headers.get("etag")).toBe('"2"');
  expect(p.json.version).toBe(2);
  const u = await send("PUT", '"9", "2"', body("Put"));
  expect(u.status).toBe(200);
  expect(u.headers.get("etag")).toBe('"3"');
  const star = await send("PATCH", "*", { description: "any version" });
  expect(star.headers.get("etag")).toBe('"4"');
  const noop = await send("PATCH", null, {});
  expect(noop.headers.get("etag")).toBe('"4"');
});

test("412 precondition_failed for another version or a weak tag; nothing saved", async () => {
  const before = (await call(s, "GET", path, { token: author })).json;
  for (const [method, tag, b] of [
    ["PATCH", '"1"', { name: "Stale" }],
    ["PUT", '"1"', body("Stale")],
    ["PATCH", `W/"${before.version}"`, { name: "Weak" }],
    ["PATCH", "garbage", {}],
  ] as const) {
    const r = await send(method, tag, b);
    expect(r.status).toBe(412);
    expect(r.json).toEqual(failed(before.version));
  }
  expect((await call(s, "GET", path, { token: author })).json).toEqual(before);
});

test("412 when another save lands between the read and the save of an If-Match edit", async () => {
  const v = (await call(s, "GET", path, { token: author })).json.version;
  let done = false;
  s.deps.workflowStore.hooks.beforeSave = async () => {
    if (done) return;
    done = true;
    expect((await send("PATCH", null, { description: "first" })).status).toBe(200);
  };
  const r = await send("PATCH", `"${v}"`, { name: "Second" });
  s.deps.workflowStore.hooks.beforeSave = undefined;
  expect(r.json).toEqual(failed(v + 1));
  expect((await call(s, "GET", path, { token: author })).json).toMatchObject({
    description: "first",
    version: v + 1,
  });
});
