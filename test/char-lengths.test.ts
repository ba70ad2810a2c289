// String bounds count characters (Unicode code points), as the OpenAPI document's minLength and
// maxLength do (JSON Schema), not UTF-16 code units: an emoji outside the Basic Multilingual Plane
// is one character and two code units. Each bound is tried at exactly its limit and one over, in
// astral characters, through the service checks (charCount) and the schema checks (Chars()).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const E = "\u{1F600}"; // 😀: one code point, two UTF-16 code units
const emoji = (n: number) => E.repeat(n);
let s: TestServer;
let admin: string;
beforeAll(async () => {
  s = await startTestServer();
  admin = (await s.user("cl-admin", "clorg", "admin")).token;
});
afterAll(() => s.close());

describe("service checks count characters", () => {
  test("a token name: 100 emoji are taken, 101 refused", async () => {
    const post = (name: string) =>
      call(s, "POST", "/api/v1/users/me/tokens/", { token: admin, body: { name } });
    const ok = await post(emoji(100));
    expect(ok.status).toBe(201);
    expect(ok.json.name).toBe(emoji(100));
    const r = await post(emoji(101));
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for name.", [
        { field: "name", code: "invalid", message: "A token name of 1 to 100 characters is required." },
      ]),
    );
  });
  test("an org name: 200 emoji are taken, 201 refused", async () => {
    const patch = (name: string) => call(s, "PATCH", "/api/v1/orgs/clorg/", { token: admin, body: { name } });
    const ok = await patch(emoji(200));
    expect(ok.status).toBe(200);
    expect(ok.json.name).toBe(emoji(200));
    const r = await patch(emoji(201));
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for name.", [
        { field: "name", code: "invalid", message: "A name of 1 to 200 characters." },
      ]),
    );
  });
  test("a workflow description: 5000 emoji are taken, 5001 refused", async () => {
    const post = (slug: string, description: string) =>
      call(s, "POST", "/api/v1/orgs/clorg/workflows/", {
        token: admin,
        body: {
          slug,
          name: emoji(200),
          description,
          allowed_file_types: ["JSON"],
          steps: [{ name: emoji(200), validator: "syntax", config: {} }],
        },
      });
    const ok = await post("wf-ok", emoji(5000));
    expect(ok.status).toBe(201);
    const r = await post("wf-over", emoji(5001));
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "description",
          code: "invalid",
          message: "The description may hold at most 5000 characters.",
        },
      ]),
    );
  });
  // Until 2026-11-29 the email's 254 counted code units, and the document stated no bound at all.
  test("a user's email: 254 characters are taken, 255 refused; the document states the bound", async () => {
    const post = (username: string, email: string) =>
      call(s, "POST", "/api/v1/admin/users/", { token: s.rootToken, body: { username, email } });
    const at254 = `${emoji(250)}@b.c`;
    const ok = await post("mail-ok", at254);
    expect([ok.status, ok.json.email]).toEqual([201, at254]);
    const r = await post("mail-over", `${emoji(251)}@b.c`);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for email.", [
        { field: "email", code: "invalid", message: "Not an email address." },
      ]),
    );
    const doc = (await call(s, "GET", "/api/v1/openapi.json")).json;
    const body = doc.paths["/api/v1/admin/users/"].post.requestBody.content["application/json"].schema;
    expect(body.properties.email).toEqual({
      type: "string",
      maxLength: 254,
      pattern: "^$|^[^@\\s]+@[^@\\s]+$",
    });
    const pattern = new RegExp(body.properties.email.pattern, "u");
    expect(["", "a@b", at254].every((e) => pattern.test(e))).toBe(true);
    expect(["a b@c", "ab", "a@b@c"].some((e) => pattern.test(e))).toBe(false);
  });
});

describe("schema checks count characters", () => {
  test("an admin-created user's name: 200 emoji are taken, 201 refused", async () => {
    const post = (username: string, name: string) =>
      call(s, "POST", "/api/v1/admin/users/", { token: s.rootToken, body: { username, name } });
    const ok = await post("cl-u1", emoji(200));
    expect(ok.status).toBe(201);
    expect(ok.json.name).toBe(emoji(200));
    const r = await post("cl-u2", emoji(201));
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The request is invalid.", [
        { field: "name", code: "invalid", message: "must be a string of at most 200 characters" },
      ]),
    );
  });
  test("sign-in: a password of 1024 emoji is checked (401), 1025 refused (400)", async () => {
    const login = (password: string) =>
      call(s, "POST", "/api/v1/auth/login/", { body: { username: "cl-admin", password } });
    expect((await login(emoji(1024))).status).toBe(401);
    const r = await login(emoji(1025));
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The request is invalid.", [
        { field: "password", code: "invalid", message: "must be a string of 1 to 1024 characters" },
      ]),
    );
  });
  test("the document states those bounds as minLength/maxLength, no format of ours", async () => {
    const doc = (await call(s, "GET", "/api/v1/openapi.json")).json;
    expect(JSON.stringify(doc)).not.toContain("assay-chars");
    const login = doc.paths["/api/v1/auth/login/"].post.requestBody.content["application/json"].schema;
    const body = login.$ref ? doc.components.schemas[login.$ref.split("/").pop()] : login;
    expect(body.properties.password).toEqual({ type: "string", minLength: 1, maxLength: 1024 });
  });
});
