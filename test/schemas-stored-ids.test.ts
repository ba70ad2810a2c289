// A stored schema that declares its own absolute `$id` (another URI than the one it is stored
// under) is based on that `$id`: its relative references resolve against it (JSON Schema 2020-12
// Core §8.2.1, draft 4's `id` alike). Two gaps the JSON-Schema-Test-Suite found when its ref and
// refRemote cases ran as stored schemas (test/conformance/json-schema-suite.test.ts):
//  - such a schema, `$ref`ed by a step, passed every save-time check, and the engine resolved its
//    references against the URI it is stored under: each read as `false`, every run failed
//    (src/validators/json-schema/resources.ts, engineView);
//  - a draft-4 schema without `$schema` basing its references on `id` could not be stored: the
//    stored schemas it reaches were looked up as 2020-12 reads it, ignoring `id`, so its draft-4
//    check lacked them (400 unresolvable_ref; resources.ts, refsInAnyDraft).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForRun } from "./helpers/fixtures.ts";
import { saveJsonSchemaWorkflow, storeJsonSchema } from "./helpers/json-schema-saves.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
  // Stored under the URIs the `$id`s below resolve `n.json` to.
  for (const dir of ["v1", "v4"])
    expect(
      (await storeJsonSchema(s, author, `https://other.example/${dir}/n.json`, { type: "integer" })).status,
    ).toBe(201);
});
afterAll(() => s.close());

/** Runs `doc` on workflow `slug`: the run's status and its findings' codes. */
async function run(slug: string, doc: unknown) {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: author,
    raw: JSON.stringify(doc),
    headers: { "content-type": "application/json" },
  });
  const done = await waitForRun(s, author, r.json.url);
  return [done.status, done.steps[0].findings.map((f: { code: string }) => f.code)];
}

test("a step $ref-ing a stored schema based on its own $id runs its references as resolved at save", async () => {
  const uri = "https://example.com/a.json";
  const a = {
    $id: "https://other.example/v1/a",
    type: "object",
    properties: { n: { $ref: "n.json" }, tree: { $ref: "#/$defs/tree" } },
    $defs: {
      tree: {
        $id: "https://other.example/v1/tree",
        type: "object",
        properties: { kids: { type: "array", items: { $ref: "tree" } }, n: { $ref: "n.json" } },
      },
    },
  };
  expect((await storeJsonSchema(s, author, uri, a)).status).toBe(201);
  const w = await saveJsonSchemaWorkflow(s, author, "ids", { schema: { $ref: uri } });
  expect(w.status).toBe(201);
  expect(await run("ids", { n: 1, tree: { n: 2, kids: [{ n: 3, kids: [] }] } })).toEqual(["succeeded", []]);
  expect(await run("ids", { n: "x" })).toEqual(["failed", ["json_schema.type"]]);
  expect(await run("ids", { tree: { kids: [{ n: "x" }] } })).toEqual(["failed", ["json_schema.type"]]);
});

test("201 for a draft-4 stored schema without $schema whose references are based on its id; a draft-4 step runs it", async () => {
  const uri = "https://example.com/object4.json";
  const schema = { id: "https://other.example/v4/object", properties: { n: { $ref: "n.json" } } };
  const r = await storeJsonSchema(s, author, uri, schema);
  expect([r.status, r.json.uri]).toEqual([201, uri]);
  const w = await saveJsonSchemaWorkflow(s, author, "ids4", { draft: "4", schema: { $ref: uri } });
  expect(w.status).toBe(201);
  expect(await run("ids4", { n: 1 })).toEqual(["succeeded", []]);
  expect(await run("ids4", { n: "x" })).toEqual(["failed", ["json_schema.type"]]);
});
