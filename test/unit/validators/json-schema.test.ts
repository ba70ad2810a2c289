import { describe, expect, test } from "bun:test";
import { createJsonSchemaValidator } from "../../../src/validators/json-schema/index.ts";
import { StepLimitError } from "../../../src/validators/limit-error.ts";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { codes, input, run } from "./helpers.ts";

const person = {
  type: "object",
  required: ["name", "age"],
  properties: {
    name: { type: "string", minLength: 1 },
    age: { type: "integer", minimum: 0 },
    email: { type: "string", format: "email" },
    tags: { type: "array", items: { type: "string" } },
    "a/b": { type: "boolean" },
  },
  additionalProperties: false,
};

const check = (
  schema: Record<string, unknown>,
  text: string,
  extra: Record<string, unknown> = {},
  type: "JSON" | "YAML" = "JSON",
) => run("json_schema", { schema, ...extra }, text, type);

const view = (r: ReturnType<typeof check>) =>
  r.findings.map((f) => ({ code: f.code, path: f.path, line: f.line, column: f.column, rule: f.rule }));

describe("json_schema: findings", () => {
  test("a valid instance passes", () => {
    expect(check(person, '{"name": "Ada", "age": 36, "tags": ["x"]}').findings).toEqual([]);
  });

  test("type and minimum errors point at the value, with the schema location as rule", () => {
    const text = '{\n  "name": "Ada",\n  "age": -1,\n  "tags": ["x", 3]\n}';
    expect(view(check(person, text))).toEqual([
      { code: "json_schema.minimum", path: "/age", line: 3, column: 10, rule: "#/properties/age/minimum" },
      {
        code: "json_schema.type",
        path: "/tags/1",
        line: 4,
        column: 17,
        rule: "#/properties/tags/items/type",
      },
    ]);
  });

  test("required: one finding per missing property, on the object", () => {
    const r = check(person, '{\n  "x": {}\n}'.replace('"x": {}', '"name": "Ada"'));
    expect(view(r)).toEqual([
      { code: "json_schema.required", path: "", line: 1, column: 1, rule: "#/required" },
    ]);
    expect(r.findings[0].message).toBe('missing required property "age"');
  });

  test("dependentRequired and dependencies: one finding per missing property, naming it", () => {
    const said = (schema: Record<string, unknown>, text: string) =>
      check(schema, text).findings.map((f) => [f.code, f.message, f.path]);
    const when = (name: string) => `missing property "${name}", required when "a" is present`;
    expect(said({ dependentRequired: { a: ["b", "c", "d"] } }, '{"a": 1, "c": 2}')).toEqual([
      ["json_schema.dependentRequired", when("b"), ""],
      ["json_schema.dependentRequired", when("d"), ""],
    ]);
    expect(
      said(
        { $schema: "http://json-schema.org/draft-07/schema#", dependencies: { a: ["b", "c"] } },
        '{"a": 1}',
      ),
    ).toEqual([
      ["json_schema.dependencies", when("b"), ""],
      ["json_schema.dependencies", when("c"), ""],
    ]);
    expect(said({ properties: { x: { dependentRequired: { a: ["b"] } } } }, '{"x": {"a": 1}}')).toEqual([
      ["json_schema.dependentRequired", when("b"), "/x"],
    ]);
  });

  test("additionalProperties: one finding per extra key, on the key", () => {
    const r = check(person, '{"name": "A", "age": 1,\n  "nick": "x", "zz": 1}');
    expect(view(r)).toEqual([
      {
        code: "json_schema.additionalProperties",
        path: "/nick",
        line: 2,
        column: 3,
        rule: "#/additionalProperties",
      },
      {
        code: "json_schema.additionalProperties",
        path: "/zz",
        line: 2,
        column: 16,
        rule: "#/additionalProperties",
      },
    ]);
  });

  test("JSON Pointer escaping in paths", () => {
    const r = check(person, '{"name": "A", "age": 1, "a/b": "no"}');
    expect(view(r)).toEqual([
      { code: "json_schema.type", path: "/a~1b", line: 1, column: 32, rule: "#/properties/a~1b/type" },
    ]);
  });

  test("format is asserted by default and can be turned off", () => {
    const text = '{"name": "A", "age": 1, "email": "nope"}';
    expect(view(check(person, text))).toEqual([
      { code: "json_schema.format", path: "/email", line: 1, column: 34, rule: "#/properties/email/format" },
    ]);
    expect(check(person, text, { assert_formats: false }).findings).toEqual([]);
  });

  test("anyOf reports the combinator once, not every failed branch", () => {
    const r = check({ anyOf: [{ type: "string" }, { type: "integer", minimum: 3 }] }, "1.5");
    expect(view(r)).toEqual([{ code: "json_schema.anyOf", path: "", line: 1, column: 1, rule: "#/anyOf" }]);
  });

  test("enum and const messages list the allowed values", () => {
    const r = check({ properties: { s: { enum: ["a", "b"] } } }, '{"s": "c"}');
    expect(r.findings[0].code).toBe("json_schema.enum");
    expect(r.findings[0].message).toBe('must be one of ["a","b"]');
  });

  test("internal $ref is resolved", () => {
    const schema = {
      $defs: { pos: { type: "integer", minimum: 1 } },
      type: "array",
      items: { $ref: "#/$defs/pos" },
    };
    expect(view(check(schema, "[1, 0]"))).toEqual([
      { code: "json_schema.minimum", path: "/1", line: 1, column: 5, rule: "#/items/$ref/minimum" },
    ]);
  });

  test("rule is the evaluation path: it names each $ref and $dynamicRef it went through", () => {
    // JSON Schema 2020-12 Core §12.4.2: the path MUST include "$ref" or "$dynamicRef".
    const refs = {
      $defs: { p: { type: "integer" }, inner: { allOf: [{ type: "integer" }] } },
      properties: {
        a: { $ref: "#/$defs/p" },
        b: { allOf: [{ minimum: 5 }, { $ref: "#/$defs/inner/allOf/0" }] },
      },
    };
    expect(view(check(refs, '{"a": "x", "b": 1.5}'))).toEqual([
      { code: "json_schema.type", path: "/a", line: 1, column: 7, rule: "#/properties/a/$ref/type" },
      {
        code: "json_schema.minimum",
        path: "/b",
        line: 1,
        column: 17,
        rule: "#/properties/b/allOf/0/minimum",
      },
      { code: "json_schema.type", path: "/b", line: 1, column: 17, rule: "#/properties/b/allOf/1/$ref/type" },
    ]);
    const dynamic = {
      $id: "https://example.com/tree",
      $dynamicAnchor: "node",
      type: "object",
      properties: { c: { $dynamicRef: "#node" } },
    };
    expect(view(check(dynamic, '{"c": {"c": 1}}'))).toEqual([
      {
        code: "json_schema.type",
        path: "/c/c",
        line: 1,
        column: 13,
        rule: "#/properties/c/$dynamicRef/properties/c/$dynamicRef/type",
      },
    ]);
    const never = { $defs: { no: false }, properties: { a: { $ref: "#/$defs/no" } } };
    expect(view(check(never, '{"a": 1}'))).toEqual([
      { code: "json_schema.properties", path: "/a", line: 1, column: 7, rule: "#/properties/a/$ref" },
    ]);
  });

  test("minContains and maxContains say their bound, under their own code and rule", () => {
    const f = (schema: Record<string, unknown>, text: string) =>
      check(schema, text).findings.map((x) => ({ code: x.code, message: x.message, rule: x.rule }));
    expect(f({ contains: { const: 1 }, minContains: 2 }, "[1, 2]")).toEqual([
      {
        code: "json_schema.minContains",
        message: "must contain at least 2 items matching contains",
        rule: "#/minContains",
      },
    ]);
    // No item matches: minContains' bound says more than contains' "at least 1", once.
    expect(f({ contains: { const: 1 }, minContains: 3 }, "[2]")).toEqual([
      {
        code: "json_schema.minContains",
        message: "must contain at least 3 items matching contains",
        rule: "#/minContains",
      },
    ]);
    expect(f({ items: { contains: { const: 1 }, maxContains: 1 } }, "[[1, 1]]")).toEqual([
      {
        code: "json_schema.maxContains",
        message: "must contain at most 1 item matching contains",
        rule: "#/items/maxContains",
      },
    ]);
    expect(f({ contains: { const: 1 }, maxContains: 1 }, "[2]")).toEqual([
      {
        code: "json_schema.contains",
        message: "must contain at least 1 item matching contains",
        rule: "#/contains",
      },
    ]);
  });

  test("YAML instances: positions from the YAML source", () => {
    const yaml = "name: Ada\nage: -1\ntags:\n  - ok\n  - 3\n";
    expect(view(check(person, yaml, {}, "YAML"))).toEqual([
      { code: "json_schema.minimum", path: "/age", line: 2, column: 6, rule: "#/properties/age/minimum" },
      { code: "json_schema.type", path: "/tags/1", line: 5, column: 5, rule: "#/properties/tags/items/type" },
    ]);
  });

  test("each YAML document is validated", () => {
    const r = check({ type: "object", required: ["id"] }, "id: 1\n---\nname: x\n", {}, "YAML");
    expect(view(r)).toEqual([
      { code: "json_schema.required", path: "", line: 3, column: 1, rule: "#/required" },
    ]);
  });

  test("an unparsable instance is a syntax finding, not a crash", () => {
    expect(view(check(person, '{"name": }'))).toEqual([
      { code: "json.syntax_error", path: null, line: 1, column: 10, rule: null },
    ]);
    expect(check(person, "a: [1\n", {}, "YAML").findings[0].code).toBe("yaml.syntax_error");
  });

  test("deep nesting is json.max_depth", () => {
    expect(check({}, "[".repeat(600) + "]".repeat(600)).findings.map((f) => f.code)).toEqual([
      "json.max_depth",
    ]);
  });

  test("findings are capped at max_findings with truncated", () => {
    const schema = { type: "array", items: { type: "string" } };
    const r = check(schema, JSON.stringify(Array.from({ length: 50 }, (_, i) => i)), { max_findings: 5 });
    expect(r.findings.length).toBe(5);
    expect(r.truncated).toBe(true);
    expect(check(schema, "[1, 2]", { max_findings: 2 }).truncated).toBe(false);
  });

  test("pattern: under (?i:…), K (U+212A) is a word character for \\b, as ECMA says (was not)", () => {
    const schema = { type: "string", pattern: "^(?i:\\bk\\b)$" };
    expect(check(schema, '"\u212a"').findings).toEqual([]);
    expect(check(schema, '"-"').findings.map((f) => f.code)).toEqual(["json_schema.pattern"]);
  });
});

