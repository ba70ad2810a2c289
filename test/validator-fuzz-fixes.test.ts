// What fuzzing the built server found in the validators (2026-11-25), through the API: a JSON
// Schema whose $refs loop without moving into the document (refused at save, never a run-time
// stack overflow), YAML nested thousands deep (yaml.max_depth, never the engine's message), and a
// text_rules pattern with a Unicode binary property (accepted, as docs/validators.md now says).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const WORKFLOWS = "/api/v1/orgs/acme/workflows/";
const runs = (wf: string) => `${WORKFLOWS}${wf}/runs/`;

let s: TestServer;
let exec: string;
let author: string;
beforeAll(async () => {
  s = await startTestServer();
  exec = (await s.user("exec", "acme", "executor")).token;
  author = (await s.user("author", "acme", "author")).token;
});
afterAll(() => s.close());

const save = (slug: string, steps: unknown[], allowed = ["JSON", "YAML"]) =>
  call(s, "POST", WORKFLOWS, {
    token: author,
    body: { slug, name: slug, allowed_file_types: allowed, fail_fast: false, steps },
  });

/** Submits and waits for the final run. */
async function submit(wf: string, contentType: string, body: string) {
  const r = await call(s, "POST", runs(wf), {
    token: exec,
    raw: body,
    headers: { "content-type": contentType },
  });
  expect([201, 202]).toContain(r.status);
  return waitForRun(s, exec, r.json.url, 60_000);
}

const schemaStep = (schema: unknown) => ({ name: "schema", validator: "json_schema", config: { schema } });
const NEVER_ENDS =
  "these references loop back without moving into the document (through properties, items …), so " +
  "validating would never end";

describe("json_schema: $ref cycles that never move into the document", () => {
  test("400 at save: two definitions that refer to each other", async () => {
    const r = await save("cycle", [
      schemaStep({ $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }),
    ]);
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "invalid_schema",
          message: `#/$defs/a → #/$defs/b → #/$defs/a: ${NEVER_ENDS}`,
        },
      ]),
    );
    const list = await call(s, "GET", `${WORKFLOWS}?page_size=200`, { token: author });
    expect(list.json.results.map((w: { slug: string }) => w.slug)).not.toContain("cycle");
  });

  test("400 at save: a cycle through allOf, and one behind a property (the document decides if it runs)", async () => {
    const viaAllOf = await save("cycle-allof", [
      schemaStep({ $defs: { a: { allOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" }),
    ]);
    expect(viaAllOf.status).toBe(400);
    expect(viaAllOf.json.errors).toEqual([
      {
        field: "steps[0].config.schema",
        code: "invalid_schema",
        message: `#/$defs/a → #/$defs/a/allOf/0 → #/$defs/a: ${NEVER_ENDS}`,
      },
    ]);
    const draft7 = await save("cycle-d7", [
      schemaStep({
        $schema: "http://json-schema.org/draft-07/schema#",
        definitions: { a: { $ref: "#/definitions/a" } },
        properties: { x: { $ref: "#/definitions/a" } },
      }),
    ]);
    expect(draft7.status).toBe(400);
    expect(draft7.json.errors).toEqual([
      {
        field: "steps[0].config.schema",
        code: "invalid_schema",
        message: `#/definitions/a → #/definitions/a: ${NEVER_ENDS}`,
      },
    ]);
  });

  test("a recursive schema that moves into the document (a tree) is saved and runs", async () => {
    const tree = {
      $defs: {
        node: {
          type: "object",
          properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } },
        },
      },
      $ref: "#/$defs/node",
    };
    expect((await save("tree", [schemaStep(tree)])).status).toBe(201);
    const ok = await submit("tree", "application/json", '{"children":[{"children":[]},{"children":[{}]}]}');
    expect(ok.status).toBe("succeeded");
    const bad = await submit("tree", "application/json", '{"children":[{"children":[5]}]}');
    expect(bad.status).toBe("failed");
    expect(bad.steps[0].findings).toEqual([
      {
        severity: "error",
        code: "json_schema.type",
        message: "must be object",
        path: "/children/0/children/0",
        line: 1,
        column: 27,
        rule: "#/$ref/properties/children/items/$ref/properties/children/items/$ref/type",
      },
    ]);
  });

  test("a cycle only the run can see (a dynamic reference) ends the step in our words, not the engine's", async () => {
    // $dynamicRef lands where the evaluation path says: not decided at save, so the run's guard.
    const dynamic = { $dynamicAnchor: "n", allOf: [{ $dynamicRef: "#n" }] };
    expect((await save("dynamic-cycle", [schemaStep(dynamic)])).status).toBe(201);
    const run = await submit("dynamic-cycle", "application/json", '{"a":1}');
    const message =
      "the schema could not be evaluated on this document: its references recurse too deeply " +
      "(references that loop back without moving into the document never end); the data was not checked";
    expect(run.status).toBe("error");
    expect(run.error).toBe(message);
    expect(run.steps[0].status).toBe("error");
    expect(run.steps[0].error).toBe(message);
    expect(run.steps[0].findings).toEqual([
      {
        severity: "error",
        code: "json_schema.engine_limit",
        message,
        path: null,
        line: null,
        column: null,
        rule: null,
      },
    ]);
    expect(JSON.stringify(run)).not.toContain("RangeError");
    expect(JSON.stringify(run)).not.toContain("call stack");
  });
});

