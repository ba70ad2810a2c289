// Table Schema conformance: Frictionless's own fixtures (frictionless-py, MIT; vendored under
// test/fixtures/frictionless with its licence) run through the real csv_table validator: the
// save-time check, the compile, a run on the CSV text. Two suites:
// - tables: the whole-table cases of frictionless-py's validate tests (resource, schema, dialect,
//   package foreign keys), compared as Frictionless flattens its report: [rowNumber, fieldNumber,
//   type], in order, after the test's pick/skip filter and error limit;
// - cells: every string cell of its field read tests (test_<type>_read_cell), as a cell of a
//   two-column table: a type error, or none (a value, or a missing value), and the value read.
// The counts are exact and every known miss is listed by name: the test fails when a count
// drops, when an unlisted case fails, and when a listed one starts passing (update the list and
// docs/conformance.md then).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolveDialect, scanCsv } from "../../src/validators/shared/csv.ts";
import { LineIndex } from "../../src/validators/shared/position.ts";
import { compileField } from "../../src/validators/csv-table/fields.ts";
import { typeParser } from "../../src/validators/csv-table/values.ts";
import { checkStepConfig, getValidator } from "../../src/validators/registry.ts";
import type { Finding } from "../../src/validators/types.ts";

const dir = new URL("../fixtures/frictionless/", import.meta.url);
const read = (p: string) => readFileSync(new URL(p, dir), "utf8");

interface TableCase {
  test: string;
  file?: string;
  data?: string;
  schema: Record<string, unknown> | string;
  dialect?: Record<string, unknown>;
  resources?: unknown[];
  pick?: string[];
  skip?: string[];
  limit?: number;
  expect: Array<[number | null, number | null, string]>;
}
interface CellCase {
  test: string;
  type: string;
  format: string;
  options: Record<string, unknown>;
  source: string;
  expect: "valid" | "type_error" | "missing";
  value?: number | string | boolean;
}

interface Applicability {
  test: string;
  type: string;
  constraints: Record<string, unknown>;
  valid: boolean;
}
interface ConstraintRead {
  test: string;
  field: Record<string, unknown>;
  source: string;
  order: string[];
}

const tables = (JSON.parse(read("tables.json")) as { cases: TableCase[] }).cases;
const cells = JSON.parse(read("cells.json")) as CellCase[];
const constraints = JSON.parse(read("constraints.json")) as {
  applicability: Applicability[];
  reads: ConstraintRead[];
};

const csvTable = getValidator("csv_table")!;
const HEADER_CODES = new Set([
  "extra_label",
  "missing_label",
  "blank_label",
  "duplicate_label",
  "incorrect_label",
]);
const ROW_LEVEL = new Set(["blank_row", "primary_key_error", "foreign_key_error", "source_error"]);
/** csv.primary_key_error → primary-key, as Frictionless names it. */
const frictionlessType = (code: string) =>
  code
    .replace(/^csv\./, "")
    .replace(/_key_error$/, "_key")
    .replace(/_/g, "-");

function run(config: Record<string, unknown>, text: string): Finding[] | string {
  const issues = checkStepConfig("csv_table", config);
  if (issues.length > 0) return `refused at save: ${JSON.stringify(issues)}`;
  const bytes = new TextEncoder().encode(text);
  return csvTable.compile(config)({ bytes, text, fileType: "CSV", filename: null }, { maxFindings: 1000 })
    .findings;
}

/** Our finding's [rowNumber, fieldNumber, type], the field found by name or by the cell's position. */
function flatten(f: Finding, c: TableCase, text: string, fieldNames: string[]) {
  const code = f.code.replace(/^csv\./, "");
  const row = HEADER_CODES.has(code) || f.path === null ? null : Number(f.path.split("/")[2]);
  let field: number | null = null;
  if (!ROW_LEVEL.has(code)) {
    const name = f.path?.split("/")[3];
    if (name !== undefined) field = fieldNames.indexOf(name.replace(/~1/g, "/").replace(/~0/g, "~")) + 1;
    else field = cellNumber(text, c, f.line!, f.column!);
  }
  return [row, field, frictionlessType(f.code)];
}

/** The 1-based number of the cell that starts at (line, column). */
function cellNumber(text: string, c: TableCase, line: number, column: number): number | null {
  const lines = new LineIndex(text);
  let found: number | null = null;
  scanCsv(text, resolveDialect(text, c.dialect), (rec) => {
    rec.cellStarts.forEach((start, i) => {
      const p = lines.position(start);
      if (p.line === line && p.column === column) found = i + 1;
    });
    return found === null;
  });
  return found;
}

function tableOutcome(c: TableCase): unknown {
  const text = c.file ? read(`data/${c.file}`) : c.data!;
  const schema = typeof c.schema === "string" ? JSON.parse(read(`data/${c.schema}`)) : c.schema;
  const config: Record<string, unknown> = { schema };
  if (c.dialect) config.dialect = c.dialect;
  if (c.resources) config.resources = c.resources;
  const findings = run(config, text);
  if (typeof findings === "string") return findings;
  const names = (schema.fields as Array<{ name: string }>).map((f) => f.name);
  let flat = findings.map((f) => flatten(f, c, text, names));
  if (c.pick) flat = flat.filter((x) => c.pick!.includes(x[2] as string));
  if (c.skip) flat = flat.filter((x) => !c.skip!.includes(x[2] as string));
  if (c.limit) flat = flat.slice(0, c.limit);
  return flat;
}

