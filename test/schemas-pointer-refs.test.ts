// A `$ref` to a JSON Pointer of another resource (`https://e.com/other.json#/$defs/a`, or an embedded
// resource's `sub/#/$defs/a`) checks the document against that resource's schema there, even when
// the referring schema has a schema of its own at the same pointer. typebox tried the pointer from
// every subschema on its way, the referring schema's own first, so such a step passed what the
// other resource refuses and failed what it allows (src/validators/json-schema/resources.ts,
// pinPointerRefs). A passing document runs in the inline lane, a failing one on a worker: both
// compile the step the same way, as does the save-time check.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForRun } from "./helpers/fixtures.ts";
import { saveJsonSchemaWorkflow, storeJsonSchema } from "./helpers/json-schema-saves.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
});
afterAll(() => s.close());

/** Runs `doc` (JSON text) on workflow `slug`: the run's status and its step's findings. */
async function run(slug: string, doc: string) {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: author,
    raw: doc,
    headers: { "content-type": "application/json" },
  });
  const done = await waitForRun(s, author, r.json.url);
  return [done.status, done.steps[0].findings];
}

const mustBe = (type: string, path: string, column: number, rule: string) => ({
  severity: "error",
  code: "json_schema.type",
  message: `must be ${type}`,
  path,
  line: 1,
  column,
  rule,
});

test("a $ref to a pointer of a stored schema checks that schema's place, not the step's own place of that name", async () => {
  const other = { $defs: { a: { type: "integer" } } };
  expect((await storeJsonSchema(s, author, "https://e.com/other.json", other)).status).toBe(201);
  const schema = {
    $defs: { a: { type: "string" } },
    properties: { x: { $ref: "https://e.com/other.json#/$defs/a" } },
  };
  const w = await saveJsonSchemaWorkflow(s, author, "stored", { schema });
  expect(w.status).toBe(201);
  // The snapshot is the schemas as written: the engine's names are made on copies.
  expect(w.json.steps[0].config).toEqual({ schema, resources: { "https://e.com/other.json": other } });
  expect(await run("stored", '{"x": 1}')).toEqual(["succeeded", []]);
  expect(await run("stored", '{"x": "s"}')).toEqual([
    "failed",
    [mustBe("integer", "/x", 7, "#/properties/x/$ref/type")],
  ]);
});

test("a pointer into a stored schema follows that schema's own references from there", async () => {
  // b.json's #/$defs/a refers to its own #/$defs/b; the step and a.json have both names too.
  const b = { $defs: { a: { $ref: "#/$defs/b" }, b: { type: "integer" } } };
  const a = {
    $defs: { a: { type: "string" }, b: { type: "string" } },
    properties: { y: { $ref: "b.json#/$defs/a" } },
  };
  expect((await storeJsonSchema(s, author, "https://e.com/b.json", b)).status).toBe(201);
  expect((await storeJsonSchema(s, author, "https://e.com/a.json", a)).status).toBe(201);
  const w = await saveJsonSchemaWorkflow(s, author, "chain", {
    schema: { $defs: { a: { type: "boolean" } }, $ref: "https://e.com/a.json" },
  });
  expect(w.status).toBe(201);
  expect(await run("chain", '{"y": 1}')).toEqual(["succeeded", []]);
  expect(await run("chain", '{"y": "s"}')).toEqual([
    "failed",
    [mustBe("integer", "/y", 7, "#/$ref/properties/y/$ref/$ref/type")],
  ]);
});

test("a $ref to a pointer of an embedded resource checks that resource's place, not the root's of that name", async () => {
  const schema = {
    $defs: { a: { type: "string" }, sub: { $id: "sub/", $defs: { a: { type: "integer" } } } },
    $ref: "sub/#/$defs/a",
  };
  const w = await saveJsonSchemaWorkflow(s, author, "embedded", { schema });
  expect(w.status).toBe(201);
  expect(w.json.steps[0].config).toEqual({ schema });
  expect(await run("embedded", "1")).toEqual(["succeeded", []]);
  expect(await run("embedded", '"s"')).toEqual(["failed", [mustBe("integer", "", 1, "#/$ref/type")]]);
});

test("one relative $ref text naming a pointer of two stored schemas checks each its own", async () => {
  // "c.json#/$defs/a" is f1/c.json's in f1/a.json and f2/c.json's in f2/a.json; each a.json's own
  // #/$defs/a says the opposite.
  for (const [dir, mine, theirs] of [
    ["f1", "string", "integer"],
    ["f2", "integer", "string"],
  ]) {
    const c = { $defs: { a: { type: theirs } } };
    expect((await storeJsonSchema(s, author, `https://e.com/${dir}/c.json`, c)).status).toBe(201);
    const a = { $defs: { a: { type: mine } }, $ref: "c.json#/$defs/a" };
    expect((await storeJsonSchema(s, author, `https://e.com/${dir}/a.json`, a)).status).toBe(201);
  }
  const w = await saveJsonSchemaWorkflow(s, author, "two", {
    schema: {
      properties: { p: { $ref: "https://e.com/f1/a.json" }, q: { $ref: "https://e.com/f2/a.json" } },
    },
  });
  expect(w.status).toBe(201);
  expect(await run("two", '{"p": 1, "q": "s"}')).toEqual(["succeeded", []]);
  expect(await run("two", '{"p": "s", "q": 1}')).toEqual([
    "failed",
    [
      mustBe("integer", "/p", 7, "#/properties/p/$ref/$ref/type"),
      mustBe("string", "/q", 17, "#/properties/q/$ref/$ref/type"),
    ],
  ]);
});
