import { describe, expect, test } from "bun:test";
import { MAX_CSV_COLUMNS } from "../../../src/validators/limits.ts";
import { checkStepConfig, getValidator } from "../../../src/validators/registry.ts";
import { brief, codes, run } from "./helpers.ts";

const schema = {
  fields: [
    { name: "id", type: "integer", constraints: { required: true, unique: true, minimum: 1 } },
    { name: "name", type: "string", constraints: { minLength: 2, maxLength: 10, pattern: "[A-Z][a-z]+" } },
    { name: "born", type: "date" },
    { name: "active", type: "boolean" },
    { name: "score", type: "number", constraints: { maximum: 100 } },
  ],
  missingValues: ["", "NA"],
};

const table = (csv: string, extra: Record<string, unknown> = {}, s: Record<string, unknown> = schema) =>
  run("csv_table", { schema: s, ...extra }, csv, "CSV");

const HEADER = "id,name,born,active,score\n";

describe("csv_table: rows", () => {
  test("a valid table passes", () => {
    expect(table(`${HEADER}1,Ada,1815-12-10,true,99.5\n2,Alan,1912-06-23,false,NA\n`).findings).toEqual([]);
  });

  test("type errors at the cell, path /rows/<n>/<field>", () => {
    const r = table(`${HEADER}1,Ada,1815-13-10,yes,abc\n`);
    expect(brief(r, true)).toEqual([
      { code: "csv.type_error", line: 2, column: 7, path: "/rows/2/born" },
      { code: "csv.type_error", line: 2, column: 18, path: "/rows/2/active" },
      { code: "csv.type_error", line: 2, column: 22, path: "/rows/2/score" },
    ]);
    expect(r.findings[0].message).toBe('"1815-13-10" is not a valid date');
  });

  test("constraint errors: required, minimum, length, pattern, maximum; each failing one reported", () => {
    const r = table(`${HEADER}NA,Ada,,,\n0,A,,,\n3,ada,,,101\n4,Abcdefghijk,,,\n`);
    expect(r.findings.map((f) => f.message).slice(2, 4)).toEqual([
      '"A" is shorter than 2',
      '"A" does not match the pattern [A-Z][a-z]+',
    ]);
    expect(brief(r, true)).toEqual([
      { code: "csv.constraint_error", line: 2, column: 1, path: "/rows/2/id" },
      { code: "csv.constraint_error", line: 3, column: 1, path: "/rows/3/id" },
      { code: "csv.constraint_error", line: 3, column: 3, path: "/rows/3/name" },
      { code: "csv.constraint_error", line: 3, column: 3, path: "/rows/3/name" },
      { code: "csv.constraint_error", line: 4, column: 3, path: "/rows/4/name" },
      { code: "csv.constraint_error", line: 4, column: 9, path: "/rows/4/score" },
      { code: "csv.constraint_error", line: 5, column: 3, path: "/rows/5/name" },
    ]);
  });

  test("unique compares typed values", () => {
    const r = table(`${HEADER}1,Ada,,,\n01,Bob,,,\n`);
    expect(brief(r, true)).toEqual([{ code: "csv.unique_error", line: 3, column: 1, path: "/rows/3/id" }]);
    expect(r.findings[0].message).toContain("row 2");
  });

  test("numbers are compared as exact decimals, as Frictionless's Decimal compares them", () => {
    const s = {
      fields: [
        { name: "x", type: "number", constraints: { unique: true } },
        { name: "i", type: "integer", constraints: { unique: true } },
      ],
    };
    const distinct = [
      ["9007199254740993", "9007199254740993"],
      ["9007199254740992", "9007199254740992"],
      ["0.1", "1"],
      ["0.10000000000000001", "2"],
      ["1e400", "3"],
      ["2e400", "4"],
      ["1e-400", "5"],
      ["0", "100000000000000000000000000001"],
      ["12345678901234567890.5", "100000000000000000000000000002"],
      ["12345678901234567890.25", "-9007199254740993"],
    ];
    expect(table(`x,i\n${distinct.map((r) => r.join(",")).join("\n")}\n`, {}, s).findings).toEqual([]);
    // One value, written differently; a number and an integer field agree on keys.
    const same = [
      ["1.0", "1"],
      ["1", "01"],
      ["-0", "0"],
      ["0.000", "-0"],
      ["1E2", "100"],
      ["100.00", "+100"],
      ["1e30", "1000000000000000000000000000000"],
      ["1000000000000000000000000000000.0", "9007199254740993"],
      ["0.10", "9007199254740993"],
      ["1e-1", "9007199254740994"],
      ["9007199254740993.000", "9007199254740994"],
      ["9.007199254740993e15", "11"],
    ];
    const r = table(`x,i\n${same.map((row) => row.join(",")).join("\n")}\n`, {}, s);
    expect(r.findings.map((f) => [f.path, f.message])).toEqual([
      ["/rows/3/x", '"1" already appears in row 2'],
      ["/rows/3/i", '"01" already appears in row 2'],
      ["/rows/5/x", '"0.000" already appears in row 4'],
      ["/rows/5/i", '"-0" already appears in row 4'],
      ["/rows/7/x", '"100.00" already appears in row 6'],
      ["/rows/7/i", '"+100" already appears in row 6'],
      ["/rows/9/x", '"1000000000000000000000000000000.0" already appears in row 8'],
      ["/rows/10/i", '"9007199254740993" already appears in row 9'],
      ["/rows/11/x", '"1e-1" already appears in row 10'],
      ["/rows/12/i", '"9007199254740994" already appears in row 11'],
      ["/rows/13/x", '"9.007199254740993e15" already appears in row 12'],
    ]);
  });

  test("exact numbers in primary and foreign keys, enum and bounds", () => {
    const s = {
      fields: [
        { name: "id", type: "number" },
        {
          name: "ref",
          type: "integer",
          constraints: { enum: ["9007199254740993", "9007199254740992", "1"], maximum: "9007199254740992" },
        },
        { name: "v", type: "number", constraints: { minimum: "0.1", maximum: 1e21 } },
      ],
      primaryKey: "id",
      foreignKeys: [{ fields: "ref", reference: { resource: "", fields: "id" } }],
    };
    const csv =
      "id,ref,v\n9007199254740992,9007199254740992,0.1\n9007199254740993,1,1e21\n" +
      "9007199254740992.0,9007199254740993,0.099999999999999999\n1,9007199254740994,1000000000000000000000.1\n";
    expect(brief(table(csv, {}, s), true)).toEqual([
      { code: "csv.constraint_error", line: 4, column: 20, path: "/rows/4/ref" },
      { code: "csv.constraint_error", line: 4, column: 37, path: "/rows/4/v" },
      { code: "csv.primary_key_error", line: 4, column: 1, path: "/rows/4" },
      { code: "csv.constraint_error", line: 5, column: 3, path: "/rows/5/ref" },
      { code: "csv.constraint_error", line: 5, column: 3, path: "/rows/5/ref" },
      { code: "csv.constraint_error", line: 5, column: 20, path: "/rows/5/v" },
      { code: "csv.foreign_key_error", line: 5, column: 1, path: "/rows/5" },
    ]);
  });

  test("missing and extra cells, blank rows", () => {
    const r = table(`${HEADER}1,Ada\n\n2,Bob,,,,x\n`);
    expect(brief(r, true)).toEqual([
      { code: "csv.missing_cell", line: 2, column: 6, path: "/rows/2/born" },
      { code: "csv.missing_cell", line: 2, column: 6, path: "/rows/2/active" },
      { code: "csv.missing_cell", line: 2, column: 6, path: "/rows/2/score" },
      { code: "csv.blank_row", line: 3, column: 1, path: "/rows/3" },
      { code: "csv.extra_cell", line: 4, column: 10, path: "/rows/4" },
    ]);
  });

  test("primary key duplicates; a key partly empty is a key, an all-empty one an error", () => {
    const s = { fields: [{ name: "a" }, { name: "b", type: "integer" }], primaryKey: ["a", "b"] };
    const r = table("a,b\nx,1\nx,2\nx,01\ny,\n,\n", {}, s);
    expect(brief(r, true)).toEqual([
      { code: "csv.primary_key_error", line: 4, column: 1, path: "/rows/4" },
      { code: "csv.blank_row", line: 6, column: 1, path: "/rows/6" },
      { code: "csv.primary_key_error", line: 6, column: 1, path: "/rows/6" },
    ]);
  });

  test("enum, formats and temporal bounds", () => {
    const s = {
      fields: [
        { name: "c", constraints: { enum: ["red", "green"] } },
        { name: "e", format: "email" },
        { name: "d", type: "date", format: "%d/%m/%Y", constraints: { minimum: "01/01/2000" } },
        { name: "t", type: "datetime" },
        { name: "y", type: "year" },
        { name: "h", type: "time" },
      ],
    };
    const ok = "c,e,d,t,y,h\nred,a@b.io,31/12/2000,2024-01-02T03:04:05Z,1999,23:59:59\n";
    expect(table(ok, {}, s).findings).toEqual([]);
    const bad = "c,e,d,t,y,h\nblue,nope,31/12/1999,2024-01-02 03:04,99,24:00:01\n";
    expect(codes(table(bad, {}, s))).toEqual([
      "csv.constraint_error",
      "csv.type_error",
      "csv.constraint_error",
      "csv.type_error",
      "csv.type_error",
      "csv.type_error",
    ]);
  });

  test("years 1 to 99 are those years, not 1900 to 1999; year 0 is no date", () => {
    const s = {
      fields: [
        { name: "d", type: "date", constraints: { unique: true, maximum: "1900-01-01" } },
        { name: "t", type: "datetime", constraints: { unique: true, maximum: "1900-01-01T00:00:00Z" } },
        { name: "p", type: "date", format: "%d/%m/%Y", constraints: { unique: true, maximum: "01/01/1900" } },
      ],
    };
    const ok = table(
      "d,t,p\n0050-06-01,0050-06-01T00:00:00Z,01/06/0050\n1850-06-01,1850-06-01T00:00:00Z,01/06/1850\n" +
        "0004-02-29,0004-02-29T12:00:00Z,29/02/0004\n0001-01-01,0001-01-01T00:00:00Z,01/01/0001\n",
      {},
      s,
    );
    expect(ok.findings).toEqual([]);
    const r = table(
      "d,t,p\n0050-06-01,0050-06-01T00:00:00Z,01/06/0050\n1950-06-01,1950-06-01T00:00:00Z,01/06/1950\n" +
        "0000-01-01,0000-01-01T00:00:00Z,01/01/0000\n0003-02-29,,\n",
      {},
      s,
    );
    expect(brief(r, true)).toEqual([
      { code: "csv.constraint_error", line: 3, column: 1, path: "/rows/3/d" },
      { code: "csv.constraint_error", line: 3, column: 12, path: "/rows/3/t" },
      { code: "csv.constraint_error", line: 3, column: 33, path: "/rows/3/p" },
      { code: "csv.type_error", line: 4, column: 1, path: "/rows/4/d" },
      { code: "csv.type_error", line: 4, column: 12, path: "/rows/4/t" },
      { code: "csv.type_error", line: 4, column: 33, path: "/rows/4/p" },
      { code: "csv.type_error", line: 5, column: 1, path: "/rows/5/d" },
    ]);
    expect(r.findings[0].message).toBe('"1950-06-01" is greater than the maximum 1900-01-01');
    expect(r.findings[3].message).toBe('"0000-01-01" is not a valid date');
  });

  test("quoted multi-line cells keep positions right", () => {
    const s = { fields: [{ name: "a" }, { name: "n", type: "integer" }] };
    expect(brief(table('a,n\n"x\ny",1\n"z",q\n', {}, s), true)).toEqual([
      { code: "csv.type_error", line: 4, column: 5, path: "/rows/3/n" },
    ]);
  });
});

