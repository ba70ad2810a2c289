// Large `enum`s (code lists: 20,000 country, unit or product codes) checked by a Set lookup.
// typebox compiles an enum into one expression `((v === a || v === b) || c) …`, one level of
// parentheses per value: linear time per value, and a parser recursion that runs out of stack near
// 4,000 values in a worker (engine.ts). The compiled check gets the enum as a `~refine` instead (a
// typebox keyword whose value holds functions, so no JSON schema can spell it); the schema that
// explains failures (errors.ts) keeps the `enum`, so findings read as before.
import { ENUM_SET_ERROR, quote, type TbError } from "./errors.ts";
import { ARRAY, MAP, SINGLE } from "./walk.ts";

/** Enums with at least this many values are looked up; shorter ones compile as typebox does. */
export const ENUM_SET_MIN = 32;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A JSON value written the same way whatever its objects' key order: two values are equal as
 * JSON Schema's `enum` compares them exactly when these are equal (numbers by value: `1.0` and
 * `1` are both `1`, `-0` is `0`).
 */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isObj(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}

/**
 * A check with the enum's meaning: `===` for primitives, equality by value for objects and
 * arrays, each one lookup: an enum of 20,000 objects compared with every value of a 100,000-item
 * array one by one took a minute (2026-11-29).
 */
function enumCheck(values: unknown[]) {
  const primitives = new Set<unknown>();
  const composites = new Set<string>();
  for (const v of values) {
    if (isObj(v) || Array.isArray(v)) composites.add(canonical(v));
    else primitives.add(v);
  }
  return (value: unknown) =>
    primitives.has(value) ||
    (composites.size > 0 && (isObj(value) || Array.isArray(value)) && composites.has(canonical(value)));
}

/** Keywords that may hold the explaining schema's lookup: applicators whose failure is theirs alone. */
const HOLDERS = ["anyOf", "oneOf"] as const;

function refined(s: Obj, explained: boolean): Obj {
  const { enum: values, ...rest } = s;
  const check = enumCheck(values as unknown[]);
  if (!explained) return { ...rest, "~refine": [{ check, error: () => "must be one of the enum's values" }] };
  // typebox runs a schema object's `~refine` only once its other keywords pass, while the enum's
  // finding stands beside theirs: the lookup is the one branch of an `anyOf` (or `oneOf`) of its
  // own, whose failure neither hides the other keywords' findings nor drops what they evaluated
  // (an `allOf` member would: unevaluatedProperties then named properties a $ref had declared).
  // Its error carries the finding's message; `enumErrors` reads it back. A schema object with
  // both keywords keeps its enum, checked value by value.
  const holder = HOLDERS.find((k) => !(k in rest));
  if (!holder) return s;
  let message: string | undefined;
  const error = () => (message ??= `${ENUM_SET_ERROR}${holder}\u0000must be one of ${quote(values)}`);
  return { ...rest, [holder]: [{ "~refine": [{ check, error }] }] };
}

/**
 * `s` with every large enum (in it and its subschemas) a lookup; `s` itself when there is none.
 * `explained`: for the schema whose errors become findings (index.ts): typebox's interpreter
 * compares a value with every enum value in turn, so explaining a failed document of 100,000
 * values under an enum of 100,000 ran past the step's time limit (2026-11-29). Its errors are
 * `~refine` errors there, which `enumErrors` turns back into the enum's.
 */
export function withEnumSets(s: unknown, explained = false): unknown {
  if (!isObj(s)) return s;
  let out = s;
  const set = (key: string, value: unknown) => {
    if (out === s) out = { ...s };
    out[key] = value;
  };
  const inner = (v: unknown) => withEnumSets(v, explained);
  for (const [key, value] of Object.entries(s)) {
    if (ARRAY.has(key) && Array.isArray(value)) {
      const next = value.map(inner);
      if (next.some((v, i) => v !== value[i])) set(key, next);
    } else if (SINGLE.has(key)) {
      const next = inner(value);
      if (next !== value) set(key, next);
    } else if (MAP.has(key) && isObj(value)) {
      const entries = Object.entries(value).map(([k, v]) => [k, inner(v)] as const);
      if (entries.some(([k, v]) => v !== value[k])) set(key, Object.fromEntries(entries));
    }
  }
  return Array.isArray(out.enum) && out.enum.length >= ENUM_SET_MIN ? refined(out, explained) : out;
}

/**
 * The explaining schema's errors with each looked-up enum's as typebox reports an `enum`'s: the
 * lookup's error at `…/anyOf/0` becomes the enum's at `…`, and the error of the `anyOf` that
 * holds it (at `…`, on the same value) is dropped.
 */
export function enumErrors(errors: TbError[]): TbError[] {
  const holders = new Set<string>();
  const mapped = errors.map((e) => {
    const m = e.params.message;
    if (e.keyword !== "~refine" || typeof m !== "string" || !m.startsWith(ENUM_SET_ERROR)) return e;
    const rest = m.slice(ENUM_SET_ERROR.length);
    const holder = rest.slice(0, rest.indexOf("\u0000"));
    const schemaPath = e.schemaPath.slice(0, e.schemaPath.length - `/${holder}/0`.length);
    holders.add(`${holder}\u0000${schemaPath}\u0000${e.instancePath}`);
    return { ...e, keyword: "enum", schemaPath, message: rest.slice(holder.length + 1), params: {} };
  });
  if (holders.size === 0) return errors;
  return mapped.filter((e) => !holders.has(`${e.keyword}\u0000${e.schemaPath}\u0000${e.instancePath}`));
}
