// A workflow's ETag is its version; If-Match makes a PUT or PATCH conditional (src/workflows/etag.ts).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
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

// DELETE honours If-Match too (RFC 9110 §13.1.1: an origin server MUST evaluate it): until
// 2026-11-29 it was ignored, and `DELETE` with a stale `If-Match` deleted the workflow.
describe("DELETE with If-Match", () => {
  const create = async (slug: string) => {
    const r = await call(s, "POST", base, {
      token: author,
      body: { slug, name: slug, allowed_file_types: ["JSON"], steps: [] },
    });
    expect(r.status).toBe(201);
    return `${base}${slug}/`;
  };
  const del = (p: string, ifMatch: string | null) =>
    call(s, "DELETE", p, { token: author, headers: ifMatch === null ? {} : { "if-match": ifMatch } });
  const idOf = async (p: string) => (await call(s, "GET", p, { token: author })).json.id as number;
  afterEach(() => {
    s.deps.workflowStore.hooks.beforeDelete = undefined;
  });

  test("412 for another version or a weak tag: nothing deleted; 204 for the current one or *", async () => {
    const p = await create("del-a");
    for (const tag of ['"2"', 'W/"1"']) {
      const r = await del(p, tag);
      expect(r.json).toEqual(failed(1));
    }
    expect((await call(s, "GET", p, { token: author })).status).toBe(200);
    expect((await del(p, '"7", "1"')).status).toBe(204);
    expect((await call(s, "GET", p, { token: author })).json).toEqual(
      errorBody(404, "not_found", "Workflow not found."),
    );
    const q = await create("del-b");
    expect((await del(q, "*")).status).toBe(204);
    expect((await del(q, "*")).json).toEqual(errorBody(404, "not_found", "Workflow not found."));
  });

  test("412 when a save lands between the If-Match check and the deletion; without If-Match it is deleted", async () => {
    const p = await create("del-c");
    let done = false;
    s.deps.workflowStore.hooks.beforeDelete = async () => {
      if (done) return;
      done = true;
      expect((await call(s, "PATCH", p, { token: author, body: { name: "changed" } })).status).toBe(200);
    };
    expect((await del(p, '"1"')).json).toEqual(failed(2));
    expect((await call(s, "GET", p, { token: author })).json).toMatchObject({ name: "changed", version: 2 });
    done = false;
    expect((await del(p, null)).status).toBe(204);
    expect((await call(s, "GET", p, { token: author })).status).toBe(404);
  });

  test("404 for the second of two DELETEs at once, and one workflow.delete entry", async () => {
    const p = await create("del-d");
    const id = await idOf(p);
    let other: Awaited<ReturnType<typeof call>> | null = null;
    let done = false;
    s.deps.workflowStore.hooks.beforeDelete = async () => {
      if (done) return;
      done = true;
      other = await del(p, null);
    };
    const r = await del(p, null);
    expect(other!.status).toBe(204);
    expect(r.json).toEqual(errorBody(404, "not_found", "Workflow not found."));
    const entries = await s.sql(
      "SELECT seq FROM audit_log WHERE action = 'workflow.delete' AND target_id = ?",
      String(id),
    );
    expect(entries.length).toBe(1);
  });
});