describe("csv_table: header", () => {
  const s = { fields: [{ name: "a" }, { name: "b" }, { name: "c" }] };
  test("missing, extra, duplicate and incorrect labels", () => {
    expect(brief(table("a,b\n", {}, s), true)).toEqual([
      { code: "csv.missing_label", line: 1, column: 4, path: "/rows/1/c" },
    ]);
    expect(brief(table("a,b,c,d\n", {}, s), true)).toEqual([
      { code: "csv.extra_label", line: 1, column: 7, path: "/rows/1" },
    ]);
    expect(codes(table("a,a,c\n", {}, s))).toEqual(["csv.duplicate_label"]);
    expect(codes(table("a,,c\n", {}, s))).toEqual(["csv.blank_label"]);
    const r = table("a,c,b\n", {}, s);
    expect(brief(r, true)).toEqual([
      { code: "csv.incorrect_label", line: 1, column: 3, path: "/rows/1/b" },
      { code: "csv.incorrect_label", line: 1, column: 5, path: "/rows/1/c" },
    ]);
    expect(r.findings[0].message).toContain("out of order");
  });
  test("a label is trimmed as Python does (Frictionless): not of U+FEFF, so a second byte order mark is a wrong label", () => {
    const bom = [0xef, 0xbb, 0xbf];
    const bytes = (...prefix: number[]) =>
      new Uint8Array([...prefix, ...new TextEncoder().encode("a,b,c\n")]);
    const csv = (b: Uint8Array) => run("csv_table", { schema: s }, b, "CSV");
    expect(csv(bytes(...bom)).findings).toEqual([]);
    const r = csv(bytes(...bom, ...bom));
    expect(brief(r, true)).toEqual([{ code: "csv.incorrect_label", line: 1, column: 1, path: "/rows/1/a" }]);
    expect(r.findings[0].message).toBe(
      'column 1 is "\ufeffa" but the schema expects "a" (it begins with U+FEFF: the file has a second byte order mark)',
    );
    // Python's whitespace is trimmed, U+001F and U+0085 included; the syntax check reads the BOM as data.
    expect(table(" a\x1f,\u0085b,c\u3000\n", {}, s).findings).toEqual([]);
    expect(run("syntax", {}, bytes(...bom, ...bom), "CSV").findings).toEqual([]);
  });
  test("no header: every record is data", () => {
    const r = table(
      "1,2\n",
      { dialect: { header: false } },
      { fields: [{ name: "x", type: "integer" }, { name: "y" }] },
    );
    expect(r.findings).toEqual([]);
  });
});

