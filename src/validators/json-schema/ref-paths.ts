// typebox evaluates a reference's target under the referring schema's path: an error in the
// target of `properties/a/$ref` reads "#/properties/a/type". JSON Schema 2020-12 Core §12.4.2
// says the evaluation path (a finding's `rule`) MUST include the `$ref` or `$dynamicRef` it went
// through: "#/properties/a/$ref/type". typebox's paths gain a segment only through applicators,
// so findings are computed on a copy where every schema object that has `allOf` or a reference
// holds them in fixed `allOf` slots; `evaluationPath` reads the slot back as the keyword.
import { ARRAY, MAP, SINGLE } from "./walk.ts";

/** allOf/0 holds the schema's own allOf (as `{allOf}`); allOf/1.. hold these, in this order. */
const SLOTS = ["$ref", "$dynamicRef", "$recursiveRef"] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isIndex = (s: string | undefined) => s !== undefined && /^\d+$/.test(s);

/**
 * Walks the segments of a path that starts at a schema object. `slot(seg, i)` may consume
 * segments at a schema position and return [emitted segments, how many it used]; keyword
 * structure (names after `properties`, indexes after `anyOf`…) is followed, never guessed.
 */
function mapSchemaSegments(
  segs: string[],
  slot: (segs: string[], i: number) => [string[], number] | null,
): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < segs.length) {
    const own = slot(segs, i);
    if (own) {
      out.push(...own[0]);
      i += own[1];
      continue;
    }
    const k = segs[i];
    if (MAP.has(k) && i + 1 < segs.length) {
      out.push(k, segs[i + 1]);
      i += 2;
    } else if (ARRAY.has(k) && isIndex(segs[i + 1])) {
      out.push(k, segs[i + 1]);
      i += 2;
    } else if (SINGLE.has(k)) {
      out.push(k);
      i += 1;
    } else {
      // Not a subschema any more (a keyword's value, or data): the rest is copied as it is.
      out.push(...segs.slice(i));
      break;
    }
  }
  return out;
}

/**
 * A JSON Pointer fragment into an original schema, rewritten to the same place in the copy; also
 * a context key that is a reference's text (resources.ts names targets so), to keep matching it.
 */
export function rewriteRef(ref: string): string {
  const hash = ref.indexOf("#");
  if (hash < 0 || ref[hash + 1] !== "/") return ref;
  const segs = ref.slice(hash + 2).split("/");
  const mapped = mapSchemaSegments(segs, (s, i) =>
    s[i] === "allOf" && isIndex(s[i + 1]) ? [["allOf", "0", "allOf", s[i + 1]], 2] : null,
  );
  return `${ref.slice(0, hash)}#/${mapped.join("/")}`;
}

/** A deep copy of a (normalised) schema with `allOf` and references moved into the slots. */
export function withRefSlots(schema: unknown): unknown {
  if (!isObj(schema)) return schema;
  const out: Obj = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ARRAY.has(key) && Array.isArray(value)) out[key] = value.map(withRefSlots);
    else if (SINGLE.has(key)) out[key] = withRefSlots(value);
    else if (MAP.has(key) && isObj(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([n, s]) => [n, withRefSlots(s)]));
    else out[key] = value;
  }
  if (!("allOf" in out) && !SLOTS.some((k) => typeof out[k] === "string")) return out;
  const slots: unknown[] = ["allOf" in out ? { allOf: out.allOf } : true];
  for (const k of SLOTS) {
    slots.push(typeof out[k] === "string" ? { [k]: rewriteRef(out[k] as string) } : true);
    if (typeof out[k] === "string") delete out[k];
  }
  out.allOf = slots;
  return out;
}

/** A schema path of the slotted copy ("#/properties/a/allOf/1/type") in the user's terms. */
export function evaluationPath(schemaPath: string): string {
  if (!schemaPath.startsWith("#/")) return schemaPath;
  const segs = schemaPath.slice(2).split("/");
  const mapped = mapSchemaSegments(segs, (s, i) => {
    if (s[i] !== "allOf" || !isIndex(s[i + 1])) return null;
    const n = Number(s[i + 1]);
    if (n === 0) return s[i + 2] === "allOf" && isIndex(s[i + 3]) ? [["allOf", s[i + 3]], 4] : [[], 2];
    return [[SLOTS[n - 1] ?? `allOf/${n}`], 2];
  });
  return mapped.length === 0 ? "#" : `#/${mapped.join("/")}`;
}
