// A `$ref` into another stored schema (`other.json#/x/y`) makes a schema of what it points to,
// though the meta-schema of other.json did not reach it under an unknown keyword: `{"type": 5}`
// there was stored, a schema and a step referencing it were saved (201), and every run passed
// (the engine ignored the keyword). The target is now meta-validated in the draft of the schema
// holding it (src/validators/json-schema/subschemas.ts, foreignSubschemaErrors).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { foreignPointerRefs } from "../src/validators/json-schema/refs.ts";
import { foreignSubschemaErrors } from "../src/validators/json-schema/subschemas.ts";
import { storeJsonSchema, saveJsonSchemaWorkflow } from "./helpers/json-schema-saves.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
const SCHEMAS = "/api/v1/orgs/acme/schemas/";
const OTHER = "https://example.com/other.json";

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
  // Valid as a whole in every draft: `x` is an unknown keyword, nothing checks what it holds.
  expect((await store(OTHER, { x: { y: { type: 5 } }, z: { type: "string" } })).status).toBe(201);
});
afterAll(() => s.close());

const store = (uri: string, schema: unknown) => storeJsonSchema(s, author, uri, schema);

const workflow = (slug: string, config: Record<string, unknown>) =>
  saveJsonSchemaWorkflow(s, author, slug, config);

/** The two issues of `"type": 5` at other.json#/x/y reached by `ref` (`via`: the meta-schema's path). */
const typeFive = (field: string, ref: string, via: string, prefix = "") =>
  [0, 1].map((i) => ({
    field,
    code: "invalid_schema",
    message:
      `${prefix}$ref "${ref}" at # points to an invalid schema: ${OTHER}#/x/y/type: ` +
      `${i === 0 ? "must be equal to one of the allowed values" : "must be array"} (meta-schema ${via}/anyOf/${i})`,
  }));

test("400 for a stored schema whose $ref points into another stored schema's unknown keyword, nothing stored", async () => {
  const r = await store("https://example.com/user.json", { $ref: "other.json#/x/y" });
  expect([r.status, r.json]).toEqual([
    400,
    {
      detail: "The schema is invalid.",
      code: "invalid_request",
      status: 400,
      errors: typeFive("schema", "other.json#/x/y", "#/allOf/3/properties/type"),
    },
  ]);
  const list = await call(s, "GET", SCHEMAS, { token: author });
  expect(list.json.count).toBe(1);
  // A valid subschema of the same unknown keyword is a schema too.
  expect((await store("https://example.com/ok.json", { $ref: "other.json#/z" })).status).toBe(201);
});

test("400 for a step's schema (2020-12 and draft 7) whose $ref points there by absolute URI", async () => {
  const ref = `${OTHER}#/x/y`;
  for (const [draft, via] of [
    [undefined, "#/allOf/3/properties/type"],
    ["7", "#/properties/type"],
  ] as const) {
    const r = await workflow(`w${draft ?? ""}`, { ...(draft && { draft }), schema: { $ref: ref } });
    expect([r.status, r.json]).toEqual([
      400,
      {
        detail: "The workflow definition is invalid.",
        code: "invalid_request",
        status: 400,
        errors: typeFive("steps[0].config.schema", ref, via),
      },
    ]);
  }
});

test("400 for a step reaching it through a stored schema saved before the target was replaced", async () => {
  const mid = "https://example.com/mid.json";
  const before = { x: { y: { type: "string" } } };
  const held = await store("https://example.com/held.json", before);
  expect(held.status).toBe(201);
  expect((await store(mid, { $ref: "held.json#/x/y" })).status).toBe(201);
  const put = await call(s, "PUT", `${SCHEMAS}${held.json.id}/`, {
    token: author,
    body: { uri: "https://example.com/held.json", kind: "json_schema", schema: { x: { y: { type: 5 } } } },
  });
  expect(put.status).toBe(200);
  const r = await workflow("via-mid", { schema: { $ref: mid } });
  const issues = typeFive(
    "steps[0].config.resources",
    "held.json#/x/y",
    "#/allOf/3/properties/type",
    `${mid}: `,
  );
  for (const i of issues) i.message = i.message.replace(OTHER, "https://example.com/held.json");
  expect([r.status, r.json]).toEqual([
    400,
    { detail: "The workflow definition is invalid.", code: "invalid_request", status: 400, errors: issues },
  ]);
});

// Counted, not timed: each reference costs its pointer to follow, each target one meta-validation.
test("a thousand references to one subschema of another schema meta-validate it once", () => {
  const schema = { allOf: Array.from({ length: 1000 }, () => ({ $ref: `${OTHER}#/x/y` })) };
  const refs = foreignPointerRefs(schema);
  expect(refs.length).toBe(1000);
  let explained = 0;
  const other = {
    schema: { x: { y: { type: 5 } } },
    explain: (): [boolean, never[]] => {
      explained++;
      return [true, []];
    },
  };
  expect(foreignSubschemaErrors(refs, () => other, 50)).toEqual([]);
  expect(explained).toBe(1);
});

test("references down a chain of subschemas the meta-schema reaches meta-validate its top once", () => {
  // other.json: {"x": {"properties": {"k": {"properties": {"k": … 100 deep}}}}, "properties": <same>}.
  let chain: Record<string, unknown> = { type: "string" };
  for (let d = 0; d < 100; d++) chain = { properties: { k: chain } };
  const other = { x: chain, properties: { k: chain } };
  const down = Array.from({ length: 100 }, (_, d) => "/properties/k".repeat(d));
  const schema = {
    allOf: [
      ...down.map((p) => ({ $ref: `${OTHER}#/x${p}` })),
      // Reached from other.json's root: its own check reached them.
      ...down.map((p) => ({ $ref: `${OTHER}#/properties/k${p}` })),
    ],
  };
  const explained: unknown[] = [];
  const holder = {
    schema: other,
    explain: (value: unknown): [boolean, never[]] => {
      explained.push(value);
      return [true, []];
    },
  };
  expect(foreignSubschemaErrors(foreignPointerRefs(schema), () => holder, 50)).toEqual([]);
  // Each target checked on its own, it was 200 checks of up to 100 levels each.
  expect(explained).toEqual([chain]);
});