describe("csv_table: dialect", () => {
  const s = { fields: [{ name: "a" }, { name: "n", type: "integer" }] };
  test("TSV is detected when the first line has tabs and no commas", () => {
    expect(brief(table("a\tn\nx,y\tz\n", {}, s), true)).toEqual([
      { code: "csv.type_error", line: 2, column: 5, path: "/rows/2/n" },
    ]);
  });
  test("explicit delimiter and quote", () => {
    expect(table("a;n\n'x;y';3\n", { dialect: { delimiter: ";", quoteChar: "'" } }, s).findings).toEqual([]);
  });
  test("mixed line breaks: each of \\r\\n, \\n and \\r ends a row, as in Python's csv", () => {
    const s = {
      fields: [
        { name: "a", type: "integer" },
        { name: "d", type: "date", constraints: { minimum: "1900-01-01" } },
        { name: "n" },
      ],
    };
    const csv = "a,d,n\r\n1,2000-01-01,x\n2,2000-01-02,y\r\n3,2000-01-03,z\r4,1800-01-01,w,extra\r\nq,,\n";
    expect(brief(table(csv, {}, s), true)).toEqual([
      { code: "csv.constraint_error", line: 5, column: 3, path: "/rows/5/d" },
      { code: "csv.extra_cell", line: 5, column: 16, path: "/rows/5" },
      { code: "csv.type_error", line: 6, column: 1, path: "/rows/6/a" },
    ]);
  });

  test("syntax errors surface as csv.syntax_error", () => {
    expect(brief(table('a,n\n"x,1\n', {}, s))).toEqual([{ code: "csv.syntax_error", line: 2, column: 1 }]);
  });
});

