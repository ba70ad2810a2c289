// A save-time problem's message is cut to MAX_CONFIG_ISSUE_CHARS: a JSON Schema's problems quote
// the JSON Pointer where each is, as long as the path of keys above it, so 60 invalid leaves under
// 100 keys of 10,000 characters (a 1 MB draft) answered a 34 MB 400 (docs/security.md).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAX_CONFIG_ISSUE_CHARS, MAX_CONFIG_ISSUES } from "../src/validators/limits.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
});
afterAll(() => s.close());

/** `leaves` schemas of an invalid type under `depth` levels of `key`-long property names. */
function spine(key: number, depth: number, leaves: number): Record<string, unknown> {
  let o: Record<string, unknown> = {
    type: "object",
    properties: Object.fromEntries(Array.from({ length: leaves }, (_, i) => [`a${i}`, { type: 5 }])),
  };
  for (let d = 0; d < depth; d++) o = { type: "object", properties: { [`k${d}`.padEnd(key, "x")]: o } };
  return o;
}

/**
 * Every problem of spine(10_000, 100, 60): its pointer starts with the outermost 10,000-character
 * key, so each message is cut there, to MAX_CONFIG_ISSUE_CHARS with its "…". The engine reports
 * up to MAX_CONFIG_ISSUES of them (34 here): all of them this one.
 */
const issues = (field: string, n: number) =>
  Array.from({ length: n }, () => ({
    field,
    code: "invalid_schema",
    message: `${`/properties/${"k99".padEnd(10_000, "x")}`.slice(0, MAX_CONFIG_ISSUE_CHARS - 1)}…`,
  }));

test("400 whose messages end in … at the bound: a workflow step's schema", async () => {
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: author,
    body: {
      slug: "deep",
      name: "deep",
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "json_schema", config: { schema: spine(10_000, 100, 60) } }],
    },
  });
  expect(r.status).toBe(400);
  expect(r.json).toEqual({
    detail: "The workflow definition is invalid.",
    code: "invalid_request",
    status: 400,
    errors: issues("steps[0].config.schema", r.json.errors.length),
  });
  expect(r.json.errors.length).toBeWithin(1, MAX_CONFIG_ISSUES + 1);
  expect(r.text.length).toBeLessThan(r.json.errors.length * (MAX_CONFIG_ISSUE_CHARS + 200));
});

test("400 whose messages end in … at the bound: a stored schema", async () => {
  const r = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
    token: author,
    body: { uri: "https://example.com/deep.json", kind: "json_schema", schema: spine(10_000, 100, 60) },
  });
  expect(r.status).toBe(400);
  expect(r.json).toEqual({
    detail: "The schema is invalid.",
    code: "invalid_request",
    status: 400,
    errors: issues("schema", r.json.errors.length),
  });
  expect(r.json.errors.length).toBeWithin(1, MAX_CONFIG_ISSUES + 1);
});
