// An anchor reference into another stored schema (`other.json#a`) reaches the object carrying
// that anchor wherever it sits: under an unknown keyword the engine resolves it too, though the
// meta-schema of other.json never looked there. `{"x": {"$anchor": "a", "type": 5}}` was stored,
// a schema and a step `$ref`ing `other.json#a` were saved (201), and every run passed (the engine
// ignored the `type`). Its target is now meta-validated in the draft of the schema holding it
// (src/validators/json-schema/anchors.ts). A local `#a` so placed was, and is, refused.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { foreignAnchorErrors } from "../src/validators/json-schema/anchors.ts";
import { foreignAnchorRefs } from "../src/validators/json-schema/refs.ts";
import { storeJsonSchema, saveJsonSchemaWorkflow } from "./helpers/json-schema-saves.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
const SCHEMAS = "/api/v1/orgs/acme/schemas/";
const OTHER = "https://example.com/other.json";
const OTHER7 = "https://example.com/other7.json";

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
  // Valid as a whole: `x` is an unknown keyword, nothing checks what it holds.
  expect(
    (await store(OTHER, { x: { $anchor: "a", type: 5 }, z: { $anchor: "z", type: "string" } })).status,
  ).toBe(201);
  const draft7 = { $schema: "http://json-schema.org/draft-07/schema#", x: { $id: "#a", type: 5 } };
  expect((await store(OTHER7, draft7)).status).toBe(201);
});
afterAll(() => s.close());

const store = (uri: string, schema: unknown) => storeJsonSchema(s, author, uri, schema);

const workflow = (slug: string, config: Record<string, unknown>) =>
  saveJsonSchemaWorkflow(s, author, slug, config);

/** The two issues of `"type": 5` at `doc`#/x reached by `ref` (`via`: the meta-schema's path). */
const typeFive = (field: string, ref: string, doc: string, via: string) =>
  [0, 1].map((i) => ({
    field,
    code: "invalid_schema",
    message:
      `$ref "${ref}" at # points to an invalid schema: ${doc}#/x/type: ` +
      `${i === 0 ? "must be equal to one of the allowed values" : "must be array"} (meta-schema ${via}/anyOf/${i})`,
  }));

test("400 for a stored schema whose $ref names an anchor under another stored schema's unknown keyword", async () => {
  for (const [uri, ref, doc, via] of [
    ["https://example.com/u.json", "other.json#a", OTHER, "#/allOf/3/properties/type"],
    ["https://example.com/u7.json", "other7.json#a", OTHER7, "#/properties/type"],
  ] as const) {
    const r = await store(uri, { $ref: ref });
    expect([r.status, r.json]).toEqual([
      400,
      {
        detail: "The schema is invalid.",
        code: "invalid_request",
        status: 400,
        errors: typeFive("schema", ref, doc, via),
      },
    ]);
  }
  expect((await call(s, "GET", SCHEMAS, { token: author })).json.count).toBe(2);
  // A valid subschema under the same unknown keyword is a schema too.
  expect((await store("https://example.com/ok.json", { $ref: "other.json#z" })).status).toBe(201);
});

test("400 for a step's schema (2020-12 and draft 7) whose $ref names that anchor", async () => {
  for (const [draft, doc, via] of [
    [undefined, OTHER, "#/allOf/3/properties/type"],
    ["7", OTHER7, "#/properties/type"],
  ] as const) {
    const ref = `${doc}#a`;
    const r = await workflow(`w${draft ?? ""}`, { ...(draft && { draft }), schema: { $ref: ref } });
    expect([r.status, r.json]).toEqual([
      400,
      {
        detail: "The workflow definition is invalid.",
        code: "invalid_request",
        status: 400,
        errors: typeFive("steps[0].config.schema", ref, doc, via),
      },
    ]);
  }
});

test("a local #a under an unknown keyword is refused as before (2020-12 and draft 7), stored and in a step", async () => {
  const unresolvable = {
    field: "schema",
    code: "unresolvable_ref",
    message: '$ref "#a" at # names an anchor "a" that is not defined',
  };
  for (const schema of [
    { $ref: "#a", x: { $anchor: "a", type: 5 } },
    { $schema: "http://json-schema.org/draft-07/schema#", $ref: "#a", x: { $id: "#a", type: 5 } },
  ]) {
    const r = await store("https://example.com/local.json", schema);
    expect([r.status, r.json]).toEqual([
      400,
      { detail: "The schema is invalid.", code: "invalid_request", status: 400, errors: [unresolvable] },
    ]);
    const w = await workflow("local", { schema });
    expect([w.status, w.json]).toEqual([
      400,
      {
        detail: "The workflow definition is invalid.",
        code: "invalid_request",
        status: 400,
        errors: [{ ...unresolvable, field: "steps[0].config.schema" }],
      },
    ]);
  }
});

// Counted, not timed: one walk of the schema referenced, each target one meta-validation at most.
test("a thousand references to anchors nested down a chain the meta-schema reaches check its top once", () => {
  // other.json: {"x": {"$anchor": "a0", "properties": {"k": {"$anchor": "a1", … 1000 deep}}}}.
  let chain: Record<string, unknown> = { $anchor: "a1000", type: "string" };
  for (let d = 999; d >= 0; d--) chain = { $anchor: `a${d}`, properties: { k: chain } };
  const schema = { allOf: Array.from({ length: 1000 }, (_, d) => ({ $ref: `${OTHER}#a${999 - d}` })) };
  const refs = foreignAnchorRefs(schema);
  expect(refs.length).toBe(1000);
  const explained: unknown[] = [];
  const holder = {
    schema: { x: chain },
    explain: (value: unknown): [boolean, never[]] => {
      explained.push(value);
      return [true, []];
    },
  };
  expect(foreignAnchorErrors(refs, () => holder, 50)).toEqual([]);
  expect(explained).toEqual([chain]);
});
