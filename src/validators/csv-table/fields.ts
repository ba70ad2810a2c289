// Table Schema field types and constraints (a documented subset of Frictionless v1).
// A field compiles once into a cell checker; parsed values are numbers, strings or booleans so
// minimum/maximum, enum and unique compare typed values ("01" and "1" are the same integer).
import { compileUserRegex } from "../shared/user-regex.ts";
import { compilePattern, type Kind, parseTemporal } from "./datetime.ts";

export const FIELD_TYPES = [
  "string",
  "integer",
  "number",
  "boolean",
  "date",
  "datetime",
  "time",
  "year",
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export const ORDERED_TYPES = new Set<FieldType>(["integer", "number", "date", "datetime", "time", "year"]);
export const STRING_FORMATS = ["default", "email", "uri", "uuid", "binary"];

export interface FieldDef {
  name: string;
  type?: FieldType;
  format?: string;
  trueValues?: string[];
  falseValues?: string[];
  constraints?: {
    required?: boolean;
    unique?: boolean;
    minimum?: number | string;
    maximum?: number | string;
    minLength?: number;
    maxLength?: number;
    pattern?: string;
    enum?: Array<string | number | boolean>;
  };
}

export type Value = string | number | boolean;
export type CellCheck =
  | { ok: true; value: Value }
  | { ok: false; code: "type" | "constraint"; message: string };

const STRING_RE: Record<string, RegExp> = {
  email: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  binary: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
};
const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const SPECIAL_NUMBERS: Record<string, number> = {
  NaN: Number.NaN,
  INF: Infinity,
  "+INF": Infinity,
  "-INF": -Infinity,
};

/** Builds the type parser of a field: raw text → typed value, or null when it does not parse. */
export function typeParser(f: FieldDef): ((raw: string) => Value | null) | string {
  const type = f.type ?? "string";
  const format = f.format ?? "default";
  switch (type) {
    case "string":
      if (!STRING_FORMATS.includes(format)) return `format "${format}" is not supported for strings`;
      if (format === "uri")
        return (raw) => (/^[a-z][a-z0-9+.-]*:/i.test(raw) && URL.canParse(raw) ? raw : null);
      if (format !== "default") return (raw) => (STRING_RE[format].test(raw) ? raw : null);
      return (raw) => raw;
    case "integer":
      return (raw) => (INTEGER.test(raw) ? Number(raw) : null);
    case "number":
      return (raw) => (NUMBER.test(raw) ? Number(raw) : raw in SPECIAL_NUMBERS ? SPECIAL_NUMBERS[raw] : null);
    case "year":
      return (raw) => (/^\d{4}$/.test(raw) ? Number(raw) : null);
    case "boolean": {
      const t = new Set(f.trueValues ?? ["true", "True", "TRUE", "1"]);
      const fl = new Set(f.falseValues ?? ["false", "False", "FALSE", "0"]);
      return (raw) => (t.has(raw) ? true : fl.has(raw) ? false : null);
    }
    default: {
      const kind = type as Kind;
      const custom = format !== "default" && format !== "any" ? compilePattern(format) : undefined;
      if (custom === null)
        return `format "${format}" uses an unsupported directive (use %Y %y %m %d %H %I %M %S %f %p %z %b %B)`;
      return (raw) => parseTemporal(kind, format, raw, custom);
    }
  }
}

function describeType(f: FieldDef): string {
  const format = f.format && f.format !== "default" ? ` (format ${f.format})` : "";
  return `${f.type ?? "string"}${format}`;
}

/** A typed bound or enum member from the schema: numbers as is, strings parsed like cells. */
export function schemaValue(parse: (raw: string) => Value | null, v: unknown): Value | null {
  if (typeof v === "string") return parse(v);
  if (typeof v === "number" || typeof v === "boolean") return v;
  return null;
}

/** Compiles a field's type and constraints; returns the checker or a config problem. */
export function compileField(f: FieldDef): ((raw: string) => CellCheck) | { field: string; message: string } {
  const parse = typeParser(f);
  if (typeof parse === "string") return { field: "format", message: parse };
  const c = f.constraints ?? {};
  const pattern = c.pattern !== undefined ? compileUserRegex(`^(?:${c.pattern})$`) : undefined;
  if (pattern && !pattern.ok) return { field: "constraints.pattern", message: pattern.message };
  const bounds: Record<"minimum" | "maximum", Value | null> = { minimum: null, maximum: null };
  for (const b of ["minimum", "maximum"] as const) {
    if (c[b] === undefined) continue;
    if (!ORDERED_TYPES.has(f.type ?? "string"))
      return { field: `constraints.${b}`, message: `does not apply to ${f.type ?? "string"} fields` };
    bounds[b] = schemaValue(parse, c[b]);
    if (bounds[b] === null)
      return { field: `constraints.${b}`, message: `is not a valid ${describeType(f)}` };
  }
  let allowed: Set<Value> | undefined;
  if (c.enum) {
    allowed = new Set();
    for (const v of c.enum) {
      const typed = schemaValue(parse, v);
      if (typed === null)
        return {
          field: "constraints.enum",
          message: `${JSON.stringify(v)} is not a valid ${describeType(f)}`,
        };
      allowed.add(typed);
    }
  }
  return (raw) => {
    const value = parse(raw);
    if (value === null)
      return { ok: false, code: "type", message: `${JSON.stringify(raw)} is not a valid ${describeType(f)}` };
    if (c.minLength !== undefined && shorterThan(raw, c.minLength))
      return fail(`is shorter than ${c.minLength} characters`);
    if (c.maxLength !== undefined && longerThan(raw, c.maxLength))
      return fail(`is longer than ${c.maxLength} characters`);
    if (pattern?.ok && !pattern.regex.test(raw)) return fail(`does not match the pattern ${c.pattern}`);
    if (bounds.minimum !== null && value < bounds.minimum)
      return fail(`is less than the minimum ${String(c.minimum)}`);
    if (bounds.maximum !== null && value > bounds.maximum)
      return fail(`is greater than the maximum ${String(c.maximum)}`);
    if (allowed && !allowed.has(value)) return fail(`is not one of ${JSON.stringify(c.enum)}`);
    return { ok: true, value };
  };
}

// Lengths count code points. A string of n UTF-16 units holds n/2 to n of them, so counting
// (which allocates, and was a quarter of a 10 MiB check) is needed only in between.
const codePoints = (s: string) => Array.from(s).length;
const shorterThan = (s: string, min: number) => s.length < min || (s.length < 2 * min && codePoints(s) < min);
const longerThan = (s: string, max: number) => s.length > max && (s.length > 2 * max || codePoints(s) > max);

function fail(message: string): CellCheck {
  return { ok: false, code: "constraint", message };
}