describe("csv_table: limits and truncation", () => {
  test("too many columns stops with a finding", () => {
    const wide = `${"x,".repeat(MAX_CSV_COLUMNS + 5)}x\n`;
    expect(codes(table(wide, {}, { fields: [{ name: "x" }] }))).toEqual(["csv.too_many_columns"]);
  });
  test("max_findings caps and truncates", () => {
    const s = { fields: [{ name: "n", type: "integer" }] };
    const r = table(`n\n${"x\n".repeat(100)}`, { max_findings: 10 }, s);
    expect(r.findings).toHaveLength(10);
    expect(r.truncated).toBe(true);
  });
});

describe("csv_table: save-time checks", () => {
  const issues = (config: Record<string, unknown>) => checkStepConfig("csv_table", config);
  test("shape and meaning", () => {
    expect(issues({ schema: { fields: [{ name: "a", type: "decimal" }] } })[0].field).toBe(
      "schema.fields[0].type",
    );
    expect(issues({ schema: { fields: [{ name: "a" }, { name: "a" }] } })[0]).toMatchObject({
      field: "schema.fields[1].name",
      code: "duplicate",
    });
    expect(issues({ schema: { fields: [{ name: "a" }], primaryKey: "b" } })[0].code).toBe("unknown_field");
    expect(
      issues({ schema: { fields: [{ name: "a", constraints: { pattern: "(a)\\1" } }] } })[0],
    ).toMatchObject({
      field: "schema.fields[0].constraints.pattern",
      code: "invalid",
    });
    expect(issues({ schema: { fields: [{ name: "a", type: "date", format: "%Q" }] } })[0].field).toBe(
      "schema.fields[0].format",
    );
    expect(
      issues({ schema: { fields: [{ name: "a", type: "integer", constraints: { minimum: "x" } }] } })[0]
        .field,
    ).toBe("schema.fields[0].constraints.minimum");
    expect(issues({ schema: { fields: [{ name: "a" }] }, dialect: { delimiter: ";;" } })[0].field).toBe(
      "dialect.delimiter",
    );
    expect(issues({ schema: { fields: [{ name: "a" }], foreignKeys: [] } })).toEqual([]);
    expect(issues({ schema: { fields: [{ name: "a", constraints: { unknown: 1 } }] } })[0]).toMatchObject({
      field: "schema.fields[0].constraints.unknown",
      code: "unknown_key",
    });
  });
});

describe("csv_table: foreign keys into package resources", () => {
  const config = (data: string) => ({
    schema: {
      fields: [{ name: "id", type: "integer" }],
      foreignKeys: [{ fields: "id", reference: { resource: "ids", fields: "id" } }],
    },
    resources: [{ name: "ids", data, schema: { fields: [{ name: "id", type: "integer" }] } }],
  });
  test("a referenced resource that parses gives its keys", () => {
    const r = table("id\n1\n3\n", config("id\n1\n2\n"), config("").schema);
    expect(brief(r, true)).toEqual([{ code: "csv.foreign_key_error", line: 3, column: 1, path: "/rows/3" }]);
  });
  test("one that does not parse is refused at save, and never compiles to an empty key set", () => {
    const bad = config('id\n1\n"2\n');
    expect(checkStepConfig("csv_table", bad)).toEqual([
      { field: "resources[0].data", code: "invalid", message: "quoted field is never closed (line 3)" },
    ]);
    expect(() => getValidator("csv_table")!.compile(bad)).toThrow(
      'csv_table config not checked: resource "ids": quoted field is never closed (line 3)',
    );
  });
});
