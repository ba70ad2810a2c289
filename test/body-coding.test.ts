// Bodies the JSON API does not read. A JSON API body with a Content-Encoding (the run endpoint aside, which takes base64: CONTRACT §4)
// is 415 unsupported_media_type: the server inflates nothing. Until 2026-11-29 a gzip body was
// refused as "The request body must be a JSON object." (a 400 that sent clients looking at their
// JSON), and a body labelled br or x-anything whose bytes were plain JSON was read as if uncoded
// and saved. A body sent to a route that takes none is ignored (docs/access.md), malformed JSON
// too. Both found attacking the built binary.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const TOKENS = "/api/v1/users/me/tokens/";
const refused = (coding: string) =>
  errorBody(
    415,
    "unsupported_media_type",
    `Content-Encoding "${coding}" is not supported on this endpoint; send the JSON object without one.`,
  );
const tokenNames = async () =>
  (
    (await call(s, "GET", `${TOKENS}?page_size=200`, { token: s.rootToken })).json.results as {
      name: string;
    }[]
  ).map((t) => t.name);

describe("a coded body to a JSON endpoint is 415 and changes nothing", () => {
  test("gzip: 415 naming the coding, not a 400 about the JSON; no token created", async () => {
    const r = await call(s, "POST", TOKENS, {
      token: s.rootToken,
      raw: gzipSync(JSON.stringify({ name: "zipped" })),
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    });
    expect([r.status, r.json]).toEqual([415, refused("gzip")]);
    expect(await tokenNames()).not.toContain("zipped");
  });

  test("the 415 says which codings the endpoint takes: Accept-Encoding: identity (RFC 9110 §15.5.16)", async () => {
    // Until 2026-11-29 it said none: a client had only the detail's words to go by.
    for (const path of [TOKENS, "/api/v1/auth/login/"]) {
      const r = await call(s, "POST", path, {
        token: s.rootToken,
        raw: gzipSync("{}"),
        headers: { "content-type": "application/json", "content-encoding": "gzip" },
      });
      expect([r.status, r.headers.get("accept-encoding"), r.json]).toEqual([
        415,
        "identity",
        refused("gzip"),
      ]);
    }
    // A 415 about the media type is no coding problem: no Accept-Encoding.
    const type = await call(s, "POST", TOKENS, {
      token: s.rootToken,
      raw: "{}",
      headers: { "content-type": "text/plain" },
    });
    expect([type.status, type.headers.get("accept-encoding"), type.json]).toEqual([
      415,
      null,
      errorBody(415, "unsupported_media_type"),
    ]);
  });

  test("a coding whose bytes happen to be plain JSON (br, an unknown one) is not read as uncoded", async () => {
    const before = (await call(s, "GET", "/api/v1/orgs/acme/", { token: s.rootToken })).json.name;
    for (const coding of ["br", "x-custom", "gzip, identity"]) {
      const r = await call(s, "PATCH", "/api/v1/orgs/acme/", {
        token: s.rootToken,
        raw: JSON.stringify({ name: `renamed ${coding}` }),
        headers: { "content-type": "application/json", "content-encoding": coding },
      });
      expect([r.status, r.json]).toEqual([415, refused(coding)]);
    }
    expect((await call(s, "GET", "/api/v1/orgs/acme/", { token: s.rootToken })).json.name).toBe(before);
  });

  test("identity (any case) or an empty value is no coding: the body is read", async () => {
    for (const [coding, name] of [
      ["identity", "plain-1"],
      ["Identity", "plain-2"],
      ["", "plain-3"],
    ] as const) {
      const r = await call(s, "POST", TOKENS, {
        token: s.rootToken,
        body: { name },
        headers: { "content-encoding": coding },
      });
      expect([r.status, r.json.name]).toEqual([201, name]);
    }
  });

  test("the refusal waits for authentication and access, as every body's refusal does", async () => {
    const raw = gzipSync(JSON.stringify({ name: "x" }));
    const headers = { "content-type": "application/json", "content-encoding": "gzip" };
    const anonymous = await call(s, "POST", TOKENS, { raw, headers });
    expect([anonymous.status, anonymous.json.code]).toEqual([401, "authentication_required"]);
    const viewer = await s.user("enc-viewer", "acme", "viewer");
    const denied = await call(s, "PATCH", "/api/v1/orgs/acme/", { token: viewer.token, raw, headers });
    expect([denied.status, denied.json.code]).toEqual([403, "permission_denied"]);
  });

  test("a public endpoint (sign-in) refuses it at once", async () => {
    const r = await call(s, "POST", "/api/v1/auth/login/", {
      raw: gzipSync(JSON.stringify({ username: "root", password: "x" })),
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    });
    expect([r.status, r.json]).toEqual([415, refused("gzip")]);
  });

  test("a route that takes no body still ignores one, coded or not", async () => {
    const r = await call(s, "DELETE", `${TOKENS}999999/`, {
      token: s.rootToken,
      raw: gzipSync("{}"),
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    });
    expect([r.status, r.json.code]).toEqual([404, "not_found"]);
  });
});

describe("a body sent to a route that takes none is ignored, malformed or not (docs/access.md)", () => {
  // Until 2026-11-29 malformed JSON labelled application/json was parsed anyway, and refused with
  // 400 parse_error before authentication: an anonymous caller got a 400, not a 401, and a
  // non-member a 400, not a 403.
  const malformed = { raw: "{not json", headers: { "content-type": "application/json" } };
  test("without a token: 401, not 400", async () => {
    for (const [method, path] of [
      ["DELETE", `${TOKENS}1/`],
      ["DELETE", "/api/v1/orgs/acme/"],
      ["POST", "/api/v1/orgs/acme/runs/01a22628-321b-7000-ad8d-4ea7af164f1f/cancel/"],
    ] as const) {
      const r = await call(s, method, path, malformed);
      expect([method, path, r.status, r.json.code]).toEqual([method, path, 401, "authentication_required"]);
    }
  });
  test("a non-member: 403; a member: the route's own answer", async () => {
    const outsider = await s.user("enc-outsider", "elsewhere", "admin");
    const denied = await call(s, "DELETE", "/api/v1/orgs/acme/workflows/nothing/", {
      token: outsider.token,
      ...malformed,
    });
    expect([denied.status, denied.json]).toEqual([
      403,
      errorBody(403, "permission_denied", "You are not a member of this organization."),
    ]);
    const missing = await call(s, "DELETE", `${TOKENS}999999/`, { token: s.rootToken, ...malformed });
    expect([missing.status, missing.json]).toEqual([404, errorBody(404, "not_found", "Token not found.")]);
    const created = await call(s, "POST", TOKENS, { token: s.rootToken, body: { name: "to-revoke" } });
    const revoked = await call(s, "DELETE", `${TOKENS}${created.json.id}/`, {
      token: s.rootToken,
      ...malformed,
    });
    expect(revoked.status).toBe(204);
  });
  test("sign-out (public) answers 204 whatever the body", async () => {
    const r = await call(s, "POST", "/api/v1/auth/logout/", malformed);
    expect(r.status).toBe(204);
  });
});
