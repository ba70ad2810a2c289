// The request metric (assay_http_request_duration_seconds) counts every answer under the status
// the client got: errors answered by the error plugin with a Response of their own (a 400 from
// body validation, a 503 from the database), requests that match no route (404, 405, OPTIONS,
// 401), and refusals of the limits plugin before any route runs (413, 429, a nesting 400).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { onPostgres, otherConnection } from "./helpers/backend.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { sample } from "./helpers/threads.ts";

const DURATION = "assay_http_request_duration_seconds_count";
const WORKFLOWS = "/api/v1/orgs/acme/workflows/";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    rate_limit_disabled: false,
    // One failed attempt per address and minute; the addresses come from X-Forwarded-For, so
    // the test's own requests (another address) are never refused.
    rate_limit_ip_per_minute: 1,
    trust_proxy: true,
    max_body_bytes: 1024,
  });
});
afterAll(() => s.close());

/** The count of one series, 0 when absent. */
async function counted(method: string, route: string, status: number): Promise<number> {
  const m = await call(s, "GET", "/metrics", { token: s.rootToken });
  expect(m.status).toBe(200);
  const n = sample(m.text, DURATION, { method, route, status: String(status) });
  return Number.isNaN(n) ? 0 : n;
}

/** Sends a request and checks that it is counted once under `route` and the status it got. */
async function countedOnce(
  method: string,
  route: string,
  send: () => Promise<{ status: number; json: unknown }>,
  status: number,
  body: unknown,
) {
  const before = await counted(method, route, status);
  const r = await send();
  expect(r.status).toBe(status);
  expect(r.json).toEqual(body);
  expect(await counted(method, route, status)).toBe(before + 1);
}

describe("errors answered by the error plugin", () => {
  test("a 400 from body validation is counted as 400, not 422", async () => {
    await countedOnce(
      "POST",
      "/api/v1/orgs/:org_slug/workflows/",
      () => call(s, "POST", WORKFLOWS, { token: s.rootToken, body: { slug: 5 } }),
      400,
      errorBody(400, "invalid_request", "The request is invalid.", expect.any(Array)),
    );
    expect(await counted("POST", "/api/v1/orgs/:org_slug/workflows/", 422)).toBe(0);
  });

  test.skipIf(onPostgres)(
    "a 503 while another connection holds the database is counted as 503",
    async () => {
      const other = await otherConnection(s);
      try {
        await other.sql("BEGIN EXCLUSIVE");
        await countedOnce(
          "POST",
          "/api/v1/users/me/tokens/",
          () => call(s, "POST", "/api/v1/users/me/tokens/", { token: s.rootToken, body: { name: "locked" } }),
          503,
          errorBody(503, "service_unavailable", "The database is not available right now; retry shortly."),
        );
      } finally {
        await other.sql("ROLLBACK");
        await other.close();
      }
      expect(await counted("POST", "/api/v1/users/me/tokens/", 500)).toBe(0);
    },
    30_000,
  );
});

describe("requests that match no route, under route=unmatched", () => {
  test("404 for an unknown path", async () => {
    await countedOnce(
      "GET",
      "unmatched",
      () => call(s, "GET", "/api/v1/nowhere", { token: s.rootToken }),
      404,
      errorBody(404, "not_found", "Not found."),
    );
  });

  test("405 for a method the path does not take", async () => {
    await countedOnce(
      "PUT",
      "unmatched",
      () => call(s, "PUT", "/healthz"),
      405,
      errorBody(405, "method_not_allowed", "Method PUT is not allowed on this path."),
    );
  });

  test("204 for OPTIONS on a path that exists", async () => {
    await countedOnce("OPTIONS", "unmatched", () => call(s, "OPTIONS", "/healthz"), 204, null);
  });

  test("401 for a bad token on an unknown path", async () => {
    await countedOnce(
      "GET",
      "unmatched",
      () =>
        call(s, "GET", "/api/v1/nowhere", {
          token: "assay_bad",
          headers: { "x-forwarded-for": "203.0.113.1" },
        }),
      401,
      errorBody(401, "authentication_required", "Invalid token."),
    );
    expect(await counted("GET", "unmatched", 200)).toBe(0);
  });
});

describe("refusals of the limits plugin, before any route", () => {
  test("413 for a body over the limit, before authentication", async () => {
    await countedOnce(
      "POST",
      "unmatched",
      () => call(s, "POST", WORKFLOWS, { raw: "x".repeat(2048), headers: { "content-type": "text/plain" } }),
      413,
      errorBody(413, "payload_too_large", "The request body exceeds the limit of 1024 bytes."),
    );
  });

  test("400 for a body nested too deeply", async () => {
    await countedOnce(
      "POST",
      "unmatched",
      () =>
        call(s, "POST", WORKFLOWS, {
          token: s.rootToken,
          raw: `${"[".repeat(300)}${"]".repeat(300)}`,
          headers: { "content-type": "application/json" },
        }),
      400,
      errorBody(400, "invalid_request", "The request body is nested too deeply.", [
        { field: "body", code: "too_deep", message: "Nesting deeper than 256 levels is not accepted." },
      ]),
    );
  });

  test("429 for an address whose failed attempts are spent", async () => {
    const from = { "x-forwarded-for": "203.0.113.2" };
    const bad = () => call(s, "GET", "/api/v1/users/me/", { token: "assay_bad", headers: from });
    expect((await bad()).status).toBe(401);
    await countedOnce(
      "GET",
      "unmatched",
      bad,
      429,
      errorBody(
        429,
        "rate_limited",
        expect.stringMatching(
          /^Too many failed authentication attempts from this address; retry in \d+ s\.$/,
        ),
      ),
    );
  });
});
