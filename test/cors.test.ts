// CORS (ASSAY_CORS_ORIGINS) and OPTIONS, against real servers: off by default; a listed origin
// gets preflights answered per the Fetch standard and may read the API's answer headers; `*`
// serves any origin; credentials are never allowed. Allow lists HEAD wherever GET is.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ConfigError, loadConfig } from "../src/config.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const APP = "https://app.example.com";
const WF = "/api/v1/orgs/acme/workflows/wf/";
const preflight = (s: TestServer, path: string, origin: string, method = "POST", headers = "authorization") =>
  fetch(s.url + path, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers },
  });

let off: TestServer;
let listed: TestServer;
let any: TestServer;
beforeAll(async () => {
  [off, listed, any] = await Promise.all([
    startTestServer({ rate_limit_disabled: false }),
    startTestServer({ cors_origins: `${APP}, http://localhost:5173` }),
    startTestServer({ cors_origins: "*" }),
  ]);
});
afterAll(() => Promise.all([off.close(), listed.close(), any.close()]));

describe("OPTIONS and Allow", () => {
  test("204 OPTIONS lists the path's methods, HEAD with GET, and OPTIONS", async () => {
    const r = await fetch(off.url + WF, { method: "OPTIONS" });
    expect(r.status).toBe(204);
    expect(r.headers.get("allow")).toBe("GET, HEAD, PUT, PATCH, DELETE, OPTIONS");
    expect(await r.text()).toBe("");
    const runs = await fetch(`${off.url}${WF}runs`, { method: "OPTIONS" }); // without the slash too
    expect(runs.headers.get("allow")).toBe("POST, OPTIONS");
  });

  test("405 method_not_allowed carries the same Allow, and the rate-limit headers of its token", async () => {
    const r = await call(off, "POST", WF, { token: off.rootToken, body: {} });
    expect(r.status).toBe(405);
    expect(r.json).toEqual(errorBody(405, "method_not_allowed", "Method POST is not allowed on this path."));
    expect(r.headers.get("allow")).toBe("GET, HEAD, PUT, PATCH, DELETE, OPTIONS");
    expect(r.headers.get("ratelimit-policy")).toBe('"default";q=1200;w=60, "user";q=2400;w=60');
    expect(r.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+, "user";r=\d+;t=\d+$/);
  });

  test("404 for an unknown path (OPTIONS included); authenticated, it carries RateLimit too", async () => {
    const r = await call(off, "GET", "/api/v1/nothing-here/", { token: off.rootToken });
    expect(r.json).toEqual(errorBody(404, "not_found", "Not found."));
    expect(r.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+, "user";r=\d+;t=\d+$/);
    const o = await fetch(`${off.url}/api/v1/nothing-here/`, { method: "OPTIONS" });
    expect(o.status).toBe(404);
    // A token that fails is a 401 here too, counted against the address like on any route: an
    // unknown path is no oracle for guesses (it answered 404, uncounted, with or without budget).
    for (const [method, path] of [
      ["PUT", "/api/v1/orgs/"],
      ["GET", "/api/v1/nothing-here/"],
    ] as const) {
      const anon = await call(off, method, path, { token: "assay_unknown" });
      // The same answer as a route gives for that token.
      expect({ status: anon.status, body: anon.json }).toEqual({
        status: 401,
        body: errorBody(401, "authentication_required", "Invalid token."),
      });
      expect(anon.headers.get("ratelimit")).toMatch(/^"ip";r=\d+;t=\d+$/);
    }
    // Without an Authorization header: the 404 or 405 as it is.
    expect((await call(off, "PUT", "/api/v1/orgs/")).status).toBe(405);
    // A route's "." is a dot: /api/v1/openapiXjson is no path (it was a 405, and OPTIONS a 204).
    for (const method of ["DELETE", "OPTIONS"]) {
      const r = await fetch(`${off.url}/api/v1/openapiXjson`, { method });
      expect({ method, status: r.status, allow: r.headers.get("allow") }).toEqual({
        method,
        status: 404,
        allow: null,
      });
    }
    expect((await fetch(`${off.url}/api/v1/openapi.json`, { method: "DELETE" })).status).toBe(405);
  });
});