describe("json_schema: drafts", () => {
  test("draft 4 boolean exclusiveMaximum, from $schema", () => {
    const schema = { $schema: "http://json-schema.org/draft-04/schema#", maximum: 3, exclusiveMaximum: true };
    expect(check(schema, "3").findings.map((f) => f.code)).toEqual(["json_schema.exclusiveMaximum"]);
    expect(check(schema, "2").findings).toEqual([]);
  });

  test("draft 7 ignores keywords beside $ref; 2020-12 applies them", () => {
    const schema = {
      definitions: { a: { type: "integer" } },
      properties: { x: { $ref: "#/definitions/a", maximum: 1 } },
    };
    expect(check(schema, '{"x": 5}', { draft: "7" }).findings).toEqual([]);
    expect(check(schema, '{"x": 5}', { draft: "2020-12" }).findings.map((f) => f.code)).toEqual([
      "json_schema.maximum",
    ]);
  });
});

describe("json_schema: save-time checks", () => {
  const issues = (config: Record<string, unknown>) => checkStepConfig("json_schema", config);

  test("schema is required and must be an object", () => {
    expect(issues({})).toEqual([{ field: "schema", code: "required", message: "is required" }]);
    expect(issues({ schema: 3 }).map((i) => i.field)).toEqual(["schema"]);
  });

  test("the schema is meta-validated", () => {
    const r = issues({ schema: { type: "strin" } });
    expect(r.length).toBeGreaterThan(0);
    expect(r.every((i) => i.field === "schema" && i.code === "invalid_schema")).toBe(true);
    expect(issues({ schema: { minimum: "3" } })[0].field).toBe("schema");
  });

  test("remote $ref is refused: never fetched", () => {
    const r = issues({ schema: { $ref: "https://example.com/person.json" } });
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ field: "schema", code: "unresolvable_ref" });
    expect(r[0].message).toContain("never fetched");
  });

  test("a local $ref to nothing is refused", () => {
    expect(issues({ schema: { $ref: "#/$defs/missing" } })[0].code).toBe("unresolvable_ref");
    expect(issues({ schema: { $defs: { a: {} }, $ref: "#/$defs/a" } })).toEqual([]);
  });

  test("embedded resources ($id) resolve", () => {
    const schema = {
      $defs: { p: { $id: "https://example.com/p.json", type: "string" } },
      $ref: "https://example.com/p.json",
    };
    expect(issues({ schema })).toEqual([]);
  });

  test("an invalid regex is refused", () => {
    expect(issues({ schema: { pattern: "(" } })[0].field).toBe("schema");
  });

  test("patterns that cannot run in linear time are refused; nested repeats are not a problem", () => {
    expect(issues({ schema: { pattern: "^(a)\\1$" } })[0]).toEqual({
      field: "schema",
      code: "unsupported_regex",
      message:
        '#/pattern "^(a)\\\\1$" is not supported (patterns run on a linear-time engine, docs/validators.md): backreferences (\\1, \\k<name>) are not supported: they cannot run in linear time',
    });
    expect(issues({ schema: { patternProperties: { "x(?=y)": {} } } })[0].code).toBe("unsupported_regex");
    expect(issues({ schema: { pattern: "^(a+)+$", patternProperties: { "(x*)*": {} } } })).toEqual([]);
  });

  test("draft conflicts and unknown $schema", () => {
    const d4 = { $schema: "http://json-schema.org/draft-04/schema#" };
    expect(issues({ schema: d4, draft: "7" })[0]).toMatchObject({ field: "draft", code: "draft_mismatch" });
    expect(issues({ schema: { $schema: "https://example.com/my-meta" } })[0].code).toBe("unknown_draft");
    expect(issues({ schema: {}, draft: "5" })[0].field).toBe("draft");
  });

  // 2020-12 core §9.4.1: references that loop back without moving into the instance never end.
  // typebox recursed until the stack overflowed on every run; the save refuses them now.
  const NEVER_ENDS =
    "these references loop back without moving into the document (through properties, items …), so " +
    "validating would never end";
  test.each([
    [
      "two definitions referring to each other",
      { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" },
      "#/$defs/a → #/$defs/b → #/$defs/a",
    ],
    ["the root referring to itself", { $ref: "#" }, "# → #"],
    [
      "a cycle through allOf",
      { $defs: { a: { allOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" },
      "#/$defs/a → #/$defs/a/allOf/0 → #/$defs/a",
    ],
    [
      "a cycle through not",
      { $defs: { a: { not: { $ref: "#/$defs/a" } } }, properties: { x: { $ref: "#/$defs/a" } } },
      "#/$defs/a → #/$defs/a/not → #/$defs/a",
    ],
    [
      "a cycle through an anchor and then/if",
      JSON.parse('{"$defs": {"a": {"$anchor": "A", "if": true, "then": {"$ref": "#A"}}}, "$ref": "#A"}'),
      "#/$defs/a → #/$defs/a/then → #/$defs/a",
    ],
    [
      "draft 7, where $ref siblings are ignored",
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        definitions: { a: { $ref: "#/definitions/a", type: "object", properties: { x: {} } } },
        items: { $ref: "#/definitions/a" },
      },
      "#/definitions/a → #/definitions/a",
    ],
    [
      "a $dynamicRef with no dynamic anchor to land on behaves like $ref",
      { $defs: { a: { $dynamicRef: "#/$defs/a" } }, $ref: "#/$defs/a" },
      "#/$defs/a → #/$defs/a",
    ],
    [
      "across embedded resources",
      {
        $defs: {
          p: { $id: "https://example.com/p.json", $ref: "q.json" },
          q: { $id: "https://example.com/q.json", anyOf: [{ $ref: "p.json" }] },
        },
        $ref: "https://example.com/p.json",
      },
      "#/$defs/p → #/$defs/q → #/$defs/q/anyOf/0 → #/$defs/p",
    ],
  ])("a $ref cycle that never moves into the document is refused: %s", (_, schema, loop) => {
    expect(issues({ schema })).toEqual([
      { field: "schema", code: "invalid_schema", message: `${loop}: ${NEVER_ENDS}` },
    ]);
  });

  test("recursion through properties, items … is fine, and so is a cycle nothing applies", () => {
    const tree = {
      $defs: {
        node: {
          type: "object",
          properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } },
        },
      },
      $ref: "#/$defs/node",
    };
    expect(issues({ schema: tree })).toEqual([]);
    expect(check(tree, '{"children":[{"children":[{}]}]}').findings).toEqual([]);
    expect(issues({ schema: { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } } } })).toEqual([]);
    // `then` without `if` is never applied.
    expect(issues({ schema: JSON.parse('{"then": {"$ref": "#"}}') })).toEqual([]);
    // A dynamic reference lands where the evaluation path says: the run decides (below).
    expect(issues({ schema: { $dynamicAnchor: "n", allOf: [{ $dynamicRef: "#n" }] } })).toEqual([]);
  });

  test("should the engine still overflow its stack on a run, the step errors in our words", () => {
    const v = createJsonSchemaValidator();
    const config = { schema: { $dynamicAnchor: "n", allOf: [{ $dynamicRef: "#n" }] } };
    const message =
      "the schema could not be evaluated on this document: its references recurse too deeply " +
      "(references that loop back without moving into the document never end); the data was not checked";
    let thrown: unknown;
    try {
      v.compile(config)(input('{"a":1}', "JSON"), { maxFindings: 10 });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(StepLimitError);
    expect((thrown as StepLimitError).message).toBe(message);
    expect((thrown as StepLimitError).finding).toEqual({
      severity: "error",
      code: "json_schema.engine_limit",
      message,
      path: null,
      line: null,
      column: null,
      rule: null,
    });
  });

  test("unknown config keys are refused", () => {
    expect(issues({ schema: {}, strict: true })).toEqual([
      { field: "strict", code: "unknown_key", message: "is not a known key" },
    ]);
  });
});

