// Config of `csv_table`: a Table Schema subset plus the CSV dialect. Shape first (published
// configSchema), then meaning: unique names, primaryKey fields exist, formats/patterns/bounds valid.
import { COMMON_CONFIG_PROPERTIES } from "../shared/common.ts";
import { issue, isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import type { ConfigIssue } from "../types.ts";
import { compileField, FIELD_TYPES, type FieldDef } from "./fields.ts";

const scalar = { type: ["string", "number", "boolean"] };

export const csvTableConfigSchema = {
  type: "object",
  required: ["schema"],
  properties: {
    schema: {
      type: "object",
      required: ["fields"],
      properties: {
        fields: {
          type: "array",
          minItems: 1,
          maxItems: 10_000,
          items: {
            type: "object",
            required: ["name"],
            properties: {
              name: { type: "string", minLength: 1 },
              type: { enum: [...FIELD_TYPES], default: "string" },
              format: { type: "string" },
              title: { type: "string" },
              description: { type: "string" },
              example: {},
              trueValues: { type: "array", items: { type: "string" } },
              falseValues: { type: "array", items: { type: "string" } },
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
                  enum: { type: "array", minItems: 1, items: scalar },
                },
                additionalProperties: false,
              },
            },
            additionalProperties: false,
          },
        },
        primaryKey: { type: ["string", "array"], items: { type: "string" } },
        missingValues: { type: "array", items: { type: "string" }, default: [""] },
        name: { type: "string" },
        title: { type: "string" },
        description: { type: "string" },
        $schema: { type: "string" },
      },
      additionalProperties: false,
    },
    dialect: {
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
    },
    ...COMMON_CONFIG_PROPERTIES,
  },
  additionalProperties: false,
};

export interface TableSchema {
  fields: FieldDef[];
  primaryKey?: string | string[];
  missingValues?: string[];
}

export interface CsvTableConfig {
  schema: TableSchema;
  dialect?: { delimiter?: string; quoteChar?: string; header?: boolean };
}

export function primaryKeyOf(schema: TableSchema): string[] {
  const pk = schema.primaryKey;
  return pk === undefined ? [] : Array.isArray(pk) ? pk : [pk];
}

export function checkCsvTableConfig(config: unknown): ConfigIssue[] {
  if (!isPlainObject(config)) return [issue("", "invalid", "must be an object")];
  const shape = shapeIssues(csvTableConfigSchema, config);
  if (shape.length > 0) return shape;
  const cfg = config as unknown as CsvTableConfig;
  const issues: ConfigIssue[] = [];
  const names = new Set<string>();
  cfg.schema.fields.forEach((f, i) => {
    if (names.has(f.name))
      issues.push(issue(`schema.fields[${i}].name`, "duplicate", `"${f.name}" is used twice`));
    names.add(f.name);
    const c = compileField(f);
    if (typeof c !== "function") issues.push(issue(`schema.fields[${i}].${c.field}`, "invalid", c.message));
  });
  primaryKeyOf(cfg.schema).forEach((k, i) => {
    if (!names.has(k))
      issues.push(issue(`schema.primaryKey[${i}]`, "unknown_field", `"${k}" is not a field`));
  });
  const d = cfg.dialect ?? {};
  if (d.delimiter !== undefined && /[\r\n]/.test(d.delimiter))
    issues.push(issue("dialect.delimiter", "invalid", "cannot be a line break"));
  if (d.quoteChar !== undefined && d.quoteChar === (d.delimiter ?? ",")) {
    issues.push(issue("dialect.quoteChar", "invalid", "must differ from the delimiter"));
  }
  return issues;
}