describe("CORS off (the default)", () => {
  test("no CORS header, even for an Origin", async () => {
    const r = await fetch(`${off.url}/api/v1/orgs/`, {
      headers: { origin: APP, authorization: `Bearer ${off.rootToken}` },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    expect(r.headers.get("vary")).toBeNull();
    const p = await preflight(off, WF, APP, "PATCH");
    expect(p.status).toBe(204);
    expect([...p.headers.keys()].filter((k) => k.startsWith("access-control-"))).toEqual([]);
  });
});

describe("CORS for listed origins", () => {
  test("a preflight is answered: origin, the path's methods, the API's headers, max age; no credentials", async () => {
    const r = await preflight(
      listed,
      `${WF}runs/`,
      APP,
      "POST",
      "authorization,content-type,idempotency-key,prefer",
    );
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe(APP);
    expect(r.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    const allowed = r.headers.get("access-control-allow-headers")!.toLowerCase().split(", ");
    for (const h of [
      "authorization",
      "content-type",
      "prefer",
      "idempotency-key",
      "x-filename",
      "content-encoding",
      "x-submission-mode",
    ])
      expect(allowed).toContain(h);
    expect(r.headers.get("access-control-max-age")).toBe("7200");
    expect(r.headers.get("vary")).toContain("Origin");
    expect(r.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("an actual request's answer names the origin and exposes the API's headers", async () => {
    const r = await fetch(`${listed.url}${WF}runs/`, {
      method: "POST",
      headers: {
        origin: "http://localhost:5173",
        authorization: `Bearer ${listed.rootToken}`,
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(r.status).toBe(404); // no such workflow: the error is readable cross-origin too
    expect(r.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    const exposed = r.headers.get("access-control-expose-headers")!.split(", ");
    for (const h of [
      "Location",
      "Retry-After",
      "RateLimit-Policy",
      "RateLimit",
      "Idempotent-Replayed",
      "Preference-Applied",
    ])
      expect(exposed).toContain(h);
    expect(r.headers.get("vary")).toBe("Origin");
    expect(r.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("a 401 is readable by a listed origin", async () => {
    const r = await fetch(`${listed.url}/api/v1/orgs/`, { headers: { origin: APP } });
    expect(r.status).toBe(401);
    expect(r.headers.get("access-control-allow-origin")).toBe(APP);
  });

  test("another origin gets no CORS header (and the answer varies on Origin)", async () => {
    const p = await preflight(listed, WF, "https://evil.example.com", "DELETE");
    expect(p.status).toBe(204);
    expect(p.headers.get("access-control-allow-origin")).toBeNull();
    expect(p.headers.get("access-control-allow-methods")).toBeNull();
    const r = await fetch(`${listed.url}/api/v1/orgs/`, {
      headers: { origin: "https://evil.example.com", authorization: `Bearer ${listed.rootToken}` },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    expect(r.headers.get("vary")).toBe("Origin");
  });
});

describe("CORS for any origin (*)", () => {
  test("* for bearer-token callers: no credentials, no Vary on Origin", async () => {
    const r = await fetch(`${any.url}/api/v1/orgs/`, {
      headers: { origin: "https://anywhere.example", authorization: `Bearer ${any.rootToken}` },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-allow-credentials")).toBeNull();
    expect(r.headers.get("vary")).toBeNull();
    const p = await preflight(any, "/api/v1/orgs/", "https://anywhere.example", "GET");
    expect(p.headers.get("access-control-allow-origin")).toBe("*");
    expect(p.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS");
  });
});

describe("ASSAY_CORS_ORIGINS is checked at start", () => {
  const problems = (v: string) => {
    try {
      loadConfig({ ASSAY_CORS_ORIGINS: v });
      return [];
    } catch (e) {
      return (e as ConfigError).problems;
    }
  };
  test("origins, or * alone", () => {
    expect(problems("https://a.example.com, http://localhost:3000")).toEqual([]);
    expect(problems("*")).toEqual([]);
    expect(problems("https://a.example.com/")).toEqual([
      'ASSAY_CORS_ORIGINS: CORS origins: "https://a.example.com/" is not an origin like https://app.example.com (scheme, host, optional port)',
    ]);
    expect(problems("app.example.com")).toHaveLength(1);
    expect(problems("https://a.example.com/app")).toHaveLength(1);
    expect(problems("*, https://a.example.com")).toEqual([
      "ASSAY_CORS_ORIGINS: CORS origins: * allows any origin; list no other",
    ]);
    expect(loadConfig({}, { cors_origins: APP }).cors_origins).toBe(APP); // --cors-origins
  });
});
