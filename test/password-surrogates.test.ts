// A new password with an unpaired surrogate (the escape "\ud800" without its pair) is refused, as
// every stored text refuses one (docs/limits.md): the hash is taken of its UTF-8, where U+FFFD
// stands in for each, so "ab\ud800…", "ab\udfff…" and "ab\ufffd…" were one password — any of
// them signed in.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const MESSAGE =
  "A password may not contain unpaired surrogates (an escape such as \\ud800 without its pair).";
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

test("an administrator's new user: 400, nobody created", async () => {
  const before = await s.count("users");
  const r = await call(s, "POST", "/api/v1/admin/users/", {
    token: s.rootToken,
    body: { username: "pat", password: "ab\ud800cdefghij" },
  });
  expect(r.json).toEqual(
    errorBody(400, "invalid_request", expect.any(String), [
      { field: "password", code: "invalid", message: MESSAGE },
    ]),
  );
  expect(r.status).toBe(400);
  expect(await s.count("users")).toBe(before);
});

test("a change of one's own password: 400, the old one still signs in", async () => {
  const made = await call(s, "POST", "/api/v1/admin/users/", {
    token: s.rootToken,
    body: { username: "quinn", password: "first pass phrase" },
  });
  expect(made.status).toBe(201);
  const login = await call(s, "POST", "/api/v1/auth/login/", {
    body: { username: "quinn", password: "first pass phrase" },
  });
  expect(login.status).toBe(200);
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const r = await call(s, "POST", "/api/v1/users/me/password/", {
    headers: { cookie, "x-csrf-token": login.json.csrf_token },
    body: { current_password: "first pass phrase", new_password: "x\udc00 second phrase" },
  });
  expect(r.json).toEqual(
    errorBody(400, "invalid_request", "The new password is not acceptable.", [
      { field: "new_password", code: "invalid", message: MESSAGE },
    ]),
  );
  const again = await call(s, "POST", "/api/v1/auth/login/", {
    body: { username: "quinn", password: "first pass phrase" },
  });
  expect(again.status).toBe(200);
});

test("a pair (an emoji) is a character like any other", async () => {
  const r = await call(s, "POST", "/api/v1/admin/users/", {
    token: s.rootToken,
    body: { username: "rae", password: "😀 emoji pass" },
  });
  expect(r.status).toBe(201);
  const login = await call(s, "POST", "/api/v1/auth/login/", {
    body: { username: "rae", password: "😀 emoji pass" },
  });
  expect(login.status).toBe(200);
});