describe("json_schema: registered resources hook", () => {
  test("a URI → schema map resolves $ref without the network", () => {
    const v = createJsonSchemaValidator({
      resources: { "https://schemas.example.org/id.json": { type: "integer" } },
    });
    const config = { schema: { properties: { id: { $ref: "https://schemas.example.org/id.json" } } } };
    expect(v.checkConfig(config)).toEqual([]);
    const r = v.compile(config)(input('{"id": "x"}', "JSON"), { maxFindings: 10 });
    expect(r.findings.map((f) => [f.code, f.path])).toEqual([["json_schema.type", "/id"]]);
  });
});

// Fuzzing the built server (2026-11-29): typebox tests a property's presence with `in`, which
// sees Object.prototype's members, so a document was checked as if it had `toString`, `valueOf`
// … properties: `required: ["toString"]` passed `{}`, `properties: {toString: {type: "string"}}`
// failed it ("/toString must be string"), `dependentRequired` took `valueOf` as present.
describe("json_schema: names of Object.prototype's members are ordinary property names", () => {
  const cases: [string, Record<string, unknown>, string, string[]][] = [
    ["required", { required: ["toString"] }, "{}", ["json_schema.required"]],
    ["required, present", { required: ["toString", "__proto__"] }, '{"toString": 1, "__proto__": 2}', []],
    ["properties, absent", { properties: { toString: { type: "string" }, valueOf: false } }, "{}", []],
    [
      "properties, present",
      { properties: { toString: { type: "string" } } },
      '{"toString": 1}',
      ["json_schema.type"],
    ],
    [
      "dependentRequired",
      { dependentRequired: { a: ["valueOf"] } },
      '{"a": 1}',
      ["json_schema.dependentRequired"],
    ],
    ["dependentSchemas", { dependentSchemas: { hasOwnProperty: false } }, '{"a": 1}', []],
    ["if/then", JSON.parse('{"if": {"required": ["isPrototypeOf"]}, "then": false}'), '{"a": 1}', []],
  ];
  for (const [label, schema, doc, expected] of cases)
    test(label, () => {
      expect(codes(check(schema, doc))).toEqual(expected);
      // The same document as YAML (a flow mapping), read by the YAML reader.
      expect(codes(check(schema, doc, {}, "YAML"))).toEqual(expected);
    });

  test("also where typebox's interpreter checks a wide schema", () => {
    const properties = Object.fromEntries(
      Array.from({ length: 3000 }, (_, i) => [`p${i}`, { type: "integer" }]),
    );
    expect(codes(check({ properties, required: ["toString"] }, '{"p1": 1}'))).toEqual([
      "json_schema.required",
    ]);
    expect(codes(check({ properties: { ...properties, valueOf: { type: "string" } } }, '{"p1": 1}'))).toEqual(
      [],
    );
  });
});

