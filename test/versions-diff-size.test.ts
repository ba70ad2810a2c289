// The diff of two versions is bounded by what was saved, not by depth × leaves: each change names
// its full JSON Pointer, so 1000 changed leaves under one deep spine of long keys repeated that
// spine 1000 times (a 490 KB workflow saved twice answered 481 MB to a Viewer and held the
// event loop 2.7 s; docs/security.md). The changes' paths share a budget (MAX_DIFF_PATH_CHARS).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAX_DIFF_PATH_CHARS } from "../src/workflows/diff.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
let viewer: string;

const WF = "/api/v1/orgs/acme/workflows/deep";
const KEY = 500;
const DEPTH = 200;
const LEAVES = 1000;

/** A schema with an unknown keyword holding DEPTH levels of KEY-long keys over LEAVES leaves of `v`. */
function deepSchema(v: number) {
  let o: Record<string, unknown> = Object.fromEntries(Array.from({ length: LEAVES }, (_, i) => [`a${i}`, v]));
  for (let d = 0; d < DEPTH; d++) o = { [`k${d}`.padEnd(KEY, "x")]: o };
  return { schema: { type: "object", "x-meta": o } };
}

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
  viewer = (await s.user("vic", "acme", "viewer")).token;
  await createWorkflow(s, author, {
    slug: "deep",
    allowed_file_types: ["JSON"],
    steps: [{ name: "schema", validator: "json_schema", config: deepSchema(1) }],
  });
  const put = await call(s, "PUT", `${WF}/`, {
    token: author,
    body: {
      slug: "deep",
      name: "deep",
      allowed_file_types: ["JSON"],
      steps: [{ name: "schema", validator: "json_schema", config: deepSchema(2) }],
    },
  });
  expect(put.status).toBe(200);
});
afterAll(() => s.close());

test("200 with truncated: true once the changes' paths pass their budget, not 1000 copies of the spine", async () => {
  const r = await call(s, "GET", `${WF}/versions/2/diff/`, { token: viewer });
  expect(r.status).toBe(200);
  const changes = r.json.changes as { path: string; op: string; before: unknown; after: unknown }[];
  expect(r.json.truncated).toBe(true);
  const spine = changes[0]!.path.slice(0, changes[0]!.path.lastIndexOf("/"));
  // /steps/{id}/config/schema/x-meta, then DEPTH keys of KEY characters.
  expect(spine.length).toBeGreaterThan(DEPTH * KEY);
  const perChange = spine.length + "/a999".length;
  expect(changes.length).toBe(Math.floor(MAX_DIFF_PATH_CHARS / perChange));
  changes.forEach((c, i) => {
    expect(c).toMatchObject({ path: `${spine}/a${i}`, op: "changed", before: 1, after: 2 });
  });
  expect(changes.reduce((n, c) => n + c.path.length, 0)).toBeLessThanOrEqual(MAX_DIFF_PATH_CHARS);
  // Bounded by the budget and the versions themselves (~200 KB each), not by 1000 × 100 KB.
  expect(r.text.length).toBeLessThan(2 * MAX_DIFF_PATH_CHARS);
});
