// Targets of anchor references into another stored schema (`other.json#a`, `$anchor` or draft
// 4-7's `$id`/`id` "#a"), meta-validated like a pointer target (subschemas.ts,
// foreignSubschemaErrors) where that schema's own meta-validation did not reach them. Only where
// schemas are: under an unknown keyword an anchor identifies nothing (2020-12 Core §9.4.2; drafts.ts
// hides it from the engine, which read `other.json#a` as `false`), and the reference check
// refuses a reference to it (refs.ts, unresolvableRefs).
import type { TbError } from "./errors.ts";
import { childReach, type Holder, type Reach } from "./subschemas.ts";
import { ARRAY, MAP, SINGLE } from "./walk.ts";

type Obj = Record<string, unknown>;

/** A reference to an anchor of another document: `doc` without fragment, `anchor` decoded. */
export interface AnchorRef {
  ref: string;
  at: string;
  doc: string;
  anchor: string;
}

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const esc = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/** The anchor names an object declares, in any draft's spelling. */
function anchorsOf(s: Obj): string[] {
  const out: string[] = [];
  for (const key of ["$anchor", "$dynamicAnchor"]) if (typeof s[key] === "string") out.push(s[key] as string);
  for (const key of ["$id", "id"]) {
    const id = s[key];
    if (typeof id !== "string" || !id.startsWith("#")) continue;
    try {
      out.push(decodeURIComponent(id.slice(1)));
    } catch {
      // not a URI reference: that schema's own check names it
    }
  }
  return out;
}

/** What a value holds: a schema, a map of them, a list of them (walk.ts: where schemas live). */
type Holds = "schema" | "map" | "list";

/** What the value `v` of keyword `key` of a schema holds; undefined when it holds no schema. */
function keywordHolds(key: string, v: unknown): Holds | undefined {
  if (Array.isArray(v)) return ARRAY.has(key) ? "list" : undefined;
  if (SINGLE.has(key)) return "schema";
  return MAP.has(key) ? "map" : undefined;
}

/**
 * Meta-validation errors of each object of another stored schema that carries an anchor `refs`
 * name, in that schema's draft. One pre-order walk per schema referenced: an object its own check
 * reached (through keywords every draft's meta-schema descends, from its root or from a target
 * checked before: `checked`) is not checked again, so each object is visited once and checked at
 * most once, whatever the number of references or the depth.
 */
export function foreignAnchorErrors<R extends AnchorRef>(
  refs: R[],
  holder: Holder,
  max: number,
  checked: Set<unknown> = new Set(),
): Array<{ ref: R; pointer: string; error: TbError }> {
  const byDoc = new Map<string, Map<string, R>>();
  for (const r of refs) {
    const names = byDoc.get(r.doc) ?? new Map<string, R>();
    if (!names.has(r.anchor)) names.set(r.anchor, r);
    byDoc.set(r.doc, names);
  }
  const out: Array<{ ref: R; pointer: string; error: TbError }> = [];
  for (const [doc, names] of byDoc) {
    const h = holder(doc);
    if (!h) continue; // a meta-schema, or unresolvable: the reference check names it
    // Iterative: a stored schema's data may nest deeper than the stack allows. Only schema
    // locations: an anchor under an unknown keyword identifies nothing (refs.ts refuses it).
    const stack: Array<[unknown, Reach, string, Holds]> = [[h.schema, "schema", "", "schema"]];
    while (stack.length > 0 && out.length < max) {
      const [value, from, pointer, holds] = stack.pop()!;
      let reach = checked.has(value) ? "schema" : from;
      if (holds === "schema" && isObj(value) && reach !== "schema") {
        const ref = anchorsOf(value)
          .map((a) => names.get(a))
          .find((r) => r !== undefined);
        if (ref) {
          checked.add(value);
          reach = "schema";
          const [valid, errors] = h.explain(value);
          if (!valid) for (const error of errors) out.push({ ref, pointer, error });
        }
      }
      if (isObj(value)) {
        const entries = Object.entries(value);
        for (let i = entries.length - 1; i >= 0; i--) {
          const [key, v] = entries[i]!;
          const inner = holds === "schema" ? keywordHolds(key, v) : holds === "map" ? "schema" : undefined;
          if (inner && typeof v === "object" && v !== null)
            stack.push([v, childReach(reach, key, v), `${pointer}/${esc(key)}`, inner]);
        }
      } else if (Array.isArray(value) && holds === "list") {
        for (let i = value.length - 1; i >= 0; i--)
          if (typeof value[i] === "object" && value[i] !== null)
            stack.push([value[i], reach === "listed" ? "schema" : "none", `${pointer}/${i}`, "schema"]);
      }
    }
  }
  return out.slice(0, max);
}
