// Every list's count comes with its page in one statement (countedPage, src/db/program.ts), whose
// count is the left side of a LEFT JOIN: a page past the end, or a list with nothing in it, is
// one row of the count and nulls. That row must give the list's count and no item, on every list.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "orders",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
    token: s.rootToken,
    raw: "{}",
    headers: { "content-type": "application/json" },
  });
  expect(run.status).toBe(201);
});
afterAll(() => s.close());

const LISTS = [
  "/api/v1/orgs/",
  "/api/v1/orgs/acme/workflows/",
  "/api/v1/orgs/acme/workflows/orders/versions/",
  "/api/v1/orgs/acme/runs/",
  "/api/v1/orgs/acme/runs/?status=succeeded",
  "/api/v1/orgs/acme/members/",
  "/api/v1/orgs/acme/audit/",
  "/api/v1/users/me/tokens/",
  "/api/v1/admin/users/",
  "/api/v1/admin/orgs/",
  "/api/v1/admin/audit/",
];
const EMPTY = [
  "/api/v1/orgs/acme/webhooks/",
  "/api/v1/orgs/acme/schemas/",
  "/api/v1/orgs/acme/runs/?status=failed",
];
const join = (path: string, q: string) => `${path}${path.includes("?") ? "&" : "?"}${q}`;

test.each(LISTS)("%s: a page past the end is empty and says the list's count", async (path) => {
  const first = await call(s, "GET", join(path, "page_size=1"), { token: s.rootToken });
  expect(first.status).toBe(200);
  expect(first.json.count).toBeGreaterThan(0);
  expect(first.json.results).toHaveLength(1);
  const past = await call(s, "GET", join(path, "page_size=1&page=999"), { token: s.rootToken });
  expect(past.status).toBe(200);
  expect({ count: past.json.count, results: past.json.results, next: past.json.next }).toEqual({
    count: first.json.count,
    results: [],
    next: null,
  });
});

test.each(EMPTY)("%s: an empty list is count 0 and no item, on its first page and past it", async (path) => {
  for (const q of ["", "page=2"]) {
    const r = await call(s, "GET", q ? join(path, q) : path, { token: s.rootToken });
    expect(r.status).toBe(200);
    expect({ count: r.json.count, results: r.json.results, next: r.json.next }).toEqual({
      count: 0,
      results: [],
      next: null,
    });
  }
});
