// A Table Schema field compiled once into a cell reader: missing values, the type (values.ts),
// then every constraint that applies to the type, in Frictionless's order; each failing
// constraint is its own problem, as Frictionless reports them. Which constraint and which field
// property applies to which type is checked when the schema is saved.
import { compileUserRegex } from "../shared/user-regex.ts";
import {
  compareValues,
  ExactNumber,
  type FieldOptions,
  type FieldType,
  type Parser,
  typeParser,
  type Value,
  valueKey,
} from "./values.ts";

export { FIELD_TYPES, type FieldType, type Value } from "./values.ts";

export interface Constraints {
  required?: boolean;
  unique?: boolean;
  minimum?: number | string;
  maximum?: number | string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: unknown[];
}

export interface FieldDef extends FieldOptions {
  name: string;
  missingValues?: string[];
  constraints?: Constraints;
}

type Constraint = Exclude<keyof Constraints, "unique">;
const ORDERED: readonly Constraint[] = ["required", "minimum", "maximum", "enum"];
const COLLECTION: readonly Constraint[] = ["required", "minLength", "maxLength", "enum"];
/** The constraints each type supports, in the order they are checked (unique applies to all). */
export const CONSTRAINTS: Record<FieldType, readonly Constraint[]> = {
  string: ["required", "minLength", "maxLength", "pattern", "enum"],
  number: ORDERED,
  integer: ORDERED,
  date: ORDERED,
  time: ORDERED,
  datetime: ORDERED,
  year: ORDERED,
  yearmonth: ORDERED,
  object: COLLECTION,
  array: COLLECTION,
  boolean: ["required", "enum"],
  duration: ["required", "enum"],
  geopoint: ["required", "enum"],
  geojson: ["required", "enum"],
  any: ["required", "enum"],
};

/** Field properties that belong to some types only. */
export const TYPE_PROPERTIES: Record<string, readonly FieldType[]> = {
  trueValues: ["boolean"],
  falseValues: ["boolean"],
  bareNumber: ["number", "integer"],
  groupChar: ["number"],
  decimalChar: ["number"],
};

export type CellProblem = { code: "type" | "constraint"; message: string; constraint?: string };
/** A cell read: its value (null when missing or not of the type) and its problems. */
export interface CellRead {
  value: Value | null;
  problems: CellProblem[] | null;
}
export interface CompiledField {
  /** Reads a cell (undefined: the row has no such cell). The result is reused by the next read. */
  read(raw: string | undefined): CellRead;
  parse: Parser;
}

function describeType(f: FieldDef): string {
  const format = f.format && f.format !== "default" ? ` (format ${f.format})` : "";
  return `${f.type ?? "string"}${format}`;
}

type JsonKind = "string" | "number" | "boolean" | "object" | "array";
function jsonKind(v: unknown): JsonKind | null {
  if (Array.isArray(v)) return "array";
  const t = typeof v;
  return v !== null && (t === "string" || t === "number" || t === "boolean" || t === "object") ? t : null;
}

/**
 * The JSON types a constraint value (minimum, maximum, an enum member) may have for each field
 * type: a string is read as a cell of the field would be (its lexical form, in its format); the
 * other types are those Frictionless's readers take as they are. A date is never a number
 * (20201231), a string field's enum holds strings only.
 */
export const CONSTRAINT_JSON: Record<FieldType, readonly JsonKind[]> = {
  string: ["string"],
  date: ["string"],
  time: ["string"],
  datetime: ["string"],
  duration: ["string"],
  yearmonth: ["string"],
  number: ["number", "string"],
  integer: ["number", "string"],
  year: ["number", "string"],
  boolean: ["boolean", "string"],
  object: ["object", "string"],
  geojson: ["object", "string"],
  array: ["array", "string"],
  geopoint: ["string", "array", "object"],
  any: ["string", "number", "boolean", "object", "array"],
};
const KIND_WORDS: Record<JsonKind, string> = {
  string: "strings",
  number: "numbers",
  boolean: "booleans",
  object: "objects",
  array: "arrays",
};
/** Why a constraint value is refused before reading it: a JSON type the field does not take. */
class WrongJson {
  constructor(readonly message: string) {}
}
const wordList = (words: string[]) =>
  words.length < 2 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;

/**
 * A bound or enum member from the schema as a value of the field; null when the field refuses
 * it, a WrongJson when it is of a JSON type the field does not take.
 */
function constraintValue(f: FieldDef, parse: Parser, v: unknown): Value | null | WrongJson {
  const type = f.type ?? "string";
  const kind = jsonKind(v);
  if (kind === null || !CONSTRAINT_JSON[type].includes(kind))
    return new WrongJson(
      `${type} constraint values are ${wordList(CONSTRAINT_JSON[type].map((k) => KIND_WORDS[k]))}, not ${kind === null ? "null" : KIND_WORDS[kind]}`,
    );
  if (kind === "string") return parse(v as string);
  switch (type) {
    case "integer":
      return Number.isInteger(v) ? (v as number) : null;
    case "year":
      return Number.isInteger(v) && (v as number) >= 0 ? (v as number) : null;
    case "geopoint":
      // [lon, lat] or {lon, lat}, read as a cell of that format would be.
      return (typeParser({ type, format: kind }) as Parser)(JSON.stringify(v));
    case "object":
    case "array":
    case "geojson":
      return parse(JSON.stringify(v));
    default:
      // number, boolean and any take the value as it is.
      return v as Value;
  }
}

