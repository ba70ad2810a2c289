// `csv_table`: checks CSV/TSV against a Table Schema with Frictionless's error codes, in its
// order: the header (extra, missing, blank, duplicate, incorrect labels), then per row the cells
// in field order (type or constraint errors), extra cells, missing cells — all replaced by one
// blank-row error when every field is empty — then unique, primary and foreign keys. Columns bind
// to fields by position, as in Frictionless. Paths are "/rows/<n>/<field>" where n is the 1-based
// record number in the file (the header is row 1, like a spreadsheet); line/column point at the cell.
import { type CsvDialect, type CsvRecord, resolveDialect, scanCsv } from "../shared/csv.ts";
import { FindingCollector, finding, pointerJoin } from "../shared/findings.ts";
import { LineIndex } from "../shared/position.ts";
import type { Finding, ValidationContext, ValidationInput, ValidatorDef } from "../types.ts";
import { type CompiledField, compileField } from "./fields.ts";
import { compileForeignKeys, type ForeignKeyCheck, tupleKey } from "./resources.ts";
import { type CsvTableConfig, checkCsvTableConfig, csvTableConfigSchema, primaryKeyOf } from "./schema.ts";
import { type Value, valueKey } from "./values.ts";

function compile(config: unknown) {
  const cfg = config as CsvTableConfig;
  const defs = cfg.schema.fields;
  const fields = defs.map((f) => {
    const c = compileField(f, cfg.schema.missingValues);
    if ("field" in c) throw new Error(`csv_table config not checked: ${f.name}: ${c.message}`);
    return c;
  });
  const pk = primaryKeyOf(cfg.schema).map((name) => defs.findIndex((f) => f.name === name));
  const uniques = defs.flatMap((f, i) => (f.constraints?.unique ? [i] : []));
  const foreign = compileForeignKeys(cfg.schema, fields, cfg.resources);
  const typedNeeded = pk.length > 0 || uniques.length > 0 || foreign.length > 0;

  return (input: ValidationInput, ctx: ValidationContext) => {
    const out = new FindingCollector(ctx.maxFindings);
    const { text } = input;
    if (text.replace(/^\ufeff/, "").trim() === "") {
      out.add(finding("csv.source_error", "the source is empty: no header and no rows"));
      return out.result();
    }
    const dialect = resolveDialect(text, cfg.dialect);
    const lines = new LineIndex(text);
    const seenUnique = uniques.map(() => new Map<string, number>());
    const seenKeys = new Map<string, number>();
    const fks = foreign.map((fk) => ({
      ...fk,
      keys: fk.selfColumns ? selfKeys(text, dialect, fk, fields) : fk.keys,
    }));
    const at = (offset: number) => lines.position(offset);
    const rowPath = (n: number, field?: string) =>
      field === undefined ? `/rows/${n}` : pointerJoin(`/rows/${n}`, field);
    const make = (
      code: string,
      message: string,
      rec: CsvRecord,
      offset: number,
      field?: string,
      rule?: string,
    ) =>
      finding(`csv.${code}`, message, {
        path: rowPath(rec.number, field),
        rule: rule ?? field ?? null,
        ...at(offset),
      });
    const add = (...args: Parameters<typeof make>) => out.add(make(...args));

    const header = (rec: CsvRecord) => {
      const labels = rec.cells;
      const cellAt = (i: number) => rec.cellStarts[i] ?? rec.end;
      for (let i = defs.length; i < labels.length; i++)
        add("extra_label", `column ${i + 1} "${labels[i]}" is not in the schema`, rec, cellAt(i));
      for (let i = labels.length; i < defs.length; i++)
        add(
          "missing_label",
          `no column for field "${defs[i]!.name}" (expected at column ${i + 1})`,
          rec,
          rec.end,
          defs[i]!.name,
        );
      for (let i = 0; i < Math.min(defs.length, labels.length); i++) {
        const label = labels[i]!;
        const name = defs[i]!.name;
        if (label === "") {
          add(
            "blank_label",
            `column ${i + 1} has no label; the schema expects "${name}"`,
            rec,
            cellAt(i),
            name,
          );
          continue;
        }
        const earlier = labels.slice(0, i).flatMap((l, j) => (l === label ? [j + 1] : []));
        if (earlier.length > 0) {
          add(
            "duplicate_label",
            `label "${label}" repeats column ${earlier.join(", ")}`,
            rec,
            cellAt(i),
            name,
          );
          continue;
        }
        // Frictionless compares the label with line breaks as spaces, trimmed by Python's rule.
        if (pythonStrip(label.replace(/\n/g, " ")) === name) continue;
        const elsewhere = defs.findIndex((f) => f.name === label);
        const why =
          elsewhere >= 0
            ? ` (the schema puts "${label}" at column ${elsewhere + 1}: columns are out of order)`
            : label.charCodeAt(0) === 0xfeff
              ? " (it begins with U+FEFF: the file has a second byte order mark)"
              : label.normalize("NFC") === name.normalize("NFC")
                ? " (the same letters in another Unicode normalization form: labels are compared character by character)"
                : "";
        add(
          "incorrect_label",
          `column ${i + 1} is "${label}" but the schema expects "${name}"${why}`,
          rec,
          cellAt(i),
          name,
        );
      }
    };

    // Runs once per row of a file that may hold a million: plain loops, no closure per row, and
    // nothing allocated for a valid row beyond its typed values (when keys need them).
    const row = (rec: CsvRecord) => {
      const { cells } = rec;
      let found: Finding[] | null = null;
      const typed: Array<Value | null> | null = typedNeeded ? [] : null;
      let blank = 0;
      for (let i = 0; i < fields.length; i++) {
        const raw = i < cells.length ? cells[i] : undefined;
        const r = fields[i]!.read(raw);
        if (typed) typed[i] = r.value;
        if (r.problems === null) {
          if (r.value === null) blank++;
          continue;
        }
        if (r.value === null && r.problems[0]!.code !== "type") blank++;
        const off = raw === undefined ? rec.end : (rec.cellStarts[i] ?? rec.start);
        found ??= [];
        for (const p of r.problems)
          found.push(
            make(p.code === "type" ? "type_error" : "constraint_error", p.message, rec, off, defs[i]!.name),
          );
      }
      if (cells.length !== fields.length) found ??= [];
      for (let i = fields.length; i < cells.length; i++)
        found!.push(
          make(
            "extra_cell",
            `cell in column ${i + 1} has no field in the schema`,
            rec,
            rec.cellStarts[i] ?? rec.end,
          ),
        );
      for (let i = cells.length; i < fields.length; i++)
        found!.push(
          make(
            "missing_cell",
            `row has no cell for field "${defs[i]!.name}" (column ${i + 1})`,
            rec,
            rec.end,
            defs[i]!.name,
          ),
        );
      if (blank === fields.length) found = [make("blank_row", "row is blank", rec, rec.start)];
      if (typed) found = keyChecks(rec, typed, found);
      if (found) for (const f of found) if (!out.add(f)) return;
    };

    /** Unique, primary and foreign keys of a row: its findings appended to `found`. */
    const keyChecks = (rec: CsvRecord, typed: Array<Value | null>, found: Finding[] | null) => {
      const push = (f: Finding) => {
        found ??= [];
        found.push(f);
      };
      uniques.forEach((i, k) => {
        const v = typed[i];
        if (v === null || v === undefined) return;
        const key = valueKey(v);
        const before = seenUnique[k]!.get(key);
        seenUnique[k]!.set(key, rec.number);
        const off = rec.cellStarts[i] ?? rec.end;
        if (before !== undefined)
          push(
            make(
              "unique_error",
              `${JSON.stringify(rec.cells[i])} already appears in row ${before}`,
              rec,
              off,
              defs[i]!.name,
            ),
          );
      });
      if (pk.length > 0) {
        const names = pk.map((i) => defs[i]!.name).join(", ");
        const key = tupleKey(pk.map((i) => typed[i] ?? null));
        if (key === null)
          push(
            make(
              "primary_key_error",
              `primary key (${names}) is empty`,
              rec,
              rec.start,
              undefined,
              "primaryKey",
            ),
          );
        else {
          const before = seenKeys.get(key);
          seenKeys.set(key, rec.number);
          if (before !== undefined)
            push(
              make(
                "primary_key_error",
                `primary key (${names}) repeats row ${before}`,
                rec,
                rec.start,
                undefined,
                "primaryKey",
              ),
            );
        }
      }
      for (const fk of fks) {
        const values = fk.columns.map((i) => typed[i] ?? null);
        const key = tupleKey(values);
        if (key === null || fk.keys.has(key)) continue;
        const shown = fk.columns.map((i) => rec.cells[i] ?? "").join(", ");
        const where = fk.resource === "" ? "this table" : `resource "${fk.resource}"`;
        push(
          make(
            "foreign_key_error",
            `(${fk.names.join(", ")}) = (${shown}) is not a value of (${fk.refNames.join(", ")}) in ${where}`,
            rec,
            rec.start,
            undefined,
            `foreignKeys[${fk.index}]`,
          ),
        );
      }
      return found;
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

/** The keys of a foreign key into the submitted table itself: read in a first pass. */
function selfKeys(
  text: string,
  dialect: CsvDialect,
  fk: ForeignKeyCheck,
  fields: CompiledField[],
): Set<string> {
  const keys = new Set<string>();
  const columns = fk.selfColumns!;
  scanCsv(text, dialect, (rec) => {
    if (rec.number === 1 && dialect.header) return true;
    const key = tupleKey(columns.map((c) => fields[c]!.read(rec.cells[c]).value));
    if (key !== null) keys.add(key);
    return true;
  });
  return keys;
}

export const csvTableValidator: ValidatorDef = {
  slug: "csv_table",
  name: "CSV table",
  description:
    "Checks CSV or TSV against a Table Schema (v1): header, types, formats, constraints, unique, primary and foreign keys.",
  supportedFileTypes: ["CSV"],
  configSchema: csvTableConfigSchema,
  checkConfig: checkCsvTableConfig,
  compile,
};

/** Python's whitespace (str.isspace): JavaScript's \s without U+FEFF, with U+001C–U+001F and U+0085. */
const PY_SPACE = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "g");

/**
 * str.strip() as Python reads it (Frictionless is Python). JavaScript's trim() also takes U+FEFF
 * off, and a label behind a second byte order mark is not the schema's name there.
 */
function pythonStrip(s: string): string {
  return s.replace(PY_STRIP, "");
}
