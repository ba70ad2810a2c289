import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { VERSION } from "../src/version.ts";
import { onPostgres, otherConnection } from "./helpers/backend.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

describe("unauthenticated endpoints", () => {
  test("200 /healthz with the version", async () => {
    const r = await call(s, "GET", "/healthz");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: "ok", version: VERSION });
  });
  test("200 /readyz checks the database", async () => {
    const r = await call(s, "GET", "/readyz");
    expect(r.status).toBe(200);
    expect(r.json.status).toBe("ready");
  });
  // SQLite: writes wait out the busy timeout (5 s) and answer 503 while another process holds the
  // write lock, reads go on (WAL). Ready means both work: the probe takes the lock and lets go.
  describe.skipIf(onPostgres)("/readyz while another process holds the SQLite database", () => {
    test("503 service_unavailable while it holds the write lock, 200 once it lets go", async () => {
      const other = await otherConnection(s);
      try {
        await other.sql("BEGIN EXCLUSIVE");
        const r = await call(s, "GET", "/readyz");
        expect(r.status).toBe(503);
        expect(r.headers.get("retry-after")).toBe("5");
        expect(r.json).toEqual(errorBody(503, "service_unavailable", "The database is not available."));
      } finally {
        await other.sql("ROLLBACK");
        await other.close();
      }
      expect((await call(s, "GET", "/readyz")).status).toBe(200);
    });
    test("200 while it only reads (a backup, a CLI listing)", async () => {
      const other = await otherConnection(s);
      try {
        await other.sql("BEGIN");
        await other.sql("SELECT count(*) AS n FROM users");
        const r = await call(s, "GET", "/readyz");
        expect(r.status).toBe(200);
        expect(r.json).toEqual({ status: "ready", version: VERSION, database: "sqlite" });
      } finally {
        await other.sql("ROLLBACK");
        await other.close();
      }
    });
  });
  test("200 /api/v1/openapi.json lists the routes with the bearer scheme and error schemas", async () => {
    const r = await call(s, "GET", "/api/v1/openapi.json");
    expect(r.status).toBe(200);
    expect(r.json.openapi).toMatch(/^3\./);
    expect(r.json.components.securitySchemes.bearer).toEqual(
      expect.objectContaining({ type: "http", scheme: "bearer" }),
    );
    const wf = r.json.paths["/api/v1/orgs/{org_slug}/workflows/"];
    expect(wf.get.responses["200"]).toBeDefined();
    expect(wf.get.responses["401"]).toBeDefined();
    expect(wf.post.requestBody).toBeDefined();
  });
  test("200 /api/docs serves an HTML page", async () => {
    const r = await call(s, "GET", "/api/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
  });
});

describe("the error contract", () => {
  test("404 not_found for an unknown route, as the error object", async () => {
    const r = await call(s, "GET", "/nope");
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.json).toEqual(errorBody(404, "not_found", "Not found."));
  });
  test("404 not_found for an unknown /api/v1 route", async () => {
    const r = await call(s, "GET", "/api/v1/nothing-here/", { token: s.rootToken });
    expect(r.json).toEqual(errorBody(404, "not_found", "Not found."));
  });
  test("405 method_not_allowed with Allow on a known path", async () => {
    const r = await call(s, "DELETE", "/healthz");
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toContain("GET");
    expect(r.json).toEqual(
      errorBody(405, "method_not_allowed", "Method DELETE is not allowed on this path."),
    );
  });
  test("405 on a parametrised path without its trailing slash", async () => {
    const r = await call(s, "PUT", "/api/v1/orgs/acme", { token: s.rootToken });
    expect(r.status).toBe(405);
    expect(r.json.code).toBe("method_not_allowed");
  });
  test("400 invalid_request for a malformed JSON body", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      raw: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The request body is malformed.", [
        { field: "body", code: "parse_error", message: expect.any(String) },
      ]),
    );
  });
});
