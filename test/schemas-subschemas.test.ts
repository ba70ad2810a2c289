// A schema is valid against its draft's meta-schema wherever a subschema sits: `"type": 5` in a
// `$defs` reached through a chain of `$ref`s was stored (201) — the schema declared no $schema and
// fitted draft 7, whose meta-schema knows no `$defs` — and a draft-7 step took it inline too
// (src/validators/json-schema/subschemas.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { storeJsonSchema } from "./helpers/json-schema-saves.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
const SCHEMAS = "/api/v1/orgs/acme/schemas/";

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
});
afterAll(() => s.close());

const store = (uri: string, schema: unknown) => storeJsonSchema(s, author, uri, schema);

/** The 400 of `"type": 5` at `at`, as the draft's meta-schema words it (`via`: its path there). */
const typeFive = (detail: string, field: string, at: string, via: string) => ({
  detail,
  code: "invalid_request",
  status: 400,
  errors: [
    {
      field,
      code: "invalid_schema",
      message: `${at}/type: must be equal to one of the allowed values (meta-schema ${via}/anyOf/0)`,
    },
    { field, code: "invalid_schema", message: `${at}/type: must be array (meta-schema ${via}/anyOf/1)` },
  ],
});

const CHAIN = { $ref: "#/$defs/a", $defs: { a: { $ref: "#/$defs/b" }, b: { type: 5 } } };

test("400 for a stored schema with `type: 5` in a $defs reached through a $ref chain, nothing stored", async () => {
  const r = await store("https://example.com/chain.json", CHAIN);
  expect(r.status).toBe(400);
  const five = typeFive(
    "The schema is invalid.",
    "schema",
    "/$defs/b",
    "#/allOf/0/properties/$defs/additionalProperties/allOf/3/properties/type",
  );
  five.errors.push({
    field: "schema",
    code: "invalid_schema",
    message: "/$defs: must not have additional properties (meta-schema #/allOf/0/properties/$defs)",
  });
  expect(r.json).toEqual(five);
  const list = await call(s, "GET", SCHEMAS, { token: author });
  expect(list.json.count).toBe(0);
});

test("400 for draft 7's $defs and definitions and a $ref target under an unknown keyword", async () => {
  const d7 = "http://json-schema.org/draft-07/schema#";
  const defs = await store("https://example.com/d7.json", { $schema: d7, ...CHAIN });
  expect(defs.json).toEqual(typeFive("The schema is invalid.", "schema", "/$defs/b", "#/properties/type"));
  const definitions = await store("https://example.com/d7b.json", {
    $schema: d7,
    definitions: { a: { properties: { x: { allOf: [{ type: 5 }] } } } },
  });
  const via = "#/properties/definitions/additionalProperties/properties/properties/additionalProperties";
  const nested = typeFive(
    "The schema is invalid.",
    "schema",
    "/definitions/a/properties/x/allOf/0",
    `${via}/properties/allOf/items/properties/type`,
  );
  nested.errors.push(
    {
      field: "schema",
      code: "invalid_schema",
      message:
        "/definitions/a/properties: must not have additional properties (meta-schema #/properties/definitions/additionalProperties/properties/properties)",
    },
    {
      field: "schema",
      code: "invalid_schema",
      message: "/definitions: must not have additional properties (meta-schema #/properties/definitions)",
    },
  );
  expect([definitions.status, definitions.json]).toEqual([400, nested]);
  const unknown = await store("https://example.com/x.json", { $ref: "#/x/y", x: { y: { type: 5 } } });
  expect(unknown.json).toEqual(
    typeFive("The schema is invalid.", "schema", "/x/y", "#/allOf/3/properties/type"),
  );
});

test("201 for the same chain ending in a valid subschema", async () => {
  const ok = { ...CHAIN, $defs: { ...CHAIN.$defs, b: { type: "string" } } };
  expect((await store("https://example.com/ok.json", ok)).status).toBe(201);
});

test("400 for a draft-7 step's inline schema with `type: 5` in a $defs its $ref reaches", async () => {
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: author,
    body: {
      slug: "w7",
      name: "W7",
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "json_schema", config: { draft: "7", schema: CHAIN } }],
    },
  });
  expect(r.status).toBe(400);
  expect(r.json).toEqual(
    typeFive(
      "The workflow definition is invalid.",
      "steps[0].config.schema",
      "/$defs/b",
      "#/properties/type",
    ),
  );
});