/** Compiles a field; returns the reader or a config problem (field: the property at fault). */
export function compileField(
  f: FieldDef,
  schemaMissing: readonly string[] = [""],
): CompiledField | { field: string; message: string } {
  const type = f.type ?? "string";
  const parse = typeParser(f);
  if (typeof parse === "string") return { field: "format", message: parse };
  const c = f.constraints ?? {};
  for (const key of Object.keys(c) as Array<keyof Constraints>) {
    if (key !== "unique" && !CONSTRAINTS[type].includes(key))
      return { field: `constraints.${key}`, message: `does not apply to ${type} fields ("${f.name}")` };
  }
  for (const [key, types] of Object.entries(TYPE_PROPERTIES)) {
    if (key in f && !types.includes(type))
      return {
        field: key,
        message: `applies to ${types.join(" and ")} fields only, not ${type} ("${f.name}")`,
      };
  }
  const pattern = c.pattern !== undefined ? compileUserRegex(`^(?:${c.pattern})$`) : undefined;
  if (pattern && !pattern.ok) return { field: "constraints.pattern", message: pattern.message };
  const bounds: Record<"minimum" | "maximum", Value | null> = { minimum: null, maximum: null };
  const invalid = (v: Value | WrongJson | null) =>
    `is not a valid ${describeType(f)}${v instanceof WrongJson ? `: ${v.message}` : ""}`;
  for (const b of ["minimum", "maximum"] as const) {
    if (c[b] === undefined) continue;
    const v = constraintValue(f, parse, c[b]);
    const ordered = typeof v === "number" || typeof v === "bigint" || v instanceof ExactNumber;
    if (!ordered) return { field: `constraints.${b}`, message: invalid(v) };
    bounds[b] = v;
  }
  let allowed: Set<string> | undefined;
  if (c.enum) {
    allowed = new Set();
    for (const v of c.enum) {
      const typed = constraintValue(f, parse, v);
      if (typed === null || typed instanceof WrongJson)
        return { field: "constraints.enum", message: `${JSON.stringify(v)} ${invalid(typed)}` };
      allowed.add(valueKey(typed));
    }
  }
  const missingValues = f.missingValues ?? schemaMissing;
  const missingSet = new Set(missingValues);
  // Most schemas keep the default [""]: a comparison, where Set.has would hash every cell.
  const isMissing =
    missingSet.size === 1 ? (raw: string) => raw === missingValues[0] : (raw: string) => missingSet.has(raw);
  const size = (v: Value) => (Array.isArray(v) ? v.length : Object.keys(v).length);
  const checks: Array<[string, (v: Value | null, raw: string) => boolean]> = [];
  for (const name of CONSTRAINTS[type]) {
    if (c[name] === undefined) continue;
    if (name === "required") {
      if (c.required) checks.push(["required", (v) => v !== null]);
    } else if (name === "minLength")
      checks.push([
        name,
        (v) =>
          v === null || (typeof v === "string" ? !shorterThan(v, c.minLength!) : size(v) >= c.minLength!),
      ]);
    else if (name === "maxLength")
      checks.push([
        name,
        (v) => v === null || (typeof v === "string" ? !longerThan(v, c.maxLength!) : size(v) <= c.maxLength!),
      ]);
    else if (name === "pattern" && pattern?.ok)
      checks.push([name, (v, raw) => v === null || pattern.regex.test(raw)]);
    else if (name === "minimum")
      checks.push([name, (v) => v === null || compareValues(v, bounds.minimum!) >= 0]);
    else if (name === "maximum")
      checks.push([name, (v) => v === null || compareValues(v, bounds.maximum!) <= 0]);
    else if (name === "enum") checks.push([name, (v) => v === null || allowed!.has(valueKey(v))]);
  }
  const message = (name: string, raw: string) => {
    const cell = JSON.stringify(raw);
    switch (name) {
      case "required":
        return `"${f.name}" is required`;
      case "minLength":
        return `${cell} is shorter than ${c.minLength}`;
      case "maxLength":
        return `${cell} is longer than ${c.maxLength}`;
      case "pattern":
        return `${cell} does not match the pattern ${c.pattern}`;
      case "minimum":
        return `${cell} is less than the minimum ${String(c.minimum)}`;
      case "maximum":
        return `${cell} is greater than the maximum ${String(c.maximum)}`;
      default:
        return `${cell} is not one of ${JSON.stringify(c.enum)}`;
    }
  };
  const names = checks.map(([name]) => name);
  const tests = checks.map(([, ok]) => ok);
  // One result object per field, reused: a read is consumed before the field reads again, and a
  // valid cell of a file with millions then allocates nothing.
  const result: CellRead = { value: null, problems: null };
  return {
    parse,
    read(raw) {
      let value: Value | null = null;
      result.problems = null;
      if (raw !== undefined && !isMissing(raw)) {
        value = parse(raw);
        if (value === null) {
          result.value = null;
          result.problems = [
            { code: "type", message: `${JSON.stringify(raw)} is not a valid ${describeType(f)}` },
          ];
          return result;
        }
      }
      result.value = value;
      for (let i = 0; i < tests.length; i++) {
        if (tests[i]!(value, raw ?? "")) continue;
        result.problems ??= [];
        result.problems.push({
          code: "constraint",
          constraint: names[i],
          message: message(names[i]!, raw ?? ""),
        });
      }
      return result;
    },
  };
}

// Lengths count code points. A string of n UTF-16 units holds n/2 to n of them, so counting
// (which allocates, and was a quarter of a 10 MiB check) is needed only in between.
const codePoints = (s: string) => Array.from(s).length;
const shorterThan = (s: string, min: number) => s.length < min || (s.length < 2 * min && codePoints(s) < min);
const longerThan = (s: string, max: number) => s.length > max && (s.length > 2 * max || codePoints(s) > max);
