// csv_table: fractional seconds past the millisecond in comparisons (unique, keys, bounds, enum),
// and constraint values of a JSON type the field cannot read, refused at save.
import { describe, expect, test } from "bun:test";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import type { Finding } from "../../../src/validators/types.ts";
import { run } from "./helpers.ts";

const table = (fields: unknown[], csv: string, extra: Record<string, unknown> = {}) =>
  run("csv_table", { schema: { fields, ...extra } }, csv, "CSV");

const error = (
  code: string,
  message: string,
  path: string,
  line: number,
  column: number,
  rule: string,
): Finding => ({
  severity: "error",
  code: `csv.${code}`,
  message,
  path,
  line,
  column,
  rule,
});

describe("csv_table: every fractional digit of a datetime or time counts", () => {
  test("unique: values a microsecond (or less) apart are distinct; one instant written two ways is not", () => {
    const r = table(
      [{ name: "t", type: "datetime", constraints: { unique: true } }],
      [
        "t",
        "2020-01-01T00:00:00.000001Z",
        "2020-01-01T00:00:00.000002Z",
        "2020-01-01T00:00:00.0000015Z",
        "1969-12-31T23:59:59.9999999Z",
        "1969-12-31T23:59:59.999999Z",
        "2020-01-01T00:00:00.0000010Z",
        "2020-01-01T01:00:00.000002+01:00",
        "2020-01-01T00:00:00.001Z",
        "2020-01-01T00:00:00.001000000Z",
        "",
      ].join("\n"),
    );
    expect(r.findings).toEqual([
      error(
        "unique_error",
        '"2020-01-01T00:00:00.0000010Z" already appears in row 2',
        "/rows/7/t",
        7,
        1,
        "t",
      ),
      error(
        "unique_error",
        '"2020-01-01T01:00:00.000002+01:00" already appears in row 3',
        "/rows/8/t",
        8,
        1,
        "t",
      ),
      error(
        "unique_error",
        '"2020-01-01T00:00:00.001000000Z" already appears in row 9',
        "/rows/10/t",
        10,
        1,
        "t",
      ),
    ]);
  });

  test("unique on times, with and without an offset", () => {
    const r = table(
      [{ name: "t", type: "time", constraints: { unique: true } }],
      "t\n00:00:00.000001\n00:00:00.000002\n00:00:00.0000010\n01:00:00.000001+01:00\n12:30:00.5\n12:30:00.500000001\n12:30:00.500\n",
    );
    expect(r.findings).toEqual([
      error("unique_error", '"00:00:00.0000010" already appears in row 2', "/rows/4/t", 4, 1, "t"),
      error("unique_error", '"01:00:00.000001+01:00" already appears in row 4', "/rows/5/t", 5, 1, "t"),
      error("unique_error", '"12:30:00.500" already appears in row 6', "/rows/8/t", 8, 1, "t"),
    ]);
  });

  test("minimum, maximum and enum compare past the millisecond", () => {
    const fields = [
      {
        name: "t",
        type: "datetime",
        constraints: { minimum: "2020-01-01T00:00:00.0000005Z", maximum: "2020-01-01T00:00:00.000001Z" },
      },
      { name: "h", type: "time", constraints: { minimum: "12:00:00.0000005" } },
      { name: "e", type: "datetime", constraints: { enum: ["2020-01-01T00:00:00.000001Z"] } },
    ];
    const r = table(
      fields,
      [
        "t,h,e",
        "2020-01-01T00:00:00.000001Z,12:00:00.000001,2020-01-01T00:00:00.0000010Z",
        "2020-01-01T00:00:00.000002Z,12:00:00,2020-01-01T00:00:00.000002Z",
        "2020-01-01T00:00:00Z,12:00:00.0000004,2020-01-01T00:00:00.001Z",
        "2020-01-01T00:00:00.0000005Z,12:00:00.0000005,2020-01-01T00:00:00.000001Z",
        "",
      ].join("\n"),
    );
    const enumMessage = (cell: string) => `"${cell}" is not one of ["2020-01-01T00:00:00.000001Z"]`;
    expect(r.findings).toEqual([
      error(
        "constraint_error",
        '"2020-01-01T00:00:00.000002Z" is greater than the maximum 2020-01-01T00:00:00.000001Z',
        "/rows/3/t",
        3,
        1,
        "t",
      ),
      error(
        "constraint_error",
        '"12:00:00" is less than the minimum 12:00:00.0000005',
        "/rows/3/h",
        3,
        29,
        "h",
      ),
      error("constraint_error", enumMessage("2020-01-01T00:00:00.000002Z"), "/rows/3/e", 3, 38, "e"),
      error(
        "constraint_error",
        '"2020-01-01T00:00:00Z" is less than the minimum 2020-01-01T00:00:00.0000005Z',
        "/rows/4/t",
        4,
        1,
        "t",
      ),
      error(
        "constraint_error",
        '"12:00:00.0000004" is less than the minimum 12:00:00.0000005',
        "/rows/4/h",
        4,
        22,
        "h",
      ),
      error("constraint_error", enumMessage("2020-01-01T00:00:00.001Z"), "/rows/4/e", 4, 39, "e"),
    ]);
  });

  test("primary keys: two datetimes a microsecond apart are two keys", () => {
    const fields = [{ name: "t", type: "datetime" }];
    const csv = "t\n2020-01-01T00:00:00.000001Z\n2020-01-01T00:00:00.000002Z\n2020-01-01T00:00:00.0000020Z\n";
    expect(table(fields, csv, { primaryKey: "t" }).findings).toEqual([
      error("primary_key_error", "primary key (t) repeats row 3", "/rows/4", 4, 1, "primaryKey"),
    ]);
  });

  test("a millisecond value and the plain ones keep comparing as before", () => {
    const fields = [
      { name: "t", type: "datetime", constraints: { unique: true, maximum: "2020-01-01T00:00:00.5Z" } },
    ];
    const r = table(
      fields,
      "t\n2020-01-01T00:00:00.499Z\n2020-01-01T00:00:00.4990Z\n2020-01-01T00:00:00.5000001Z\n",
    );
    expect(r.findings).toEqual([
      error("unique_error", '"2020-01-01T00:00:00.4990Z" already appears in row 2', "/rows/3/t", 3, 1, "t"),
      error(
        "constraint_error",
        '"2020-01-01T00:00:00.5000001Z" is greater than the maximum 2020-01-01T00:00:00.5Z',
        "/rows/4/t",
        4,
        1,
        "t",
      ),
    ]);
  });
});

