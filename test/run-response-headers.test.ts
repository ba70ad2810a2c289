// POST …/runs/ answers with a Response of its own (src/runs/routes.ts): the headers the other
// hooks set (RateLimit-*, Cache-Control) must still reach the client, and the request metric must
// still carry the answer's status.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const path = "/api/v1/orgs/acme/workflows/hdr/runs/";
beforeAll(async () => {
  s = await startTestServer({ rate_limit_disabled: false });
  await createWorkflow(s, s.rootToken, {
    slug: "hdr",
    allowed_file_types: ["JSON"],
    steps: [{ name: "schema", validator: "json_schema", config: { schema: { type: "object" } } }],
  });
});
afterAll(() => s.close());

const post = (extra: Record<string, string> = {}) =>
  call(s, "POST", path, {
    token: s.rootToken,
    raw: "{}",
    headers: { "content-type": "application/json", ...extra },
  });

test("a 201 carries Location, Cache-Control, the rate-limit headers and its own Content-Type", async () => {
  const r = await post();
  expect(r.status).toBe(201);
  expect(r.headers.get("location")).toBe((r.json as { url: string }).url);
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.headers.get("content-type")).toBe("application/json");
  expect(r.headers.get("ratelimit-policy")).toContain('"runs";q=');
  expect(r.headers.get("ratelimit")).toContain('"runs";r=');
});

test("a 202 carries Location, Retry-After and Preference-Applied next to them", async () => {
  const r = await post({ prefer: "respond-async" });
  expect(r.status).toBe(202);
  expect(r.headers.get("location")).toBe((r.json as { url: string }).url);
  expect(r.headers.get("retry-after")).toBe("1");
  expect(r.headers.get("preference-applied")).toBe("respond-async");
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.headers.get("ratelimit")).toContain('"runs";r=');
});

test("the request metric counts each answer under its status", async () => {
  const m = await call(s, "GET", "/metrics", { token: s.rootToken });
  const count = (status: number) =>
    Number(
      new RegExp(
        `assay_http_request_duration_seconds_count\\{(?:node="[^"]+",)?method="POST",route="/api/v1/orgs/:org_slug/workflows/:workflow/runs/",status="${status}"\\} (\\d+)`,
      ).exec(m.text)?.[1] ?? 0,
    );
  expect(count(201)).toBe(1);
  expect(count(202)).toBe(1);
  expect(count(200)).toBe(0);
});
