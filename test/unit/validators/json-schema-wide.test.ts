// Wide JSON Schemas (src/validators/json-schema/engine.ts, enum-sets.ts): a 20,000-value enum or
// 12,000 properties compile to code no deeper than MAX_CODE_DEPTH, so what passes at save runs on
// every thread; and a compile that does run out of stack is a finding in our words.
import { describe, expect, test } from "bun:test";
import { codeDepth, compileCheck, MAX_CODE_DEPTH } from "../../../src/validators/json-schema/engine.ts";
import { ENUM_SET_MIN, withEnumSets } from "../../../src/validators/json-schema/enum-sets.ts";
import { compileJsonSchema } from "../../../src/validators/json-schema/index.ts";
import { StepLimitError } from "../../../src/validators/limit-error.ts";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { codes, run } from "./helpers.ts";

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("json_schema: large enums", () => {
  test("a 20,000-value enum of numbers and strings passes its values and fails others", () => {
    const schema = {
      type: "array",
      items: { enum: [...range(20_000), ...range(20_000).map((i) => `c${i}`)] },
    };
    expect(run("json_schema", { schema }, '[0, 19999, "c0", "c19999"]', "JSON").findings).toEqual([]);
    const r = run("json_schema", { schema }, '[20000, "c20000", "0", 0.5, null, true]', "JSON");
    expect(r.findings.map((f) => [f.code, f.path])).toEqual(
      ["/0", "/1", "/2", "/3", "/4", "/5"].map((p) => ["json_schema.enum", p]),
    );
  });

  test("the lookup keeps the enum's meaning: objects and arrays by value, 1 and 1.0 equal, '1' not 1", () => {
    const values = [...range(ENUM_SET_MIN), { a: [1, { b: null }] }, [1, "x"], null, false, "1.5"];
    const check = compileCheck({}, { enum: values });
    for (const ok of [0, 1.0, { a: [1, { b: null }] }, [1, "x"], null, false, "1.5"])
      expect(check.Check(ok)).toBe(true);
    for (const bad of ["1", { a: [1, { b: 0 }] }, [1], [1, "x", 2], true, 1.5, {}, ENUM_SET_MIN])
      expect(check.Check(bad)).toBe(false);
  });

  test("only large enums become lookups, and the schema given is never changed", () => {
    const small = { properties: { a: { enum: range(ENUM_SET_MIN - 1) } } };
    expect(withEnumSets(small)).toBe(small);
    const large = { $defs: { a: { enum: range(ENUM_SET_MIN) } }, anyOf: [{ type: "string" }] };
    const out = withEnumSets(large) as { $defs: { a: Record<string, unknown> }; anyOf: unknown[] };
    expect(Object.keys(out.$defs.a)).toEqual(["~refine"]);
    expect(out.anyOf).toBe(large.anyOf);
    expect(large.$defs.a).toEqual({ enum: range(ENUM_SET_MIN) });
  });
});

describe("json_schema: wide schemas", () => {
  const props = (n: number) =>
    Object.fromEntries(range(n).map((i) => [`p${i}`, { type: "string", pattern: "^[a-z]+$" }]));

  test("12,000 properties are checked by the interpreter, user patterns on the linear-time engine", () => {
    const schema = { type: "object", properties: props(12_000) };
    const check = compileCheck({}, schema);
    expect(check.compiled).toBe(false);
    expect(check.Check({ p0: "abc", p11999: "xyz" })).toBe(true);
    expect(check.Check({ p11999: "ABC" })).toBe(false);
    // A pattern the backtracking engine gives up on (issue #19) is decided by the linear one.
    const evil = compileCheck(
      {},
      { type: "object", properties: { ...props(2_000), x: { pattern: "^(a+)+$" } } },
    );
    expect(evil.Check({ x: `${"a".repeat(40)}!` })).toBe(false);
    expect(evil.Check({ x: "a".repeat(40) })).toBe(true);
  });

  test("through the validator: saved, passes and fails with findings", () => {
    const strings = Object.fromEntries(range(12_000).map((i) => [`p${i}`, { type: "string" }]));
    const schema = { type: "object", properties: strings, required: ["p0"] };
    expect(run("json_schema", { schema }, '{"p0": "a", "p11999": "b"}', "JSON").findings).toEqual([]);
    expect(codes(run("json_schema", { schema }, '{"p11999": 1}', "JSON"))).toEqual([
      "json_schema.required",
      "json_schema.type",
    ]);
  }, 60_000);

  test("ordinary schemas stay compiled", () => {
    expect(compileCheck({}, { type: "object", properties: props(100) }).compiled).toBe(true);
    expect(compileCheck({}, { enum: range(20_000) }).compiled).toBe(true);
  });

  test("codeDepth skips brackets inside string literals and stops past the bound", () => {
    expect(codeDepth(["f(a[\"((\"], g('['), `{`)"])).toBe(2);
    expect(codeDepth(["(".repeat(MAX_CODE_DEPTH + 500)])).toBe(MAX_CODE_DEPTH + 1);
  });
});

describe("json_schema: a compile out of stack", () => {
  // 10,000 references in a chain: typebox's build follows them recursively, deeper than any
  // thread's stack (the main thread's ended near 7,500 in Bun 1.4.5, a worker's near 5,600).
  const $defs = Object.fromEntries(
    range(10_000).map((i) => [`d${i}`, i === 9_999 ? { type: "integer" } : { $ref: `#/$defs/d${i + 1}` }]),
  );
  const config = { schema: { $ref: "#/$defs/d0", $defs } };
  const because = "its subschemas and the references between them nest too deeply";

  test("is a 400 at save that says so", () => {
    expect(checkStepConfig("json_schema", config)).toEqual([
      { field: "schema", code: "invalid_schema", message: `cannot be compiled: ${because}` },
    ]);
  }, 60_000);

  test("on a run, is the step's finding, never the engine's RangeError", () => {
    let thrown: unknown;
    try {
      compileJsonSchema(config);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(StepLimitError);
    const message = `the schema could not be compiled: ${because}; the data was not checked`;
    expect((thrown as StepLimitError).finding).toEqual({
      severity: "error",
      code: "json_schema.engine_limit",
      message,
      path: null,
      line: null,
      column: null,
      rule: null,
    });
  }, 60_000);
});