const quote = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

function cellOutcome(c: CellCase): { verdict: string; value?: unknown } | string {
  const field = { name: "name", type: c.type, format: c.format, ...c.options };
  const findings = run({ schema: { fields: [{ name: "id" }, field] } }, `id,name\n1,${quote(c.source)}\n`);
  if (typeof findings === "string") return findings;
  const codes = findings.map((f) => f.code);
  const verdict =
    codes.length === 0
      ? c.source === ""
        ? "missing"
        : "valid"
      : codes.length === 1 && codes[0] === "csv.type_error"
        ? "type_error"
        : codes.join(",");
  if (verdict !== "valid" || c.value === undefined) return { verdict };
  const compiled = compileField(field as never);
  if ("field" in compiled) return compiled.message;
  const got = compiled.read(c.source).value;
  // Temporal values compare as read by the same type's default (ISO) format.
  const want =
    typeof c.value === "string" && ["date", "datetime", "time"].includes(c.type)
      ? (typeParser({ type: c.type as "date" }) as (s: string) => unknown)(c.value)
      : c.value;
  return { verdict, value: got === want ? "same" : { got, want } };
}

/** Accepted at save, or refused with the constraint named: what Frictionless's Field.from_descriptor does. */
function applicabilityOutcome(c: Applicability): boolean | string {
  const issues = checkStepConfig("csv_table", {
    schema: { fields: [{ name: "field", type: c.type, constraints: c.constraints }] },
  });
  if (issues.length === 0) return true;
  const key = Object.keys(c.constraints)[0];
  return issues.length === 1 && issues[0]!.field === `schema.fields[0].constraints.${key}`
    ? false
    : JSON.stringify(issues);
}

/** The constraint errors of one cell, by name, in order (through the validator and the field). */
function constraintOutcome(c: ConstraintRead): string[] | string {
  const findings = run(
    { schema: { fields: [{ name: "id" }, c.field] } },
    `id,${c.field.name}\n1,${quote(c.source)}\n`,
  );
  if (typeof findings === "string") return findings;
  if (findings.some((f) => f.code !== "csv.constraint_error")) return findings.map((f) => f.code).join(",");
  const compiled = compileField(c.field as never);
  if ("field" in compiled) return compiled.message;
  const names = (compiled.read(c.source).problems ?? []).map((p) => p.constraint ?? p.code);
  return names.length === findings.length ? names : `${findings.length} findings, ${names.join(",")}`;
}

// Known misses, by test: what Frictionless does that Assay does not (docs/conformance.md).
const TABLE_MISSES: Record<string, string> = {};
const CELL_MISSES: Record<string, string> = {};

const cellName = (c: CellCase) =>
  `${c.test}[${c.type} ${c.format} ${JSON.stringify(c.source)} ${JSON.stringify(c.options)}]`;

describe("Frictionless table validation fixtures", () => {
  test("whole-table cases", () => {
    const failed: Record<string, unknown> = {};
    for (const c of tables) {
      const got = tableOutcome(c);
      if (JSON.stringify(got) !== JSON.stringify(c.expect)) failed[c.test] = { got, want: c.expect };
    }
    expect(Object.keys(failed).filter((t) => !(t in TABLE_MISSES))).toEqual([]);
    expect(Object.keys(TABLE_MISSES).filter((t) => !(t in failed))).toEqual([]);
    expect({ passed: tables.length - Object.keys(failed).length, total: tables.length }).toEqual({
      passed: 47,
      total: 47,
    });
  });

  test("constraint applicability, checked at save", () => {
    const failed: Record<string, unknown> = {};
    for (const c of constraints.applicability) {
      const got = applicabilityOutcome(c);
      if (got !== c.valid) failed[`${c.test}[${c.type} ${JSON.stringify(c.constraints)}]`] = got;
    }
    expect(failed).toEqual({});
    expect(constraints.applicability.length).toBe(75);
  });

  test("constraint checks of a cell", () => {
    const failed: Record<string, unknown> = {};
    for (const c of constraints.reads) {
      const got = constraintOutcome(c);
      if (JSON.stringify(got) !== JSON.stringify(c.order))
        failed[`${c.test}[${JSON.stringify(c.source)}]`] = got;
    }
    expect(failed).toEqual({});
    expect(constraints.reads.length).toBe(36);
  });

  test("cell parsing", () => {
    const failed: Record<string, unknown> = {};
    for (const c of cells) {
      const got = cellOutcome(c);
      const ok =
        typeof got !== "string" &&
        got.verdict === c.expect &&
        (got.value === undefined || got.value === "same");
      if (!ok) failed[cellName(c)] = { got, want: c.expect, value: c.value };
    }
    expect(Object.entries(failed).filter(([t]) => !(t in CELL_MISSES))).toEqual([]);
    expect(Object.keys(CELL_MISSES).filter((t) => !(t in failed))).toEqual([]);
    expect({ passed: cells.length - Object.keys(failed).length, total: cells.length }).toEqual({
      passed: 247,
      total: 247,
    });
  });
});
