// An anchor declared under an unknown keyword (`{"x": {"$anchor": "a"}}`) identifies nothing:
// what an unknown keyword holds is not a schema (2020-12 Core §9.4.2, 2019-09 §8.2.4.4), and
// Assay hides it from the engine (src/validators/json-schema/drafts.ts). A reference to it, local
// (`#a`) or into another stored schema (`other.json#a`), is refused as unresolvable, saying where
// the anchor is declared and why it counts for nothing (src/validators/json-schema/refs.ts). An
// anchor target the schema's own check did not reach is meta-validated (anchors.ts).
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

/** The refusal of `ref`, whose anchor "a" only `doc`#/x/`key` declares, under the unknown keyword x. */
const hidden = (field: string, ref: string, where: string, draft: string) => ({
  field,
  code: "unresolvable_ref",
  message:
    `$ref "${ref}" at # names an anchor "a" that is declared only at ${where}, under "x", a keyword ` +
    `draft ${draft} does not define: what an unknown keyword holds is not a schema, so that anchor ` +
    `identifies nothing${draft === "2020-12" ? " (JSON Schema 2020-12 Core §9.4.2: a reference into it is undefined)" : ""}; ` +
    `declare the anchor in a schema, under ${draft === "2020-12" ? "$defs" : "definitions"} for instance`,
});

// 2026-11-29: these were meta-validated as schemas (0a094a1), and a valid one was saved; but the
// engine never resolves them (drafts.ts hides them), so every run of such a step failed with
// json_schema.false_schema. Now the reference is refused as the local one is.
test("400 for a stored schema whose $ref names an anchor under another stored schema's unknown keyword", async () => {
  for (const [uri, ref, where, draft] of [
    ["https://example.com/u.json", "other.json#a", `${OTHER}#/x/$anchor`, "2020-12"],
    ["https://example.com/u7.json", "other7.json#a", `${OTHER7}#/x/$id`, "7"],
  ] as const) {
    const r = await store(uri, { $ref: ref });
    expect([r.status, r.json]).toEqual([
      400,
      {
        detail: "The schema is invalid.",
        code: "invalid_request",
        status: 400,
        errors: [hidden("schema", ref, where, draft)],
      },
    ]);
  }
  // A valid subschema under the same unknown keyword is no schema either.
  const r = await store("https://example.com/ok.json", { $ref: "other.json#z" });
  expect([r.status, r.json.errors[0].code]).toEqual([400, "unresolvable_ref"]);
  expect((await call(s, "GET", SCHEMAS, { token: author })).json.count).toBe(2);
});

test("400 for a step's schema (2020-12 and draft 7) whose $ref names that anchor", async () => {
  for (const [draft, doc, key, read] of [
    [undefined, OTHER, "$anchor", "2020-12"],
    ["7", OTHER7, "$id", "7"],
  ] as const) {
    const ref = `${doc}#a`;
    const r = await workflow(`w${draft ?? ""}`, { ...(draft && { draft }), schema: { $ref: ref } });
    expect([r.status, r.json]).toEqual([
      400,
      {
        detail: "The workflow definition is invalid.",
        code: "invalid_request",
        status: 400,
        errors: [hidden("steps[0].config.schema", ref, `${doc}#/x/${key}`, read)],
      },
    ]);
  }
});

test("a local #a under an unknown keyword is refused, saying where it is declared (2020-12 and draft 7), stored and in a step", async () => {
  for (const [schema, key, draft] of [
    [{ $ref: "#a", x: { $anchor: "a", type: 5 } }, "$anchor", "2020-12"],
    [
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        allOf: [{ $ref: "#a" }],
        x: { $id: "#a", type: 5 },
      },
      "$id",
      "7",
    ],
  ] as const) {
    const at = draft === "7" ? "#/allOf/0" : "#";
    const unresolvable = { ...hidden("schema", "#a", `#/x/${key}`, draft) };
    unresolvable.message = unresolvable.message.replace("at # ", `at ${at} `);
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
    schema: { $defs: { x: chain } },
    explain: (value: unknown): [boolean, never[]] => {
      explained.push(value);
      return [true, []];
    },
  };
  expect(foreignAnchorErrors(refs, () => holder, 50)).toEqual([]);
  expect(explained).toEqual([chain]);
});

test("the anchor targets meta-validated are schemas only: the same name under an unknown keyword is skipped", () => {
  const real = { $anchor: "a", type: "string" };
  const explained: unknown[] = [];
  const holder = {
    schema: { x: { $anchor: "a", type: 5 }, $defs: { a: real } },
    explain: (value: unknown): [boolean, never[]] => {
      explained.push(value);
      return [true, []];
    },
  };
  expect(foreignAnchorErrors(foreignAnchorRefs({ $ref: `${OTHER}#a` }), () => holder, 50)).toEqual([]);
  expect(explained).toEqual([real]);
});