// If-None-Match on GET (RFC 9110 §13.1.2): a client polling a workflow gets 304 while it is
// unchanged. It was ignored until 2026-11-29 (200 with the whole definition every time).
describe("GET with If-None-Match", () => {
  const get = (method: string, ifNoneMatch: string, token = author, p = path) =>
    fetch(`${s.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "if-none-match": ifNoneMatch },
    });

  test("304 without a body, with ETag, for the current version (strong, weak, in a list, or *)", async () => {
    const v = (await call(s, "GET", path, { token: author })).json.version;
    for (const tag of [`"${v}"`, `W/"${v}"`, `"0", "${v}"`, "*"])
      for (const method of ["GET", "HEAD"]) {
        const r = await get(method, tag);
        expect([r.status, r.headers.get("etag"), await r.text()]).toEqual([304, `"${v}"`, ""]);
      }
  });

  test("200 with the definition once the workflow changed", async () => {
    const v = (await call(s, "GET", path, { token: author })).json.version;
    expect((await send("PATCH", null, { description: `polled ${v}` })).status).toBe(200);
    const r = await get("GET", `"${v}"`);
    expect([r.status, r.headers.get("etag")]).toEqual([200, `"${v + 1}"`]);
    expect((await r.json()).version).toBe(v + 1);
  });

  test("401, 403 and 404 come first: the condition is judged only on a workflow the caller may read", async () => {
    const outsider = (await s.user("olga", "other", "admin")).token;
    const denied = await get("GET", "*", outsider);
    expect([denied.status, await denied.json()]).toEqual([
      403,
      errorBody(403, "permission_denied", "You are not a member of this organization."),
    ]);
    const missing = await get("GET", "*", author, `${base}nope/`);
    expect([missing.status, await missing.json()]).toEqual([
      404,
      errorBody(404, "not_found", "Workflow not found."),
    ]);
    const anonymous = await get("GET", "*", "assay_not_a_token");
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual(errorBody(401, "authentication_required"));
  });
});

// A restore is an edit of the workflow like PUT and PATCH: until 2026-11-29 it ignored If-Match.
describe("restore with If-Match", () => {
  test("412 for another version: nothing restored; 201 for the current one", async () => {
    const r0 = await call(s, "POST", base, {
      token: author,
      body: { slug: "rest-a", name: "first", allowed_file_types: ["JSON"], steps: [] },
    });
    expect(r0.status).toBe(201);
    const p = `${base}rest-a/`;
    expect((await call(s, "PATCH", p, { token: author, body: { name: "second" } })).status).toBe(200);
    const restore = (ifMatch: string) =>
      call(s, "POST", `${p}versions/1/restore/`, { token: author, headers: { "if-match": ifMatch } });
    for (const tag of ['"1"', 'W/"2"']) expect((await restore(tag)).json).toEqual(failed(2));
    expect((await call(s, "GET", p, { token: author })).json).toMatchObject({ name: "second", version: 2 });
    const ok = await restore('"2"');
    expect([ok.status, ok.json.version, ok.json.restored_from]).toEqual([201, 3, 1]);
    expect((await call(s, "GET", p, { token: author })).json).toMatchObject({ name: "first", version: 3 });
  });
});

// A header that is neither `*` nor a list of quoted entity tags (RFC 9110 §8.8.3): until
// 2026-11-29 `If-Match: 2` (the version unquoted) was a 412 saying it named another version than
// "2", and a malformed If-None-Match a 200 on every poll. Now a 400 naming the header.
describe("a malformed If-Match or If-None-Match", () => {
  const bad = (name: string) =>
    errorBody(400, "invalid_request", `Invalid value for ${name}.`, [
      {
        field: name,
        code: "invalid",
        message: `${name} is * or a list of entity tags in double quotes, such as "7".`,
      },
    ]);
  const MALFORMED = (v: number) => [`${v}`, `"${v}`, `W/${v}`, "garbage", ",", `"${v}" "${v}"`];

  test("400 on PATCH, PUT, DELETE and a restore; nothing saved", async () => {
    const before = (await call(s, "GET", path, { token: author })).json;
    for (const tag of MALFORMED(before.version))
      for (const [method, p, b] of [
        ["PATCH", path, { name: "Malformed" }],
        ["PUT", path, body("Malformed")],
        ["DELETE", path, undefined],
        ["POST", `${path}versions/1/restore/`, undefined],
      ] as const) {
        const r = await call(s, method, p, { token: author, body: b, headers: { "if-match": tag } });
        expect([method, tag, r.status, r.json]).toEqual([method, tag, 400, bad("If-Match")]);
      }
    expect((await call(s, "GET", path, { token: author })).json).toEqual(before);
  });

  test("400 on GET and HEAD with If-None-Match; a 404 comes first", async () => {
    const v = (await call(s, "GET", path, { token: author })).json.version;
    for (const tag of MALFORMED(v)) {
      const r = await call(s, "GET", path, { token: author, headers: { "if-none-match": tag } });
      expect([tag, r.status, r.json]).toEqual([tag, 400, bad("If-None-Match")]);
      const h = await fetch(`${s.url}${path}`, {
        method: "HEAD",
        headers: { authorization: `Bearer ${author}`, "if-none-match": tag },
      });
      expect(h.status).toBe(400);
    }
    const missing = await call(s, "GET", `${base}nope/`, {
      token: author,
      headers: { "if-none-match": "7" },
    });
    expect([missing.status, missing.json]).toEqual([404, errorBody(404, "not_found", "Workflow not found.")]);
    // Empty list elements are allowed (RFC 9110 §5.6.1): a list with a trailing comma still matches.
    const ok = await call(s, "GET", path, { token: author, headers: { "if-none-match": `"${v}", ` } });
    expect(ok.status).toBe(304);
  });
});

// RFC 9110 §13.1.2: on a method other than GET and HEAD, an If-None-Match that names the current
// version (or `*`) is a 412. Until 2026-11-29 the edits ignored it: `PUT` with `If-None-Match: *`
// ("only if it does not exist yet") replaced the existing workflow.
describe("If-None-Match on an edit", () => {
  const nothingChanged = (version: number) =>
    errorBody(
      412,
      "precondition_failed",
      `If-None-Match names the workflow's current version (ETag "${version}") or is *: nothing was changed.`,
    );

  test("412 on PUT, PATCH, DELETE and a restore for * or the current version; nothing changed", async () => {
    const before = (await call(s, "GET", path, { token: author })).json;
    const v = before.version;
    for (const tag of ["*", `"${v}"`, `W/"${v}"`, `"0", "${v}"`])
      for (const [method, p, b] of [
        ["PUT", path, body("Overwritten")],
        ["PATCH", path, { name: "Overwritten" }],
        ["DELETE", path, undefined],
        ["POST", `${path}versions/1/restore/`, undefined],
      ] as const) {
        const r = await call(s, method, p, { token: author, body: b, headers: { "if-none-match": tag } });
        expect([method, tag, r.status, r.json]).toEqual([method, tag, 412, nothingChanged(v)]);
      }
    expect((await call(s, "GET", path, { token: author })).json).toEqual(before);
  });

  test("another version lets the edit through; If-Match is judged first", async () => {
    const v = (await call(s, "GET", path, { token: author })).json.version;
    const ok = await call(s, "PATCH", path, {
      token: author,
      body: { description: `past ${v}` },
      headers: { "if-none-match": '"0"' },
    });
    expect([ok.status, ok.headers.get("etag")]).toEqual([200, `"${v + 1}"`]);
    const both = await call(s, "PATCH", path, {
      token: author,
      body: { description: "both" },
      headers: { "if-match": `"${v}"`, "if-none-match": "*" },
    });
    expect(both.json).toEqual(failed(v + 1));
    const missing = await call(s, "PATCH", `${base}nope/`, {
      token: author,
      body: { description: "x" },
      headers: { "if-none-match": "*" },
    });
    expect([missing.status, missing.json]).toEqual([404, errorBody(404, "not_found", "Workflow not found.")]);
  });
});