describe("YAML nested deeper than 512 levels is yaml.max_depth in every step", () => {
  beforeAll(async () => {
    const r = await save("yaml-deep", [
      { name: "syntax", validator: "syntax", config: {} },
      schemaStep({ type: "object" }),
      schemaStep({}),
    ]);
    expect(r.status).toBe(201);
  });
  const maxDepth = (line: number, column: number) => [
    {
      severity: "error",
      code: "yaml.max_depth",
      message: "nesting deeper than 512 levels is not accepted",
      path: null,
      line,
      column,
      rule: null,
    },
  ];
  const cases: Array<[string, string, number, number]> = [
    ["flow, 20,000 levels", "[".repeat(20_000) + "]".repeat(20_000), 1, 513],
    ["flow maps, 20,000 levels", "{a: ".repeat(20_000) + "1" + "}".repeat(20_000), 1, 4 * 512 + 1],
    ["compact block sequences, 20,000 levels", `${"- ".repeat(20_000)}1\n`, 1, 2 * 512 + 1],
    [
      // 3 MB of indentation: under ASSAY_MAX_YAML_BYTES (4 MiB), so it is parsed, and bounded.
      "indented block maps, 2,500 levels",
      Array.from({ length: 2500 }, (_, i) => `${" ".repeat(i)}a:`).join("\n") + " 1\n",
      513,
      513,
    ],
  ];
  for (const [label, body, line, column] of cases) {
    test(label, async () => {
      const run = await submit("yaml-deep", "application/yaml", body);
      expect(run.status).toBe("failed");
      for (const step of run.steps) expect(step.findings).toEqual(maxDepth(line, column));
    });
  }
  test("512 levels still parse", async () => {
    const run = await submit("yaml-deep", "application/yaml", "[".repeat(512) + "]".repeat(512));
    expect(run.steps.map((st: { findings: unknown[] }) => st.findings)).toEqual([
      [],
      [expect.objectContaining({ code: "json_schema.type", path: "" })],
      [],
    ]);
  });
});

describe("text_rules: Unicode property escapes", () => {
  const rulesStep = (pattern: string) => ({
    name: "rules",
    validator: "text_rules",
    config: { patterns: [{ regex: pattern, must: "match", message: "letters only" }] },
  });

  test("a binary property RE2 knows (Alphabetic) is saved and matches as ECMA-262 does", async () => {
    expect((await save("alphabetic", [rulesStep("^\\p{Alphabetic}+$")], ["TEXT"])).status).toBe(201);
    expect((await submit("alphabetic", "text/plain", "Ωmega")).status).toBe("succeeded");
    expect((await submit("alphabetic", "text/plain", "R2D2")).status).toBe("failed");
  });

  test("400 unsupported_regex for a binary property RE2 does not know, naming the ones it does", async () => {
    const r = await save("ideographic", [rulesStep("\\p{Ideographic}")], ["TEXT"]);
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.patterns[0].regex",
          code: "unsupported_regex",
          message:
            "is not supported (patterns run on a linear-time engine, docs/validators.md): " +
            "\\p{Ideographic} is not supported: use a general category (\\p{L}, \\p{Lu}, \\p{Nd} …), " +
            "a script (\\p{Script=Greek}) or one of the binary properties docs/validators.md lists " +
            "(\\p{Alphabetic}, \\p{White_Space} …)",
        },
      ]),
    );
  });
});

// 2026-11-29: typebox's JSON Pointer never follows __proto__, constructor or prototype (its guard
// against prototype pollution) and resolves such a $ref to the schema `false`. The save found
// the definition, so the step was saved and failed every document ("no value is allowed here").
describe("json_schema: a $ref through a key the engine never follows", () => {
  test("400 at save, naming the reference and the key; nothing is saved", async () => {
    const r = await save("proto-ref", [
      schemaStep({
        // JSON.parse: in an object literal, "__proto__" would set the prototype, not name a key.
        $defs: JSON.parse('{"constructor": {"type": "string"}, "__proto__": {"type": "integer"}}'),
        properties: {
          a: { $ref: "#/$defs/constructor" },
          b: { $ref: "#/$defs/__proto__" },
          c: { $ref: "#/$defs/nope" },
        },
      }),
    ]);
    expect(r.status).toBe(400);
    const why = (ref: string, at: string, key: string) =>
      `$ref "${ref}" at ${at} goes through the key "${key}", which the engine never follows ` +
      "(__proto__, constructor, prototype): every document would fail it; put that schema under " +
      "$defs with another name and refer to it there";
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "unresolvable_ref",
          message: why("#/$defs/constructor", "#/properties/a", "constructor"),
        },
        {
          field: "steps[0].config.schema",
          code: "unresolvable_ref",
          message: why("#/$defs/__proto__", "#/properties/b", "__proto__"),
        },
        {
          field: "steps[0].config.schema",
          code: "unresolvable_ref",
          message: '$ref "#/$defs/nope" at #/properties/c points to nothing (no value at /$defs/nope)',
        },
      ]),
    );
    const list = await call(s, "GET", `${WORKFLOWS}?page_size=200`, { token: author });
    expect(list.json.results.map((w: { slug: string }) => w.slug)).not.toContain("proto-ref");
  });

  test("a definition of another name runs: properties named so are checked as any other", async () => {
    const schema = {
      $defs: { ctor: { type: "string" } },
      properties: { constructor: { $ref: "#/$defs/ctor" }, prototype: { type: "integer" } },
    };
    expect((await save("proto-ok", [schemaStep(schema)])).status).toBe(201);
    expect(
      (await submit("proto-ok", "application/json", '{"constructor": "x", "prototype": 1}')).status,
    ).toBe("succeeded");
    const bad = await submit("proto-ok", "application/json", '{"constructor": 1}');
    expect(bad.status).toBe("failed");
    expect(bad.steps[0].findings.map((f: { code: string; path: string }) => [f.code, f.path])).toEqual([
      ["json_schema.type", "/constructor"],
    ]);
  });
});
