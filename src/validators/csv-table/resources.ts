// The other resources of a data package (config `resources`), read once when a step compiles,
// and the key sets that foreign keys look values up in. A resource's cells are typed by its own
// schema when it has one, else by the referencing fields' types, so that 1 and "1" compare as
// the same integer either way.
import { resolveDialect, scanCsv } from "../shared/csv.ts";
import { type CompiledField, compileField } from "./fields.ts";
import type { Value } from "./values.ts";
import { valueKey } from "./values.ts";
import type { ForeignKey, PackageResource, TableSchema } from "./schema.ts";

export interface ReadResource {
  header: string[];
  rows: string[][];
}

const cellText = (v: unknown): string =>
  v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);

/** A package resource's header and rows as text; `problem` when its CSV does not parse. */
export function readResource(r: PackageResource): ReadResource | { problem: string } {
  const header = r.dialect?.header !== false;
  let rows: string[][];
  if (typeof r.data === "string") {
    rows = [];
    const problem = scanCsv(r.data, resolveDialect(r.data, r.dialect), (rec) => {
      rows.push(rec.cells);
      return true;
    });
    if (problem) return { problem: `${problem.message} (line ${problem.position.line})` };
  } else rows = r.data.map((row) => (Array.isArray(row) ? row.map(cellText) : []));
  if (!header) return { header: r.schema?.fields.map((f) => f.name) ?? [], rows };
  return { header: rows[0] ?? [], rows: rows.slice(1) };
}

/** The key of a tuple of values; null when every value is missing (such rows are not keys). */
export function tupleKey(values: Array<Value | null>): string | null {
  let key = "";
  let any = false;
  for (const v of values) {
    if (v !== null) any = true;
    key += `${v === null ? "-" : valueKey(v)}\u0000`;
  }
  return any ? key : null;
}

export interface ForeignKeyCheck {
  /** Its index in schema.foreignKeys (the finding's rule). */
  index: number;
  names: string[];
  /** Positions of the referencing fields in this table. */
  columns: number[];
  resource: string;
  refNames: string[];
  /** The referenced keys; for "" (this table) filled from the submission before its rows. */
  keys: Set<string>;
  /** For "": the positions of the referenced fields in this table. */
  selfColumns: number[] | null;
}

function typedRows(r: PackageResource, read: ReadResource, refNames: string[], fallback: CompiledField[]) {
  const schema: TableSchema | undefined = r.schema;
  const columns = refNames.map((n) =>
    schema ? schema.fields.findIndex((f) => f.name === n) : read.header.indexOf(n),
  );
  const readers = refNames.map((n, j) => {
    const def = schema?.fields.find((f) => f.name === n);
    const c = def ? compileField(def, schema?.missingValues) : fallback[j];
    return c && "read" in c ? c : fallback[j]!;
  });
  const keys = new Set<string>();
  for (const row of read.rows) {
    const key = tupleKey(columns.map((col, j) => readers[j]!.read(row[col]).value));
    if (key !== null) keys.add(key);
  }
  return keys;
}

/** The foreign key checks of a schema whose own fields are compiled as `fields`. */
export function compileForeignKeys(
  schema: TableSchema,
  fields: CompiledField[],
  resources: PackageResource[] = [],
): ForeignKeyCheck[] {
  const names = schema.fields.map((f) => f.name);
  return (schema.foreignKeys ?? []).map((fk: ForeignKey, index) => {
    const own = typeof fk.fields === "string" ? [fk.fields] : fk.fields;
    const refNames = typeof fk.reference.fields === "string" ? [fk.reference.fields] : fk.reference.fields;
    const columns = own.map((n) => names.indexOf(n));
    const check: ForeignKeyCheck = {
      index,
      names: own,
      columns,
      resource: fk.reference.resource,
      refNames,
      keys: new Set(),
      selfColumns: null,
    };
    if (fk.reference.resource === "") check.selfColumns = refNames.map((n) => names.indexOf(n));
    else {
      const r = resources.find((x) => x.name === fk.reference.resource)!;
      const read = readResource(r);
      // Checked at save; an empty key set instead would fail every row with a misleading message.
      if ("problem" in read)
        throw new Error(`csv_table config not checked: resource "${r.name}": ${read.problem}`);
      check.keys = typedRows(
        r,
        read,
        refNames,
        columns.map((c) => fields[c]!),
      );
    }
    return check;
  });
}
