// The published config schema of csv_table (GET /api/v1/validators/) and the save agree: a field
// one refuses, the other refuses too — the properties and constraints of each type included.
import { describe, expect, test } from "bun:test";
import Schema from "typebox/schema";
import { getValidator } from "../../../src/validators/registry.ts";
import { checkCsvTableConfig } from "../../../src/validators/csv-table/schema.ts";

const published = Schema.Compile(getValidator("csv_table")!.configSchema as never);
const withField = (field: Record<string, unknown>) => ({ schema: { fields: [{ name: "a", ...field }] } });

describe("csv_table: the published config schema says what the save accepts", () => {
  const cases: [string, Record<string, unknown>, boolean][] = [
    ["a field without a type (a string) with minLength", { constraints: { minLength: 1 } }, true],
    ["a string field with a pattern", { type: "string", constraints: { pattern: "[a-z]+" } }, true],
    ["a boolean field with trueValues", { type: "boolean", trueValues: ["Y"] }, true],
    [
      "a number field with groupChar and bounds",
      { type: "number", groupChar: ",", constraints: { minimum: 0, maximum: "9.5" } },
      true,
    ],
    ["an integer field with bareNumber", { type: "integer", bareNumber: false }, true],
    ["a date field with a minimum", { type: "date", constraints: { minimum: "2026-01-01" } }, true],
    [
      "a year field with an enum of numbers and strings",
      { type: "year", constraints: { enum: [2025, "2026"] } },
      true,
    ],
    ["an array field with maxLength", { type: "array", constraints: { maxLength: 3 } }, true],
    [
      "any field, unique and an enum of anything",
      { type: "any", constraints: { unique: true, enum: [1, "a", true, {}, []] } },
      true,
    ],
    ["a field without a type with trueValues", { trueValues: ["Y"] }, false],
    ["a string field with trueValues", { type: "string", trueValues: ["Y"] }, false],
    ["an integer field with minLength", { type: "integer", constraints: { minLength: 1 } }, false],
    ["an integer field with groupChar", { type: "integer", groupChar: "," }, false],
    ["a boolean field with bareNumber", { type: "boolean", bareNumber: true }, false],
    ["a date field with a pattern", { type: "date", constraints: { pattern: "x" } }, false],
    ["a duration field with a maximum", { type: "duration", constraints: { maximum: "P1D" } }, false],
    ["a date field with a numeric minimum", { type: "date", constraints: { minimum: 20201231 } }, false],
    ["an integer field with a fractional maximum", { type: "integer", constraints: { maximum: 1.5 } }, false],
    ["a year field with a negative minimum", { type: "year", constraints: { minimum: -1 } }, false],
    ["a string field with a numeric enum member", { type: "string", constraints: { enum: ["a", 1] } }, false],
    ["a boolean field with a numeric enum member", { type: "boolean", constraints: { enum: [1] } }, false],
  ];
  for (const [what, field, ok] of cases)
    test(`${what}: ${ok ? "accepted" : "refused"} by both`, () => {
      const config = withField(field);
      expect(published.Check(config)).toBe(ok);
      expect(checkCsvTableConfig(config)).toEqual(ok ? [] : [expect.objectContaining({ code: "invalid" })]);
    });

  test("the rules hold for a data package's other resources too", () => {
    const config = {
      schema: { fields: [{ name: "a" }] },
      resources: [
        {
          name: "r",
          data: "a\n1\n",
          schema: { fields: [{ name: "a", type: "integer", trueValues: ["Y"] }] },
        },
      ],
    };
    expect(published.Check(config)).toBe(false);
    expect(checkCsvTableConfig(config).map((i) => i.field)).toEqual([
      "resources[0].schema.fields[0].trueValues",
    ]);
  });

  test("the save's worded issue, not the published rules' generic one, names the property", () => {
    expect(checkCsvTableConfig(withField({ type: "integer", constraints: { minLength: 1 } }))).toEqual([
      {
        field: "schema.fields[0].constraints.minLength",
        code: "invalid",
        message: 'does not apply to integer fields ("a")',
      },
    ]);
  });
});
