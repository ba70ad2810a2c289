// `csv_table`: checks CSV/TSV against a Table Schema (Frictionless-style codes). Columns bind to
// fields by position, as in Frictionless. Paths are "/rows/<n>/<field>" where n is the 1-based
// record number in the file (the header is row 1, like a spreadsheet); line/column point at the cell.
import { type CsvRecord, resolveDialect, scanCsv } from "../shared/csv.ts";
import { FindingCollector, finding, pointerJoin } from "../shared/findings.ts";
import { LineIndex } from "../shared/position.ts";
import type { ValidationContext, ValidationInput, ValidatorDef } from "../types.ts";
import { type CellCheck, compileField } from "./fields.ts";
import { type CsvTableConfig, checkCsvTableConfig, csvTableConfigSchema, primaryKeyOf } from "./schema.ts";

function compile(config: unknown) {
  const cfg = config as CsvTableConfig;
  const fields = cfg.schema.fields.map((f) => {
    const check = compileField(f);
    if (typeof check !== "function")
      throw new Error(`csv_table config not checked: ${f.name}: ${check.message}`);
    return { def: f, check };
  });
  const missingValues = cfg.schema.missingValues ?? [""];
  const missingSet = new Set(missingValues);
  // Most schemas keep the default [""]: a comparison, where Set.has would hash every cell.
  const isMissing =
    missingSet.size === 1 ? (raw: string) => raw === missingValues[0] : (raw: string) => missingSet.has(raw);
  const pk = primaryKeyOf(cfg.schema).map((name) => fields.findIndex((f) => f.def.name === name));
  const required = fields.map((f, i) => f.def.constraints?.required === true || pk.includes(i));

  return (input: ValidationInput, ctx: ValidationContext) => {
    const out = new FindingCollector(ctx.maxFindings);
    const { text } = input;
    const dialect = resolveDialect(text, cfg.dialect);
    const lines = new LineIndex(text);
    const uniques = fields.map((f) => (f.def.constraints?.unique ? new Map<unknown, number>() : null));
    const keys = new Map<string, number>();
    const at = (offset: number) => lines.position(offset);
    const rowPath = (n: number, field?: string) =>
      field === undefined ? `/rows/${n}` : pointerJoin(`/rows/${n}`, field);
    const add = (code: string, message: string, rec: CsvRecord, offset: number, field?: string) =>
      out.add(
        finding(`csv.${code}`, message, {
          path: rowPath(rec.number, field),
          rule: field ?? null,
          ...at(offset),
        }),
      );

    const header = (rec: CsvRecord) => {
      const seen = new Map<string, number>();
      rec.cells.forEach((label, i) => {
        const off = rec.cellStarts[i] ?? rec.end;
        const field = fields[i]?.def.name;
        if (seen.has(label))
          add("duplicate_label", `label "${label}" repeats column ${seen.get(label)}`, rec, off, field);
        seen.set(label, i + 1);
        if (field === undefined)
          add("extra_label", `column ${i + 1} "${label}" is not in the schema`, rec, off);
        else if (label !== field) {
          const elsewhere = fields.findIndex((f) => f.def.name === label);
          const why =
            elsewhere >= 0
              ? ` (the schema puts "${label}" at column ${elsewhere + 1}: columns are out of order)`
              : "";
          add(
            "incorrect_label",
            `column ${i + 1} is "${label}" but the schema expects "${field}"${why}`,
            rec,
            off,
            field,
          );
        }
      });
      for (let i = rec.cells.length; i < fields.length; i++) {
        add(
          "missing_label",
          `no column for field "${fields[i].def.name}" (expected at column ${i + 1})`,
          rec,
          rec.end,
          fields[i].def.name,
        );
      }
    };

    // Runs once per row of a file that may hold a million: plain loops, no closures per row.
    const row = (rec: CsvRecord) => {
      const { cells } = rec;
      let blank = true;
      for (let i = 0; i < cells.length && blank; i++) blank = cells[i] === "";
      if (blank) {
        add("blank_row", "row is blank", rec, rec.start);
        return;
      }
      for (let i = fields.length; i < rec.cells.length; i++) {
        add(
          "extra_cell",
          `cell in column ${i + 1} has no field in the schema`,
          rec,
          rec.cellStarts[i] ?? rec.end,
        );
      }
      const typed: unknown[] | null = pk.length > 0 ? [] : null;
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i];
        const name = f.def.name;
        if (i >= cells.length) {
          add("missing_cell", `row has no cell for field "${name}" (column ${i + 1})`, rec, rec.end, name);
          continue;
        }
        const raw = cells[i];
        const off = rec.cellStarts[i] ?? rec.start;
        if (isMissing(raw)) {
          if (required[i]) add("constraint_error", `"${name}" is required`, rec, off, name);
          continue;
        }
        const r: CellCheck = f.check(raw);
        if (!r.ok) {
          const msg = r.code === "type" ? r.message : `${JSON.stringify(raw)} ${r.message}`;
          add(r.code === "type" ? "type_error" : "constraint_error", msg, rec, off, name);
          continue;
        }
        if (typed) typed[i] = r.value;
        const u = uniques[i];
        if (u) {
          const first = u.get(r.value);
          if (first !== undefined)
            add("unique_error", `${JSON.stringify(raw)} already appears in row ${first}`, rec, off, name);
          else u.set(r.value, rec.number);
        }
      }
      if (typed && pk.every((i) => typed[i] !== undefined)) {
        const key = JSON.stringify(pk.map((i) => typed[i]));
        const first = keys.get(key);
        const names = pk.map((i) => fields[i].def.name).join(", ");
        if (first !== undefined)
          add("primary_key_error", `primary key (${names}) repeats row ${first}`, rec, rec.start);
        else keys.set(key, rec.number);
      }
    };

    const problem = scanCsv(text, dialect, (rec) => {
      if (rec.number === 1 && dialect.header) header(rec);
      else row(rec);
      return !out.truncated;
    });
    if (problem) out.add(finding(problem.code, problem.message, { ...problem.position }));
    return out.result();
  };
}

export const csvTableValidator: ValidatorDef = {
  slug: "csv_table",
  name: "CSV table",
  description:
    "Checks CSV or TSV against a Table Schema: header, types, formats, constraints, unique and primary keys.",
  supportedFileTypes: ["CSV"],
  configSchema: csvTableConfigSchema,
  checkConfig: checkCsvTableConfig,
  compile,
};
