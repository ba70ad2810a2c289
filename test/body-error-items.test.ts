// The errors[] items of a JSON body the endpoint's schema refuses: a missing field is `required`,
// a field the endpoint does not take is `unknown_field`, a wrong value `invalid`, and nested
// fields are named as the workflow checks name them (`steps[0].name`). Before, a missing field
// read "must be a string" and an unknown one TypeBox's "Property 'x' should not be provided".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fieldOf } from "../src/http/errors.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const INVALID = "The request is invalid.";
const required = (field: string) => ({ field, code: "required", message: "is required" });
const unknown = (field: string) => ({ field, code: "unknown_field", message: "is not a known field" });

describe("a body the endpoint's schema refuses", () => {
  test("admin org: a missing org_slug is required, an unknown key unknown_field; nothing created", async () => {
    const before = await s.count("orgs");
    const r = await call(s, "POST", "/api/v1/admin/orgs/", { token: s.rootToken, body: { slug: "beta" } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [required("org_slug"), unknown("slug")]),
    );
    expect(await s.count("orgs")).toBe(before);
  });

  test("workflow: every missing field listed, nested step fields named steps[i].x", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: { slug: "q", steps: [{ validator: "json_schema", config: { schema: {} }, extra: 1 }] },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        required("name"),
        required("allowed_file_types"),
        required("steps[0].name"),
        unknown("steps[0].extra"),
      ]),
    );
    expect(await s.count("workflows")).toBe(0);
  });

  test("a value of the wrong type stays invalid, with the field's own message", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: { slug: "q", name: 5, allowed_file_types: ["JSON"], steps: [] },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "name", code: "invalid", message: "must be a string" },
      ]),
    );
  });

  test("sign-in without a password: required (no session, no cookie)", async () => {
    const r = await call(s, "POST", "/api/v1/auth/login/", { body: { username: "root" } });
    expect(r.json).toEqual(errorBody(400, "invalid_request", INVALID, [required("password")]));
    expect(r.headers.get("set-cookie")).toBeNull();
  });

  test("a token request with an unknown key: unknown_field, no token created", async () => {
    const before = await s.count("api_tokens");
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", {
      token: s.rootToken,
      body: { name: "ci", scope: "all" },
    });
    expect(r.json).toEqual(errorBody(400, "invalid_request", INVALID, [unknown("scope")]));
    expect(await s.count("api_tokens")).toBe(before);
  });
});

describe("fieldOf", () => {
  test("JSON Pointers become the API's field names", () => {
    expect(fieldOf("")).toBe("");
    expect(fieldOf("/name")).toBe("name");
    expect(fieldOf("/steps/0/config/schema")).toBe("steps[0].config.schema");
    expect(fieldOf("/a~1b/c~0d")).toBe("a/b.c~d");
    expect(fieldOf("/0/x")).toBe("[0].x");
  });
});
