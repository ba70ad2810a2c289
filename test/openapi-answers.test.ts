// The answers test/openapi.test.ts says the document promises, given by a real server: Location
// on every 201 (built from ASSAY_BASE_URL when set), 413 before routing on any method that carries
// a body, 429 on public operations once the address's budget is spent, and request-body bounds
// whose errors name the real bound.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const BASE = "https://assay.example.com";
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ base_url: BASE });
});
afterAll(() => s.close());

describe("201 answers carry the Location of what they created", () => {
  const post = (path: string, body: unknown) => call(s, "POST", path, { token: s.rootToken, body });

  test("createToken: the token's URL", async () => {
    const r = await post("/api/v1/users/me/tokens/", { name: "ci" });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`${BASE}/api/v1/users/me/tokens/${r.json.id}/`);
  });

  test("adminCreateUser and addMember: the user's and the membership's URLs", async () => {
    const u = await post("/api/v1/admin/users/", { username: "bea.m", password: "a long password" });
    expect(u.status).toBe(201);
    expect(u.headers.get("location")).toBe(`${BASE}/api/v1/admin/users/bea.m/`);
    const m = await post("/api/v1/orgs/acme/members/", { username: "bea.m", role: "viewer" });
    expect(m.status).toBe(201);
    expect(m.headers.get("location")).toBe(`${BASE}/api/v1/orgs/acme/members/bea.m/`);
  });

  test("adminCreateOrg: the org's URL as admins see it (the creator need not be a member)", async () => {
    const r = await post("/api/v1/admin/orgs/", { org_slug: "beta" });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`${BASE}/api/v1/admin/orgs/beta/`);
  });

  test("createWorkflow and addStep: the workflow's and the step's URLs", async () => {
    const w = await post("/api/v1/orgs/acme/workflows/", {
      slug: "orders",
      name: "Orders",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    expect(w.status).toBe(201);
    expect(w.headers.get("location")).toBe(`${BASE}/api/v1/orgs/acme/workflows/orders/`);
    const st = await post(`/api/v1/orgs/acme/workflows/${w.json.id}/steps/`, {
      name: "rules",
      validator: "text_rules",
      config: { max_lines: 10 },
    });
    expect(st.status).toBe(201);
    // Addressed by id, located by slug, like the workflow itself.
    expect(st.headers.get("location")).toBe(`${BASE}/api/v1/orgs/acme/workflows/orders/steps/${st.json.id}/`);
    const patched = await call(s, "PATCH", new URL(st.headers.get("location")!).pathname, {
      token: s.rootToken,
      body: { name: "rules 2" },
    });
    expect(patched.status).toBe(200);
  });
});

describe("limits before routing", () => {
  test("413 for a body over the limit on a route that takes none (DELETE, POST …/suspend/, logout)", async () => {
    const big = "x".repeat(3 * 1_048_576);
    for (const [method, path, token] of [
      ["DELETE", "/api/v1/users/me/tokens/1/", s.rootToken],
      ["POST", "/api/v1/admin/orgs/acme/suspend/", s.rootToken],
      ["POST", "/api/v1/auth/logout/", null],
    ] as const) {
      const r = await call(s, method, path, {
        token,
        raw: big,
        headers: { "content-type": "application/json" },
      });
      expect({ path, status: r.status, body: r.json }).toEqual({
        path,
        status: 413,
        body: errorBody(413, "payload_too_large"),
      });
    }
  });

  test("429 on the setup check and sign-out once the address's failed authentications are spent", async () => {
    const limited = await startTestServer({ rate_limit_disabled: false, rate_limit_ip_per_minute: 3 });
    try {
      for (let i = 0; i < 3; i++)
        expect((await call(limited, "GET", "/api/v1/users/me/", { token: `assay_bad${i}` })).status).toBe(
          401,
        );
      for (const [method, path] of [
        ["GET", "/api/v1/setup/"],
        ["POST", "/api/v1/auth/logout/"],
      ] as const) {
        const r = await call(limited, method, path);
        expect({ path, status: r.status, body: r.json }).toEqual({
          path,
          status: 429,
          body: errorBody(429, "rate_limited"),
        });
        expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      }
      // The probes never are.
      expect((await call(limited, "GET", "/healthz")).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe("body bounds: the error names the real bound", () => {
  test("400 for a sign-in username over 200 characters", async () => {
    const r = await call(s, "POST", "/api/v1/auth/login/", {
      body: { username: "a".repeat(201), password: "x" },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The request is invalid.", [
        { field: "username", code: "invalid", message: "must be a string of 1 to 200 characters" },
      ]),
    );
  });

  test("400 for a new password over 1024 characters, as for one under 8", async () => {
    for (const n of [1025, 4097]) {
      const r = await call(s, "POST", "/api/v1/users/me/password/", {
        token: s.rootToken,
        body: { current_password: "whatever", new_password: "p".repeat(n) },
      });
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", "The request is invalid.", [
          { field: "new_password", code: "invalid", message: "A password has 8 to 1024 characters." },
        ]),
      );
    }
  });
});
