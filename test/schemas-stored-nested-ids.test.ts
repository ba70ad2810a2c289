// A subschema of a stored schema that moves the base again by a relative `$id` ("sub/",
// "nested/foo.json") bases the references below it on that `$id` (JSON Schema 2020-12 Core §8.2.1).
// Such a schema passed its save-time checks and the engine, having entered it as a stored schema,
// resolved those references against the stored schema's own base: each read as `false`, and every
// document failed a step that `$ref`s it, while the same schema inline passed
// (src/validators/json-schema/resources.ts, engineView; the JSON-Schema-Test-Suite's refRemote
// "base URI change" and ref "order of evaluation: $id and $ref on nested schema" cases).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForRun } from "./helpers/fixtures.ts";
import { saveJsonSchemaWorkflow, storeJsonSchema } from "./helpers/json-schema-saves.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
  // Where "sub/"'s `leaf.json` resolves to; the stored schema's own folder has no leaf.json.
  expect(
    (await storeJsonSchema(s, author, "https://example.com/s/sub/leaf.json", { type: "integer" })).status,
  ).toBe(201);
});
afterAll(() => s.close());

/** Runs `doc` on workflow `slug`: the run's status and its findings' codes and paths. */
async function run(slug: string, doc: unknown) {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: author,
    raw: JSON.stringify(doc),
    headers: { "content-type": "application/json" },
  });
  const done = await waitForRun(s, author, r.json.url);
  return [done.status, done.steps[0].findings.map((f: { code: string; path: string }) => [f.code, f.path])];
}

/** Stores `schema` under `uri`, saves workflow `slug` `$ref`-ing it; returns the saved step config. */
async function storeAndRef(uri: string, schema: Record<string, unknown>, slug: string) {
  const stored = await storeJsonSchema(s, author, uri, schema);
  expect([stored.status, stored.json.uri]).toEqual([201, uri]);
  const w = await saveJsonSchemaWorkflow(s, author, slug, { schema: { $ref: uri } });
  expect(w.status).toBe(201);
  return w.json.steps[0].config;
}

test("a relative $id in a stored schema's subschema bases the references below it; the snapshot keeps it as written", async () => {
  const uri = "https://example.com/s/root.json";
  const schema = {
    type: "array",
    items: {
      $id: "sub/",
      type: "array",
      // leaf.json is https://example.com/s/sub/leaf.json; #small is sub/'s anchor, #/$defs its own.
      items: { anyOf: [{ $ref: "leaf.json" }, { $ref: "#small" }] },
      $defs: { small: { $anchor: "small", type: "string", maxLength: 1 } },
      contains: { $ref: "#/$defs/small" },
    },
  };
  const config = await storeAndRef(uri, schema, "nested");
  // What the step runs is a copy: the snapshot is the stored schema as written.
  expect(config.resources).toEqual({
    [uri]: schema,
    "https://example.com/s/sub/leaf.json": { type: "integer" },
  });
  expect(await run("nested", [[1, "a", 2]])).toEqual(["succeeded", []]);
  expect(await run("nested", [[1.5, "a"]])).toEqual(["failed", [["json_schema.type", "/0/0"]]]);
  expect(await run("nested", [[1, 2]])).toEqual(["failed", [["json_schema.contains", "/0"]]]);
});

test("a $ref to a sibling resource named relative to a nested $id resolves to that sibling", async () => {
  const uri = "https://example.com/order/base.json";
  // The suite's "$id and $ref on nested schema": foo's "./bar.json" is nested/bar.json, a sibling.
  const schema = {
    $id: "https://example.com/ref-and-id/base.json",
    $ref: "nested/foo.json",
    $defs: {
      foo: { $id: "nested/foo.json", $ref: "./bar.json" },
      bar: { $id: "nested/bar.json", type: "number" },
    },
  };
  const config = await storeAndRef(uri, schema, "sibling");
  expect(config.resources).toEqual({ [uri]: schema });
  expect(await run("sibling", 5)).toEqual(["succeeded", []]);
  expect(await run("sibling", "a")).toEqual(["failed", [["json_schema.type", ""]]]);
});

test("a $ref from a nested resource back into the stored schema's root resolves there, not in the nested one", async () => {
  const uri = "https://example.com/back/root.json";
  // ../root.json#/$defs/x is the root's x; the nested resource has no $defs of its own.
  const schema = {
    $id: "https://example.com/back-id/root.json",
    $defs: { x: { type: "string" } },
    items: { $id: "sub/", items: { $ref: "../root.json#/$defs/x" } },
  };
  await storeAndRef(uri, schema, "back");
  expect(await run("back", [["s"]])).toEqual(["succeeded", []]);
  expect(await run("back", [[1]])).toEqual(["failed", [["json_schema.type", "/0/0"]]]);
});

test("two stored schemas declaring the same $id, reached by one step, each resolve their own references", async () => {
  // Neither can be given under the $id they share: either could be meant.
  const n = await storeJsonSchema(s, author, "https://example.com/shared/n.json", { type: "integer" });
  expect(n.status).toBe(201);
  for (const [name, key] of [
    ["a", "n"],
    ["b", "m"],
  ])
    expect(
      (
        await storeJsonSchema(s, author, `https://example.com/twice/${name}.json`, {
          $id: "https://example.com/shared/base.json",
          properties: { [key]: { $ref: "n.json" } },
        })
      ).status,
    ).toBe(201);
  const w = await saveJsonSchemaWorkflow(s, author, "twice", {
    schema: {
      allOf: [{ $ref: "https://example.com/twice/a.json" }, { $ref: "https://example.com/twice/b.json" }],
    },
  });
  expect(w.status).toBe(201);
  expect(await run("twice", { n: 1, m: 2 })).toEqual(["succeeded", []]);
  expect(await run("twice", { n: "x", m: 2 })).toEqual(["failed", [["json_schema.type", "/n"]]]);
  expect(await run("twice", { n: 1, m: "x" })).toEqual(["failed", [["json_schema.type", "/m"]]]);
});
