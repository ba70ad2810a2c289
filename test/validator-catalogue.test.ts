// GET /api/v1/validators/ is a list like the others (CONTRACT §3): page and page_size are
// honoured, and out-of-range values are a 400, not ignored.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { VALIDATORS } from "../src/validators/registry.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let viewer: string;
beforeAll(async () => {
  s = await startTestServer();
  viewer = (await s.user("viewer", "acme", "viewer")).token;
});
afterAll(() => s.close());

const PATH = "/api/v1/validators/";
const slugs = VALIDATORS.map((v) => v.slug);

describe("GET /api/v1/validators/ pages", () => {
  test("200: without parameters, the whole catalogue in one page", async () => {
    const r = await call(s, "GET", PATH, { token: viewer });
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(slugs.length);
    expect(r.json.results.map((v: { slug: string }) => v.slug)).toEqual(slugs);
    expect([r.json.next, r.json.previous]).toEqual([null, null]);
  });

  test("200: page_size=2 pages through it, with absolute next and previous", async () => {
    const first = await call(s, "GET", `${PATH}?page_size=2`, { token: viewer });
    expect(first.json.count).toBe(slugs.length);
    expect(first.json.results.map((v: { slug: string }) => v.slug)).toEqual(slugs.slice(0, 2));
    expect(first.json.next).toBe(`${s.url}${PATH}?page_size=2&page=2`);
    expect(first.json.previous).toBeNull();
    const second = await call(s, "GET", `${PATH}?page=2&page_size=2`, { token: viewer });
    expect(second.json.results.map((v: { slug: string }) => v.slug)).toEqual(slugs.slice(2, 4));
    expect(second.json.previous).toBe(`${s.url}${PATH}?page=1&page_size=2`);
    const last = Math.ceil(slugs.length / 2);
    const end = await call(s, "GET", `${PATH}?page=${last}&page_size=2`, { token: viewer });
    expect(end.json.results.map((v: { slug: string }) => v.slug)).toEqual(slugs.slice((last - 1) * 2));
    expect(end.json.next).toBeNull();
  });

  test("200: a page past the end is empty, with previous", async () => {
    const r = await call(s, "GET", `${PATH}?page=99`, { token: viewer });
    expect(r.json.results).toEqual([]);
    expect(r.json.next).toBeNull();
    expect(r.json.previous).toBe(`${s.url}${PATH}?page=1`);
  });

  test.each([
    ["page=0", "page", "page must be an integer of at least 1."],
    ["page=abc", "page", "page must be an integer of at least 1."],
    ["page_size=0", "page_size", "page_size must be an integer from 1 to 200."],
    ["page_size=201", "page_size", "page_size must be an integer from 1 to 200."],
    ["page_size=9999", "page_size", "page_size must be an integer from 1 to 200."],
  ])("400 for %s", async (q, field, message) => {
    const r = await call(s, "GET", `${PATH}?${q}`, { token: viewer });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "Invalid pagination parameters.", [
        { field, code: "invalid", message },
      ]),
    );
  });
});
