// Walking a JSON Schema on the HTTP thread costs its size, not its size times its depth: the
// references of a workflow's steps are collected there before the check thread gets the draft
// (src/validators/json-schema/refs.ts), and each schema object read its ancestors back from the
// root by its JSON Pointer. 40,000 leaves under 100 keys of 5,000 characters (1 MB) held every
// request 230 s (docs/security.md). The inline lane's analysis (bounded.ts) hashed each pointer
// whole: past a budget of pointer text it leaves the schema to a worker.
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  MAX_ANALYSED_SCHEMAS,
  MAX_POINTER_CHARS,
  schemaWeight,
} from "../src/validators/json-schema/bounded.ts";
import { externalRefs } from "../src/validators/json-schema/refs.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
});
afterAll(() => s.close());

/** `leaves` empty schemas under `depth` levels of `properties` named by `key`-long keys. */
function spine(key: number, depth: number, leaves: number): Record<string, unknown> {
  let o: Record<string, unknown> = {
    properties: Object.fromEntries(Array.from({ length: leaves }, (_, i) => [`a${i}`, {}])),
  };
  for (let d = 0; d < depth; d++) o = { properties: { [`k${d}`.padEnd(key, "x")]: o } };
  return o;
}

test("a workflow whose schema holds 50,000 leaves under a 1 MB spine: its 400", async () => {
  const schema = spine(10_000, 100, 50_000);
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: author,
    body: {
      slug: "spine",
      name: "spine",
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "json_schema", config: { schema } }],
    },
  });
  expect(r.status).toBe(400);
  expect(r.json).toEqual({
    detail: "The workflow definition is invalid.",
    code: "invalid_request",
    status: 400,
    errors: [
      {
        field: "steps[0].config",
        code: "too_large",
        message: "A step config may hold at most 1048576 bytes of JSON.",
      },
    ],
  });
});

/** spine() with every object behind a Proxy that counts the properties read from it. */
function countedSpine(depth: number, leaves: number) {
  let reads = 0;
  let objects = 0;
  const wrap = <T extends object>(o: T): T => {
    objects++;
    return new Proxy(o, {
      get(target, key, receiver) {
        reads++;
        return Reflect.get(target, key, receiver);
      },
    });
  };
  let o: Record<string, unknown> = wrap({
    properties: wrap(Object.fromEntries(Array.from({ length: leaves }, (_, i) => [`a${i}`, wrap({})]))),
  });
  for (let d = 0; d < depth; d++) o = wrap({ properties: wrap({ [`k${d}`]: o }) });
  return { schema: o, reads: () => reads, objects };
}

// Counted, not timed: a time limit passes or fails with the machine's speed and load. Read back
// from the root, each of these 1,000 leaves cost ~400 reads (427,607 in all); walked once, ~6 a
// schema object, at any depth.
test("walking a schema's references reads each schema object a few times, however deep it lies", () => {
  for (const depth of [10, 100]) {
    const c = countedSpine(depth, 1000);
    expect(externalRefs(c.schema)).toEqual([]);
    // Before: 46 reads an object at depth 10, 356 at depth 100.
    expect(c.reads()).toBeLessThan(10 * c.objects);
  }
});

test("the inline lane's analysis leaves a schema past its pointer budget to a worker", () => {
  // Light (weight ~200 of 500) but its 101 pointers hold ~100 M characters: hashed whole, each
  // leaf under such a spine cost its length (bounded.ts).
  const long = spine(20_000, 100, 1);
  expect(schemaWeight({ schema: long })).toBe(Number.POSITIVE_INFINITY);
  // The same shape with short keys is analysed as before.
  const short = spine(2, 100, 1);
  expect(schemaWeight({ schema: short })).toBeLessThan(500);
  expect(JSON.stringify(short).length * 100).toBeLessThan(MAX_POINTER_CHARS);
});

test("the inline lane's analysis leaves a config of more schemas than it analyses to a worker, reached or not", () => {
  // A light root over a stored schema whose $defs no $ref names: the compile on the HTTP thread
  // took them all (6,000: 0.13 s at the version's first run).
  const defs = (n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`d${i}`, { type: "integer", maximum: i }]));
  const config = (n: number) => ({
    schema: { $ref: "https://example.com/a.json" },
    resources: { "https://example.com/a.json": { type: "string", $defs: defs(n) } },
  });
  expect(schemaWeight(config(MAX_ANALYSED_SCHEMAS))).toBe(Number.POSITIVE_INFINITY);
  expect(schemaWeight(config(10))).toBeLessThan(500);
});
