// The rate limits of a web session (the web app's requests, authenticated by its cookie): the
// session has a budget of its own, as a token has, and its 429 names the session. It said "with
// this token", which the web app's user does not have.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const PASSWORD = "session password 1";

describe("429 to a web session", () => {
  let s: TestServer;
  let headers: Record<string, string>;

  beforeAll(async () => {
    s = await startTestServer({
      rate_limit_disabled: false,
      rate_limit_per_minute: 4,
      rate_limit_runs_per_minute: 1,
    });
    await createWorkflow(s, s.rootToken, {
      slug: "doc",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const root = await s.deps.users.getByUsername("root");
    await s.deps.users.setPassword(root!.id, await Bun.password.hash(PASSWORD), SYSTEM);
    const login = await call(s, "POST", "/api/v1/auth/login/", {
      body: { username: "root", password: PASSWORD },
    });
    expect(login.status).toBe(200);
    const cookie = /^assay_session=[^;]*/.exec(login.headers.get("set-cookie") ?? "")![0];
    headers = { cookie, "x-csrf-token": login.json.csrf_token, "content-type": "application/json" };
  });
  afterAll(() => s?.close());

  const start = () => call(s, "POST", "/api/v1/orgs/acme/workflows/doc/runs/", { raw: "{}", headers });

  test("a run start over the session's runs budget names the session", async () => {
    expect((await start()).status).toBe(201);
    const r = await start();
    expect(r.status).toBe(429);
    const wait = Number(r.headers.get("retry-after"));
    expect(r.json).toEqual(
      errorBody(429, "rate_limited", `Too many runs started in this web session; retry in ${wait} s.`),
    );
  });

  test("a request over the session's budget names the session", async () => {
    // Two of the four counted already (the run starts); two more, then the refusal.
    for (let i = 0; i < 2; i++)
      expect((await call(s, "GET", "/api/v1/users/me/", { headers })).status).toBe(200);
    const r = await call(s, "GET", "/api/v1/users/me/", { headers });
    expect(r.status).toBe(429);
    const wait = Number(r.headers.get("retry-after"));
    expect(r.json).toEqual(
      errorBody(429, "rate_limited", `Too many requests in this web session; retry in ${wait} s.`),
    );
  });

  test("a token's 429 still names the token", async () => {
    const { token } = await s.user("tess", "acme", "viewer");
    for (let i = 0; i < 4; i++)
      expect((await call(s, "GET", "/api/v1/users/me/", { token })).status).toBe(200);
    const r = await call(s, "GET", "/api/v1/users/me/", { token });
    expect(r.status).toBe(429);
    const wait = Number(r.headers.get("retry-after"));
    expect(r.json).toEqual(
      errorBody(429, "rate_limited", `Too many requests with this token; retry in ${wait} s.`),
    );
  });
});