// Fuzzing against Ajv (2026-11-29): typebox applied `unevaluatedProperties` to arrays too, their
// indexes taken for property names, so `{"unevaluatedProperties": false}` refused `["x"]`.
// JSON Schema 2020-12 Core §11.3: the keyword applies to objects; an array passes it.
describe("json_schema: unevaluatedProperties ignores arrays", () => {
  test("an array passes; an object is still checked", () => {
    expect(codes(check({ unevaluatedProperties: false }, '["x", 1]'))).toEqual([]);
    expect(view(check({ unevaluatedProperties: false }, '{"a": 1}'))).toEqual([
      {
        code: "json_schema.unevaluatedProperties",
        path: "/a",
        line: 1,
        column: 2,
        rule: "#/unevaluatedProperties",
      },
    ]);
  });

  test("below items: only the objects' properties are findings", () => {
    const r = check({ items: { unevaluatedProperties: { type: "string" } } }, '[[1], {"a": "x"}, {"b": 1}]');
    expect(r.findings.map((f) => [f.code, f.path])).toEqual([["json_schema.unevaluatedProperties", "/2/b"]]);
  });

  test("inside anyOf and beside array keywords", () => {
    expect(codes(check({ anyOf: [{ unevaluatedProperties: false }, { type: "string" }] }, "[1]"))).toEqual(
      [],
    );
    expect(codes(check({ prefixItems: [true], unevaluatedProperties: false }, "[1, 2]"))).toEqual([]);
    expect(codes(check({ not: { unevaluatedProperties: false } }, "[1]"))).toEqual(["json_schema.invalid"]);
  });
});
