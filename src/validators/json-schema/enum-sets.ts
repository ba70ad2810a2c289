// Large `enum`s (code lists: 20,000 country, unit or product codes) checked by a Set lookup.
// typebox compiles an enum into one expression `((v === a || v === b) || c) …`, one level of
// parentheses per value: linear time per value, and a parser recursion that runs out of stack near
// 4,000 values in a worker (engine.ts). The compiled check gets the enum as a `~refine` instead (a
// typebox keyword whose value holds functions, so no JSON schema can spell it); the schema that
// explains failures (errors.ts) keeps the `enum`, so findings read as before.
import { Guard } from "typebox/guard";
import { ARRAY, MAP, SINGLE } from "./walk.ts";

/** Enums with at least this many values are looked up; shorter ones compile as typebox does. */
export const ENUM_SET_MIN = 32;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A check with the enum's meaning: `===` for primitives, deep equality for objects and arrays. */
function enumCheck(values: unknown[]) {
  const primitives = new Set<unknown>();
  const composites: unknown[] = [];
  for (const v of values) {
    if (isObj(v) || Array.isArray(v)) composites.push(v);
    else primitives.add(v);
  }
  return (value: unknown) => primitives.has(value) || composites.some((c) => Guard.IsDeepEqual(value, c));
}

function refined(s: Obj): Obj {
  const { enum: values, ...rest } = s;
  const check = enumCheck(values as unknown[]);
  return { ...rest, "~refine": [{ check, error: () => "must be one of the enum's values" }] };
}

/** `s` with every large enum (in it and its subschemas) a lookup; `s` itself when there is none. */
export function withEnumSets(s: unknown): unknown {
  if (!isObj(s)) return s;
  let out = s;
  const set = (key: string, value: unknown) => {
    if (out === s) out = { ...s };
    out[key] = value;
  };
  for (const [key, value] of Object.entries(s)) {
    if (ARRAY.has(key) && Array.isArray(value)) {
      const next = value.map(withEnumSets);
      if (next.some((v, i) => v !== value[i])) set(key, next);
    } else if (SINGLE.has(key)) {
      const next = withEnumSets(value);
      if (next !== value) set(key, next);
    } else if (MAP.has(key) && isObj(value)) {
      const entries = Object.entries(value).map(([k, v]) => [k, withEnumSets(v)] as const);
      if (entries.some(([k, v]) => v !== value[k])) set(key, Object.fromEntries(entries));
    }
  }
  return Array.isArray(out.enum) && out.enum.length >= ENUM_SET_MIN ? refined(out) : out;
}
