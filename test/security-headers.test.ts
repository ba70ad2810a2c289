// Security headers on every answer (docs/security.md, hole 1 of issue #19). Submitted content is
// a download of plain bytes, never a document of our origin: an XML file carrying XHTML <script>
// was served inline as application/xml and ran as the admin who opened it. The browser half of
// this (real Chromium, a session cookie) is test/browser/content-xss.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let token: string;
beforeAll(async () => {
  s = await startTestServer();
  token = (await s.user("ed", "acme", "author")).token;
  await createWorkflow(s, token, {
    slug: "xml",
    allowed_file_types: ["XML"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  await createWorkflow(s, token, {
    slug: "text",
    allowed_file_types: ["TEXT", "JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; sandbox";

function expectApiHeaders(h: Headers) {
  expect(h.get("content-security-policy")).toBe(API_CSP);
  expect(h.get("x-content-type-options")).toBe("nosniff");
  expect(h.get("x-frame-options")).toBe("DENY");
  expect(h.get("referrer-policy")).toBe("no-referrer");
  expect(h.get("cross-origin-resource-policy")).toBe("same-origin");
}

const submit = (wf: string, body: string, headers: Record<string, string>) =>
  call(s, "POST", `/api/v1/orgs/acme/workflows/${wf}/runs/`, { token, raw: body, headers });
const content = (id: string) =>
  fetch(`${s.url}/api/v1/orgs/acme/runs/${id}/content/`, { headers: { authorization: `Bearer ${token}` } });

describe("every API answer carries the security headers", () => {
  const cases: [string, string, string, number, Record<string, string>?][] = [
    ["200 JSON", "GET", "/api/v1/users/me/", 200],
    ["200 without authentication", "GET", "/healthz", 200],
    ["200 the OpenAPI document", "GET", "/api/v1/openapi.json", 200],
    ["401", "GET", "/api/v1/users/me/", 401, {}],
    ["404 of an unknown path", "GET", "/api/v1/nope/", 404],
    ["405", "DELETE", "/healthz", 405],
    [
      "400 of a malformed body",
      "POST",
      "/api/v1/users/me/tokens/",
      400,
      { "content-type": "application/json" },
    ],
  ];
  for (const [name, method, path, status, headers] of cases)
    test(name, async () => {
      const r = await call(s, method, path, {
        // The 401 case sends none; the malformed body needs a token to be read at all.
        token: name === "401" ? null : token,
        headers,
        raw: method === "POST" ? "{" : undefined,
      });
      expect(r.status).toBe(status);
      expectApiHeaders(r.headers);
    });

  test("201 of a run start (the route builds its own Response)", async () => {
    const r = await submit("text", "hello", { "content-type": "text/plain" });
    expect(r.status).toBe(201);
    expectApiHeaders(r.headers);
  });
});

// Answers are per-user: no shared cache may keep one, an error no more than a success (a 401 or
// 404 kept by a proxy would be served to the next client of that URL).
describe("every API answer, errors included, carries Cache-Control: no-store", () => {
  const cases: [string, string, string, string | null, BodyInit | undefined, unknown][] = [
    ["200", "GET", "/api/v1/users/me/", "ed", undefined, null],
    [
      "401 without a token",
      "GET",
      "/api/v1/users/me/",
      null,
      undefined,
      errorBody(
        401,
        "authentication_required",
        "Authentication credentials were not provided or are invalid.",
      ),
    ],
    [
      "404 of an unknown path",
      "GET",
      "/api/v1/nope/",
      "ed",
      undefined,
      errorBody(404, "not_found", "Not found."),
    ],
    [
      "405",
      "DELETE",
      "/healthz",
      null,
      undefined,
      errorBody(405, "method_not_allowed", "Method DELETE is not allowed on this path."),
    ],
    [
      "400 of an invalid body",
      "POST",
      "/api/v1/users/me/tokens/",
      "ed",
      '{"name": 5}',
      errorBody(400, "invalid_request", "The request is invalid.", expect.any(Array)),
    ],
    [
      "413 before authentication",
      "POST",
      "/api/v1/users/me/tokens/",
      null,
      "x".repeat(3_000_000),
      errorBody(413, "payload_too_large", "The request body exceeds the limit of 2097152 bytes."),
    ],
  ];
  for (const [name, method, path, who, raw, body] of cases)
    test(name, async () => {
      const r = await call(s, method, path, {
        token: who ? token : null,
        raw,
        headers: raw ? { "content-type": "application/json" } : {},
      });
      expect(r.headers.get("cache-control")).toBe("no-store");
      if (body === null) expect(r.status).toBe(200);
      else expect(r.json).toEqual(body);
    });
});

describe("GET …/content/ is a download, never a document", () => {
  const hostile: [string, string, string][] = [
    [
      "XML with an XHTML script",
      "application/xml",
      '<r><h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script></r>',
    ],
    [
      "XHTML",
      "application/xhtml+xml",
      '<html xmlns="http://www.w3.org/1999/xhtml"><body><script>alert(1)</script></body></html>',
    ],
    // image/svg+xml is refused (415), but an XML type renders an <svg> root as SVG all the same.
    ["SVG", "application/xml", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
    ["HTML sent as text", "text/plain", "<!doctype html><script>alert(1)</script>"],
  ];
  for (const [name, type, body] of hostile)
    test(`${name} (${type}): attachment, octet-stream, nosniff, a sandboxing CSP; the exact bytes`, async () => {
      const wf = type === "text/plain" ? "text" : "xml";
      const r = await submit(wf, body, { "content-type": type, "x-filename": "doc.xml" });
      expect(r.status).toBe(201);
      expect(r.json.submission.content_type).toBe(type);
      const c = await content(r.json.id);
      expect(c.status).toBe(200);
      expect(c.headers.get("content-type")).toBe("application/octet-stream");
      expect(c.headers.get("content-disposition")).toBe(
        `attachment; filename="doc.xml"; filename*=UTF-8''doc.xml`,
      );
      expect(c.headers.get("x-content-type-options")).toBe("nosniff");
      expect(c.headers.get("content-security-policy")).toBe(
        "default-src 'none'; frame-ancestors 'none'; sandbox",
      );
      expect(c.headers.get("cross-origin-resource-policy")).toBe("same-origin");
      expect(c.headers.get("cache-control")).toBe("no-store");
      expect(await c.text()).toBe(body);
    });

  test("without a filename the download is named after the run and its file type", async () => {
    const r = await submit("xml", "<a/>", { "content-type": "application/xml" });
    const c = await content(r.json.id);
    expect(c.headers.get("content-disposition")).toBe(
      `attachment; filename="run-${r.json.id}.xml"; filename*=UTF-8''run-${r.json.id}.xml`,
    );
  });

  test("a name with quotes and non-ASCII letters: a safe fallback and the exact name (RFC 8187)", async () => {
    const name = 'caf\u00e9 "x";y.xml';
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/xml/runs/", {
      token,
      body: { content: "<a/>", content_type: "application/xml", filename: name },
    });
    expect(r.status).toBe(201);
    const c = await content(r.json.id);
    expect(c.headers.get("content-disposition")).toBe(
      `attachment; filename="caf_ _x__y.xml"; filename*=UTF-8''caf%C3%A9%20%22x%22%3By.xml`,
    );
  });
});

describe("pages", () => {
  test("the web app keeps its own strict policy, with the other headers added", async () => {
    const r = await fetch(`${s.url}/app/`);
    const csp = r.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(r.headers.get("cross-origin-opener-policy")).toBe("same-origin");
    expect(r.headers.get("cross-origin-resource-policy")).toBe("same-origin");
    expect(r.headers.get("referrer-policy")).toBe("same-origin");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("the API docs page loads its viewer from this server only, and no inline script runs", async () => {
    const r = await fetch(`${s.url}/api/docs`);
    expect(r.status).toBe(200);
    const csp = r.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("http");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("script-src 'unsafe-inline'");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("reports: the HTML report is sandboxed; the XML one gets the API's policy", async () => {
    const r = await submit("xml", "<a>", { "content-type": "application/xml" });
    const path = `/api/v1/orgs/acme/runs/${r.json.id}/report/`;
    const html = await call(s, "GET", `${path}?format=html`, { token });
    expect(html.headers.get("content-security-policy")).toEndWith("; sandbox");
    const junit = await call(s, "GET", `${path}?format=junit`, { token });
    expect(junit.headers.get("content-security-policy")).toBe(API_CSP);
  });
});
