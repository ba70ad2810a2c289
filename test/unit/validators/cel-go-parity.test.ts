// Where @bufbuild/cel answered differently from cel-go, and what a rule now gets: timestamps
// (ext/time.ts), empty-string searches (ext/code-points.ts), and the save-time word on
// two-variable comprehensions (check.ts).
import { describe, expect, test } from "bun:test";
import { compileExpression, evaluate } from "../../../src/validators/assertions/cel.ts";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { run } from "./helpers.ts";

const value = (expr: string) => evaluate(compileExpression(expr, { bool: false }), {});

describe("timestamp(string): RFC 3339, read as Go's time.Parse reads it", () => {
  test("a day the month does not have is an error (was: rolled into the next month)", () => {
    for (const [s, days] of [
      ["2026-02-31T00:00:00Z", 28],
      ["2025-02-29T00:00:00Z", 28],
      ["2026-04-31T00:00:00Z", 30],
      ["1900-02-29T00:00:00Z", 28],
    ] as const)
      expect(value(`timestamp('${s}')`)).toEqual({
        error: `not a timestamp: "${s}" (${s.slice(0, 7)} has ${days} days)`,
      });
  });

  test("hour 24 is an error (was: the next day)", () => {
    expect(value("timestamp('2026-01-01T24:00:00Z')")).toEqual({
      error: "not a timestamp in RFC 3339 format (2024-01-31T12:00:00Z)",
    });
  });

  test("leap days and month ends that exist are read", () => {
    expect(value("string(timestamp('2024-02-29T23:59:59Z'))")).toEqual({ value: "2024-02-29T23:59:59Z" });
    expect(value("string(timestamp('2000-02-29T00:00:00+01:00'))")).toEqual({
      value: "2000-02-28T23:00:00Z",
    });
    expect(value("string(timestamp('2026-12-31T00:00:00Z'))")).toEqual({ value: "2026-12-31T00:00:00Z" });
  });
});

describe("timestamp(int): seconds since the epoch", () => {
  test("1700000000 is 2023-11-14T22:13:20Z (was: read as milliseconds, 1970-01-20)", () => {
    expect(value("string(timestamp(1700000000))")).toEqual({ value: "2023-11-14T22:13:20Z" });
    expect(value("int(timestamp(1700000000)) == 1700000000")).toEqual({ value: true });
  });

  test("the range is CEL's, 0001-01-01 to 9999-12-31", () => {
    expect(value("string(timestamp(-62135596800))")).toEqual({ value: "0001-01-01T00:00:00Z" });
    expect(value("string(timestamp(253402300799))")).toEqual({ value: "9999-12-31T23:59:59Z" });
    expect(value("timestamp(253402300800)")).toEqual({ error: "timestamp out of range" });
    expect(value("timestamp(-62135596801)")).toEqual({ error: "timestamp out of range" });
  });
});

describe("string() of durations and timestamps: cel-go's shortest form", () => {
  test("durations (was: protobuf's JSON form, 1.500s)", () => {
    expect(value("string(duration('1.5s'))")).toEqual({ value: "1.5s" });
    expect(value("string(duration('-1.5s'))")).toEqual({ value: "-1.5s" });
    expect(value("string(duration('1h'))")).toEqual({ value: "3600s" });
    expect(value("string(duration('150ns'))")).toEqual({ value: "0.00000015s" });
    expect(value("string(duration('0s'))")).toEqual({ value: "0s" });
  });

  test("timestamps with a fraction (was: …:00.500Z)", () => {
    expect(value("string(timestamp('2026-01-01T10:00:00.5+01:00'))")).toEqual({
      value: "2026-01-01T09:00:00.5Z",
    });
    expect(value("string(timestamp('2026-01-01T10:00:00.123456789Z'))")).toEqual({
      value: "2026-01-01T10:00:00.123456789Z",
    });
  });

  test("a message shows them the same way", () => {
    const r = run(
      "assertions",
      {
        rules: [
          {
            id: "d",
            expr: "false",
            message: "{{ duration('1.5s') }} {{ timestamp('2026-01-01T00:00:00.250Z') }}",
          },
        ],
      },
      "{}",
      "JSON",
    );
    expect(r.findings.map((f) => f.message)).toEqual(["1.5s 2026-01-01T00:00:00.25Z"]);
  });
});

describe("indexOf and lastIndexOf of the empty string", () => {
  test("found where the search starts, the end included (was: an index error at the end)", () => {
    expect(value("'abc'.indexOf('', 3)")).toEqual({ value: 3n });
    expect(value("'abc'.lastIndexOf('', 3)")).toEqual({ value: 3n });
    expect(value("'a😀c'.indexOf('', 3)")).toEqual({ value: 3n });
    expect(value("''.indexOf('', 0)")).toEqual({ value: 0n });
  });

  test("past the end is still out of range, and so is a non-empty search from the end", () => {
    expect(value("'abc'.indexOf('', 4)")).toEqual({ error: "index 4 out of bounds [0, 3)" });
    expect(value("'abc'.indexOf('c', 3)")).toEqual({ error: "index 3 out of bounds [0, 3)" });
  });
});

test("two-variable comprehensions are refused at save, saying so (was: unknown name 'i')", () => {
  const issues = (expr: string) =>
    checkStepConfig("assertions", { rules: [{ id: "a", expr, message: "m" }] });
  expect(issues("data.l.all(i, v, v > 0)")).toEqual([
    {
      field: "rules[0].expr",
      code: "invalid_expression",
      message: "two-variable comprehensions (all(i, v, …)) are not supported",
    },
  ]);
  expect(issues("data.m.transformList(k, v, v)[0] == 1")).toEqual([
    {
      field: "rules[0].expr",
      code: "invalid_expression",
      message: "two-variable comprehensions (transformList(k, v, …)) are not supported",
    },
  ]);
  expect(issues("data.l.all(x, x > 0)")).toEqual([]);
});
