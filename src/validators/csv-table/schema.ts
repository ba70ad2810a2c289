// Config of `csv_table`: a Table Schema (v1: every type and format, the number options, missing
// values per schema and per field, primary and foreign keys), the CSV dialect, and the other
// resources of a data package that foreign keys may reference (given inline: nothing is fetched).
// Shape first (the published configSchema), then meaning: names, keys, formats, patterns, bounds,
// and which constraint or property applies to which type — a 400 at save time naming the field.
import { COMMON_CONFIG_PROPERTIES } from "../shared/common.ts";
import { issue, isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import type { ConfigIssue } from "../types.ts";
import {
  CONSTRAINT_JSON,
  CONSTRAINTS,
  compileField,
  type FieldDef,
  type FieldType,
  FIELD_TYPES,
  TYPE_PROPERTIES,
} from "./fields.ts";
import { type ReadResource, readResource } from "./resources.ts";

const scalar = { type: ["string", "number", "boolean"] };
const names = { type: ["string", "array"], items: { type: "string" } };

const fieldSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1 },
    type: { enum: [...FIELD_TYPES], default: "string" },
    format: { type: "string" },
    title: { type: "string" },
    description: { type: "string" },
    example: {},
    rdfType: { type: "string" },
    trueValues: { type: "array", items: { type: "string" } },
    falseValues: { type: "array", items: { type: "string" } },
    bareNumber: { type: "boolean", default: true },
    groupChar: { type: "string", minLength: 1, maxLength: 1 },
    decimalChar: { type: "string", minLength: 1, maxLength: 1, default: "." },
    missingValues: { type: "array", items: { type: "string" } },
    constraints: {
      type: "object",
      properties: {
        required: { type: "boolean" },
        unique: { type: "boolean" },
        minimum: scalar,
        maximum: scalar,
        minLength: { type: "integer", minimum: 0 },
        maxLength: { type: "integer", minimum: 0 },
        pattern: { type: "string" },
        enum: { type: "array", minItems: 1 },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

/** A field of type `t` (a field without `type` is a string). */
const ofType = (t: FieldType) =>
  t === "string"
    ? { anyOf: [{ not: { required: ["type"] } }, { required: ["type"], properties: { type: { const: t } } }] }
    : { required: ["type"], properties: { type: { const: t } } };

/**
 * What a field of each type takes, as JSON Schema: its constraints (CONSTRAINTS), the properties
 * of some types only (TYPE_PROPERTIES), the JSON types of its bounds and enum members
 * (CONSTRAINT_JSON). compileField words each of these for people at save; published with the
 * shape so that a field this schema accepts is one the save accepts, as far as JSON Schema can say
 * it (formats, patterns and values in their lexical form are the save's). Each rule is "not of
 * this type, or as this type allows": if/then without a `then` key (an object with one is a
 * thenable to `await`).
 */
const fieldRules = FIELD_TYPES.map((t) => {
  const kinds = CONSTRAINT_JSON[t].map((k) =>
    k === "number" && t !== "number" && t !== "any" ? "integer" : k,
  );
  const value = { type: kinds, ...(t === "year" ? { minimum: 0 } : {}) };
  const foreign = Object.keys(TYPE_PROPERTIES).filter((p) => !TYPE_PROPERTIES[p]!.includes(t));
  return {
    anyOf: [
      { not: ofType(t) },
      {
        properties: {
          constraints: {
            propertyNames: { enum: ["unique", ...CONSTRAINTS[t]] },
            properties: { minimum: value, maximum: value, enum: { items: value } },
          },
        },
        not: { anyOf: foreign.map((p) => ({ required: [p] })) },
      },
    ],
  };
});

const dialectSchema = {
  type: "object",
  properties: {
    delimiter: {
      type: "string",
      minLength: 1,
      maxLength: 1,
      description: 'Default ",", or tab when the first line has tabs and no commas.',
    },
    quoteChar: { type: "string", minLength: 1, maxLength: 1, default: '"' },
    header: { type: "boolean", default: true },
  },
  additionalProperties: false,
};

/** A Table Schema whose fields are `field`; the config around it. */
const tableSchemaOf = (field: object) => ({
  type: "object",
  required: ["fields"],
  properties: {
    fields: { type: "array", minItems: 1, maxItems: 10_000, items: field },
    primaryKey: names,
    foreignKeys: {
      type: "array",
      items: {
        type: "object",
        required: ["fields", "reference"],
        properties: {
          fields: names,
          reference: {
            type: "object",
            required: ["resource", "fields"],
            properties: { resource: { type: "string" }, fields: names },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
    },
    missingValues: { type: "array", items: { type: "string" }, default: [""] },
    name: { type: "string" },
    title: { type: "string" },
    description: { type: "string" },
    $schema: { type: "string" },
  },
  additionalProperties: false,
});

const configSchemaOf = (field: object) => {
  const tableSchema = tableSchemaOf(field);
  return {
    type: "object",
    required: ["schema"],
    properties: {
      schema: tableSchema,
      dialect: dialectSchema,
      resources: {
        type: "array",
        maxItems: 100,
        description:
          'The other resources of the data package, for foreign keys: each {name, data, schema?, dialect?}, data being CSV text or rows (the first one the header). Referenced by foreignKeys[].reference.resource; "" is the submitted table itself.',
        items: {
          type: "object",
          required: ["name", "data"],
          properties: {
            name: { type: "string", minLength: 1 },
            data: { anyOf: [{ type: "string" }, { type: "array", items: { type: "array", items: {} } }] },
            schema: tableSchema,
            dialect: dialectSchema,
          },
          additionalProperties: false,
        },
      },
      ...COMMON_CONFIG_PROPERTIES,
    },
    additionalProperties: false,
  };
};

/** The fields and their types: what the save checks first (the rules per type follow, worded). */
const shapeSchema = configSchemaOf(fieldSchema);
/** The published config schema (GET /api/v1/validators/): the shape and the rules per type. */
export const csvTableConfigSchema = configSchemaOf({ ...fieldSchema, allOf: fieldRules });

export interface ForeignKey {
  fields: string | string[];
  reference: { resource: string; fields: string | string[] };
}

export interface TableSchema {
  fields: FieldDef[];
  primaryKey?: string | string[];
  foreignKeys?: ForeignKey[];
  missingValues?: string[];
}

export interface Dialect {
  delimiter?: string;
  quoteChar?: string;
  header?: boolean;
}

export interface PackageResource {
  name: string;
  data: string | unknown[][];
  schema?: TableSchema;
  dialect?: Dialect;
}

export interface CsvTableConfig {
  schema: TableSchema;
  dialect?: Dialect;
  resources?: PackageResource[];
}

export const listOf = (v: string | string[] | undefined): string[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v];
export const primaryKeyOf = (schema: TableSchema): string[] => listOf(schema.primaryKey);

function schemaIssues(schema: TableSchema, at: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  schema.fields.forEach((f, i) => {
    if (seen.has(f.name))
      issues.push(issue(`${at}.fields[${i}].name`, "duplicate", `"${f.name}" is used twice`));
    seen.add(f.name);
    const c = compileField(f, schema.missingValues);
    if ("field" in c) issues.push(issue(`${at}.fields[${i}].${c.field}`, "invalid", c.message));
  });
  primaryKeyOf(schema).forEach((k, i) => {
    if (!seen.has(k)) issues.push(issue(`${at}.primaryKey[${i}]`, "unknown_field", `"${k}" is not a field`));
  });
  return issues;
}

function dialectIssues(d: Dialect, at: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (d.delimiter !== undefined && /[\r\n]/.test(d.delimiter))
    issues.push(issue(`${at}.delimiter`, "invalid", "cannot be a line break"));
  if (d.quoteChar !== undefined && d.quoteChar === (d.delimiter ?? ","))
    issues.push(issue(`${at}.quoteChar`, "invalid", "must differ from the delimiter"));
  return issues;
}

/** The field names of a package resource: its schema's, else its header's. */
function resourceFields(r: PackageResource, read: ReadResource): string[] {
  return r.schema ? r.schema.fields.map((f) => f.name) : read.header;
}

/** `reads`: each resource's data as read at save, in the order of `resources`. */
function foreignKeyIssues(cfg: CsvTableConfig, reads: ReadResource[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const own = cfg.schema.fields.map((f) => f.name);
  const resources = cfg.resources ?? [];
  (cfg.schema.foreignKeys ?? []).forEach((fk, i) => {
    const at = `schema.foreignKeys[${i}]`;
    const fields = listOf(fk.fields);
    const refs = listOf(fk.reference.fields);
    if (fields.length === 0) issues.push(issue(`${at}.fields`, "invalid", "must name at least one field"));
    fields.forEach((f, j) => {
      if (!own.includes(f))
        issues.push(issue(`${at}.fields[${j}]`, "unknown_field", `"${f}" is not a field`));
    });
    if (refs.length !== fields.length)
      issues.push(
        issue(`${at}.reference.fields`, "invalid", `must name as many fields as fields (${fields.length})`),
      );
    let target: string[];
    if (fk.reference.resource === "") target = own;
    else {
      const k = resources.findIndex((r) => r.name === fk.reference.resource);
      if (k < 0) {
        issues.push(
          issue(
            `${at}.reference.resource`,
            "unknown_resource",
            `"${fk.reference.resource}" is not in resources (give the referenced table there; "" is this table)`,
          ),
        );
        return;
      }
      target = resourceFields(resources[k]!, reads[k]!);
    }
    refs.forEach((f, j) => {
      if (!target.includes(f))
        issues.push(
          issue(
            `${at}.reference.fields[${j}]`,
            "unknown_field",
            `"${f}" is not a field of ${fk.reference.resource === "" ? "this table" : `"${fk.reference.resource}"`}`,
          ),
        );
    });
  });
  return issues;
}

export function checkCsvTableConfig(config: unknown): ConfigIssue[] {
  if (!isPlainObject(config)) return [issue("", "invalid", "must be an object")];
  const shape = shapeIssues(shapeSchema, config);
  if (shape.length > 0) return shape;
  const cfg = config as unknown as CsvTableConfig;
  const issues = [...schemaIssues(cfg.schema, "schema"), ...dialectIssues(cfg.dialect ?? {}, "dialect")];
  const seen = new Set<string>();
  const reads: ReadResource[] = [];
  (cfg.resources ?? []).forEach((r, k) => {
    if (seen.has(r.name))
      issues.push(issue(`resources[${k}].name`, "duplicate", `"${r.name}" is used twice`));
    seen.add(r.name);
    if (r.schema) issues.push(...schemaIssues(r.schema, `resources[${k}].schema`));
    const dialect = dialectIssues(r.dialect ?? {}, `resources[${k}].dialect`);
    issues.push(...dialect);
    // Read whether or not a schema names the fields, and whether or not a key refers to it yet:
    // data that does not parse would give a foreign key no values, and every row would fail it.
    if (dialect.length > 0) return;
    const read = readResource(r);
    if ("problem" in read) issues.push(issue(`resources[${k}].data`, "invalid", read.problem));
    else reads[k] = read;
  });
  if (issues.length > 0) return issues;
  return foreignKeyIssues(cfg, reads);
}