describe("csv_table: constraint values the field type cannot read are refused at save", () => {
  const issues = (field: Record<string, unknown>) =>
    checkStepConfig("csv_table", { schema: { fields: [{ name: "f", ...field }] } });
  const invalid = (key: string, message: string) => [
    { field: `schema.fields[0].constraints.${key}`, code: "invalid", message },
  ];

  test("a number for a date, time or datetime bound", () => {
    expect(issues({ type: "date", constraints: { maximum: 20201231 } })).toEqual(
      invalid("maximum", "is not a valid date: date constraint values are strings, not numbers"),
    );
    expect(issues({ type: "datetime", constraints: { minimum: 1577836800000 } })).toEqual(
      invalid("minimum", "is not a valid datetime: datetime constraint values are strings, not numbers"),
    );
    expect(issues({ type: "time", format: "%H:%M", constraints: { minimum: 3600 } })).toEqual(
      invalid(
        "minimum",
        "is not a valid time (format %H:%M): time constraint values are strings, not numbers",
      ),
    );
    expect(issues({ type: "yearmonth", constraints: { maximum: 202012 } })).toEqual(
      invalid("maximum", "is not a valid yearmonth: yearmonth constraint values are strings, not numbers"),
    );
  });

  test("enum members of a type the field cannot read", () => {
    expect(issues({ type: "date", constraints: { enum: ["2020-12-31", 20201231] } })).toEqual(
      invalid("enum", "20201231 is not a valid date: date constraint values are strings, not numbers"),
    );
    expect(issues({ type: "string", constraints: { enum: ["a", 1] } })).toEqual(
      invalid("enum", "1 is not a valid string: string constraint values are strings, not numbers"),
    );
    expect(issues({ type: "integer", constraints: { enum: [1, true] } })).toEqual(
      invalid(
        "enum",
        "true is not a valid integer: integer constraint values are numbers or strings, not booleans",
      ),
    );
    expect(issues({ type: "integer", constraints: { enum: [2.5] } })).toEqual(
      invalid("enum", "2.5 is not a valid integer"),
    );
    expect(issues({ type: "boolean", constraints: { enum: [1] } })).toEqual(
      invalid(
        "enum",
        "1 is not a valid boolean: boolean constraint values are booleans or strings, not numbers",
      ),
    );
    expect(issues({ type: "duration", constraints: { enum: [{ days: 1 }] } })).toEqual(
      invalid(
        "enum",
        '{"days":1} is not a valid duration: duration constraint values are strings, not objects',
      ),
    );
    expect(issues({ type: "yearmonth", constraints: { enum: [[2020, 5]] } })).toEqual(
      invalid(
        "enum",
        "[2020,5] is not a valid yearmonth: yearmonth constraint values are strings, not arrays",
      ),
    );
    expect(issues({ type: "date", constraints: { enum: [null] } })).toEqual(
      invalid("enum", "null is not a valid date: date constraint values are strings, not null"),
    );
    expect(issues({ type: "object", constraints: { enum: [[1]] } })).toEqual(
      invalid(
        "enum",
        "[1] is not a valid object: object constraint values are objects or strings, not arrays",
      ),
    );
  });

  test("an integer bound that is no integer", () => {
    expect(issues({ type: "integer", constraints: { minimum: 0.5 } })).toEqual(
      invalid("minimum", "is not a valid integer"),
    );
    expect(issues({ type: "year", constraints: { maximum: -1 } })).toEqual(
      invalid("maximum", "is not a valid year"),
    );
  });

  test("values the type reads stay accepted: its strings, and JSON numbers, booleans, objects where the type has them", () => {
    const ok = [
      { type: "date", constraints: { minimum: "2020-01-01", maximum: "2020-12-31", enum: ["2020-06-01"] } },
      { type: "date", format: "%d/%m/%Y", constraints: { maximum: "31/12/2020" } },
      { type: "datetime", constraints: { maximum: "2020-12-31T00:00:00.000001Z" } },
      { type: "time", constraints: { minimum: "07:07:07" } },
      { type: "year", constraints: { minimum: 4, maximum: "2020", enum: [2019, "2020"] } },
      { type: "yearmonth", constraints: { minimum: "2020-01", maximum: "2020-12", enum: ["2020-06"] } },
      { type: "integer", constraints: { minimum: 1, maximum: "10", enum: [1, "2", 3.0] } },
      { type: "number", constraints: { minimum: "0.5", maximum: 1e21, enum: [1.5, "2.5"] } },
      { type: "boolean", constraints: { enum: [true, "false"] } },
      { type: "object", constraints: { enum: [{ a: 1 }, '{"b":2}', { wrongJson: "x" }] } },
      { type: "array", constraints: { enum: [[1, 2], "[3]"] } },
      { type: "geopoint", constraints: { enum: ["90, 45", [90, 45], { lon: 90, lat: 45 }] } },
      { type: "geojson", constraints: { enum: [{ type: "Point", coordinates: [1, 2] }] } },
      { type: "any", constraints: { enum: [1, "a", true, { a: 1 }] } },
    ];
    for (const field of ok) expect([field, issues(field)]).toEqual([field, []]);
  });

  test("a year or geopoint given as JSON compares as its string form does", () => {
    const fields = [
      { name: "m", type: "yearmonth", constraints: { maximum: "2020-06" } },
      { name: "y", type: "year", constraints: { minimum: 2000 } },
      { name: "p", type: "geopoint", constraints: { enum: [[90, 45]] } },
    ];
    const r = table(fields, 'm,y,p\n2020-05,2000,"90,45"\n2020-07,1999,"45,90"\n');
    expect(r.findings).toEqual([
      error("constraint_error", '"2020-07" is greater than the maximum 2020-06', "/rows/3/m", 3, 1, "m"),
      error("constraint_error", '"1999" is less than the minimum 2000', "/rows/3/y", 3, 9, "y"),
      error("constraint_error", '"45,90" is not one of [[90,45]]', "/rows/3/p", 3, 14, "p"),
    ]);
  });
});

