import { compileUserRegex } from "../shared/user-regex.ts";

// Where subschemas live, per keyword. Used to normalise older drafts, to strip `format`, and to
// find $id/$ref for the save-time reference check. Values under enum/const/examples/default are
// data, never schemas, so they are never visited.

/** Keywords whose value is one subschema (or, for `items` before 2020-12, possibly an array). */
export const SINGLE = new Set([
  "additionalItems",
  "additionalProperties",
  "contains",
  "contentSchema",
  "else",
  "if",
  "items",
  "not",
  "propertyNames",
  "then",
  "unevaluatedItems",
  "unevaluatedProperties",
]);
/** Keywords whose value is an array of subschemas. */
export const ARRAY = new Set(["allOf", "anyOf", "oneOf", "prefixItems", "items"]);
/** Keywords whose value maps names to subschemas (`dependencies` values may also be arrays). */
export const MAP = new Set([
  "$defs",
  "definitions",
  "dependencies",
  "dependentSchemas",
  "patternProperties",
  "properties",
]);

/** `parent`: the nearest schema object around this one (undefined at the root). */
export type Visit = (
  schema: Record<string, unknown>,
  pointer: string,
  parent?: Record<string, unknown>,
) => void;

function esc(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Pre-order walk over every schema object, with its JSON Pointer from the root and the schema
 * around it. A visit that needs its ancestors takes `parent`: reading them back from the root by
 * the pointer cost depth × pointer length per schema (src/validators/json-schema/refs.ts did, and
 * a 1 MB schema of long keys held the HTTP thread 230 s).
 */
export function walkSchemas(
  schema: unknown,
  visit: Visit,
  pointer = "",
  parent?: Record<string, unknown>,
): void {
  if (!isObj(schema)) return;
  visit(schema, pointer, parent);
  for (const [key, value] of Object.entries(schema)) {
    const at = `${pointer}/${esc(key)}`;
    if (ARRAY.has(key) && Array.isArray(value)) {
      value.forEach((s, i) => {
        walkSchemas(s, visit, `${at}/${i}`, schema);
      });
    } else if (SINGLE.has(key)) {
      walkSchemas(value, visit, at, schema);
    } else if (MAP.has(key) && isObj(value)) {
      for (const [name, s] of Object.entries(value)) walkSchemas(s, visit, `${at}/${esc(name)}`, schema);
    }
  }
}

const REFS = new Set(["$ref", "$dynamicRef", "$recursiveRef"]);

/**
 * The keywords a schema location goes through, names and indexes skipped, references too:
 * "#/properties/a/$ref/items/anyOf/0" → ["properties", "items", "anyOf"].
 */
export function keywordsAlong(schemaPath: string): string[] {
  const segs = schemaPath.replace(/^#\/?/, "").split("/").filter(Boolean);
  const out: string[] = [];
  for (let i = 0; i < segs.length; i++) {
    if (REFS.has(segs[i])) continue;
    out.push(segs[i]);
    if (MAP.has(segs[i]) || (ARRAY.has(segs[i]) && /^\d+$/.test(segs[i + 1] ?? ""))) i++;
  }
  return out;
}

/**
 * The keyword a schema location ends in: "#/properties/a/items" → "items"; "#" → null. A
 * reference is not the place's keyword: "#/properties/a/$ref" → "properties".
 */
export function lastKeyword(schemaPath: string): string | null {
  return keywordsAlong(schemaPath).at(-1) ?? null;
}

/**
 * `pattern` values and `patternProperties` keys the linear-time engine cannot run, or that are
 * not ECMA-262 regexes (shared/user-regex.ts): refused at save time, with the code to report.
 */
export function patternIssues(schema: unknown): Array<{ code: string; message: string }> {
  const out: Array<{ code: string; message: string }> = [];
  walkSchemas(schema, (s, pointer) => {
    const found: Array<[string, string]> = [];
    if (typeof s.pattern === "string") found.push([s.pattern, `#${pointer}/pattern`]);
    const pp = s.patternProperties;
    if (typeof pp === "object" && pp !== null && !Array.isArray(pp))
      for (const key of Object.keys(pp)) found.push([key, `#${pointer}/patternProperties key`]);
    for (const [pattern, at] of found) {
      const r = compileUserRegex(pattern);
      if (!r.ok) out.push({ code: r.code, message: `${at} ${JSON.stringify(pattern)} ${r.message}` });
    }
  });
  return out;
}
