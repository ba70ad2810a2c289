// Where json_schema findings land when one keyword fails at several places of the document.
import { describe, expect, test } from "bun:test";
import { run } from "./helpers.ts";

const check = (schema: Record<string, unknown>, text: string, type: "JSON" | "YAML" = "JSON") =>
  run("json_schema", { schema }, text, type).findings.map((f) => ({
    code: f.code,
    message: f.message,
    path: f.path,
    line: f.line,
    column: f.column,
    rule: f.rule,
  }));

describe("json_schema: one finding per place", () => {
  test("an anyOf failing in several items explains each item from its own branch errors", () => {
    const schema = {
      items: { anyOf: [{ type: "string" }, { type: "object", properties: { k: { type: "integer" } } }] },
    };
    const closest = "must be integer (in anyOf branch 2 of 2, the closest to matching)";
    const rule = "#/items/anyOf/1/properties/k/type";
    expect(check(schema, '[{"k": true},\n {"k": true}]')).toEqual([
      { code: "json_schema.type", message: closest, path: "/0/k", line: 1, column: 8, rule },
      { code: "json_schema.type", message: closest, path: "/1/k", line: 2, column: 8, rule },
    ]);
  });

  test("items failing anyOf differently each get their own closest branch", () => {
    const schema = {
      items: {
        anyOf: [
          { type: "object", required: ["a"], properties: { a: { minimum: 5 } } },
          { type: "object", required: ["b"], properties: { b: { type: "string" }, c: { type: "string" } } },
        ],
      },
    };
    expect(check(schema, '[{"a": 1}, {"b": "x", "c": 1}]').map((f) => [f.path, f.message])).toEqual([
      ["/0/a", "must be >= 5 (in anyOf branch 1 of 2, the closest to matching)"],
      ["/1/c", "must be string (in anyOf branch 2 of 2, the closest to matching)"],
    ]);
  });
});

describe("json_schema: propertyNames", () => {
  const schema = { propertyNames: { maxLength: 2 } };
  const finding = {
    code: "json_schema.maxLength",
    message: "must not have more than 2 characters",
    path: "/abc",
    line: 1,
    rule: "#/propertyNames/maxLength",
  };

  test("a property name that fails is reported on its key, not its value", () => {
    expect(check(schema, '{"abc": 1}')).toEqual([{ ...finding, column: 2 }]);
  });

  test("the same in YAML", () => {
    expect(check(schema, "abc: 1\n", "YAML")).toEqual([{ ...finding, column: 1 }]);
  });
});