describe("csv_table: a date read with format any is the day written", () => {
  // Read through Date.parse, a date written with an offset was its UTC day: 23:00 at -05:00 on
  // the 10th is 04:00 UTC on the 11th, so `maximum: "1969-01-10"` refused a date of the 10th.
  const fields = [{ name: "d", type: "date", format: "any", constraints: { maximum: "1969-01-10" } }];
  test("an offset or zone name moves the instant, never the day", () => {
    const rows = [
      "1969-01-10T23:00:00-05:00",
      '"Mon, 10 Jan 1969 23:00:00 -0500"',
      '"Fri, 10 Jan 1969 01:00:00 +0500"',
      '"Fri, 10 Jan 1969 23:30:00 EST"',
      '"Fri, 10 Jan 1969 23:30:00 GMT+0100 (CET)"',
    ];
    expect(table(fields, ["d", ...rows, ""].join("\n")).findings).toEqual([]);
    const later = table(fields, 'd\n"Sat, 11 Jan 1969 00:30:00 +0100"\n').findings;
    expect(later.map((f) => [f.code, f.line])).toEqual([["csv.constraint_error", 2]]);
  });
  test("a datetime keeps its instant: the offset counts there", () => {
    const dt = [
      { name: "t", type: "datetime", format: "any", constraints: { maximum: "1969-01-11T03:59:59Z" } },
    ];
    const r = table(dt, 't\n"Mon, 10 Jan 1969 23:00:00 -0500"\n"Fri, 10 Jan 1969 22:59:59 -0500"\n');
    expect(r.findings.map((f) => [f.code, f.line])).toEqual([["csv.constraint_error", 2]]);
  });
});
