// Subschemas a meta-schema does not reach. Meta-validation checks a subschema only where the
// draft's meta-schema expects one: draft 4 to 7 know no `$defs`, and no draft knows a schema kept
// under an unknown keyword. Yet a `$ref` makes either a schema, so `{"$ref": "#/$defs/b",
// "$defs": {"b": {"type": 5}}}` passed a draft-7 check, and a stored schema without $schema was
// accepted because it fitted draft 7 (2026-11-29 audit). Each `$defs`/`definitions` member and
// each local `$ref` target is meta-validated on its own here, on the raw schema (the draft's own
// spelling); each object once. So is the target of a `$ref` into another stored schema
// (`other.json#/x/y`), in the draft of the schema that holds it: that schema's own check did not
// reach it either, and a `{"type": 5}` there was saved, then ignored by every run.
import type { TbError } from "./errors.ts";
import type { PointerRef } from "./refs.ts";
import { walkSchemas } from "./walk.ts";

type Obj = Record<string, unknown>;
/** What is asked of a meta-schema's validator: its errors. */
export type Explain = (value: unknown) => [boolean, TbError[]];

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const unescapeSegment = (seg: string) => seg.replace(/~1/g, "/").replace(/~0/g, "~");

/** A schema object with an absolute or relative `$id` (draft 4: `id`) is its own document. */
function ownsDocument(s: Obj): boolean {
  const id = typeof s.$id === "string" ? s.$id : typeof s.id === "string" ? s.id : null;
  return id !== null && !id.startsWith("#");
}

function pointerGet(root: unknown, pointer: string): unknown {
  let cur = root;
  for (const raw of pointer.split("/").slice(1)) {
    const seg = unescapeSegment(raw);
    if (!isObj(cur) && !Array.isArray(cur)) return undefined;
    if (!Object.hasOwn(cur, seg)) return undefined;
    cur = (cur as Obj)[seg];
  }
  return cur;
}

/** `$defs`/`definitions` members and local `#/…` targets of `schema`, keyed by their pointer. */
export function unreachedSubschemas(schema: unknown): Map<unknown, string> {
  const found = new Map<unknown, string>();
  const docOf = new Map<Obj, { node: Obj; at: string }>();
  // The members of the `$defs`/`definitions` of the schemas visited so far (the walk is pre-order:
  // a schema's are noted before it reaches them). Read off the pointer instead, each schema cost
  // its pointer's length (split flattens it): 40,000 leaves under a 480 KB spine of keys, 2.8 s.
  const defMembers = new Set<unknown>();
  walkSchemas(schema, (s, pointer, parent) => {
    const doc = parent === undefined || ownsDocument(s) ? { node: s, at: pointer } : docOf.get(parent)!;
    docOf.set(s, doc);
    for (const key of ["$defs", "definitions"])
      if (isObj(s[key])) for (const member of Object.values(s[key] as Obj)) defMembers.add(member);
    if (defMembers.has(s) && !found.has(s)) found.set(s, pointer);
    const ref = s.$ref;
    if (typeof ref === "string" && ref.startsWith("#/")) {
      let fragment: string;
      try {
        fragment = decodeURIComponent(ref.slice(1));
      } catch {
        return; // not a URI reference: the reference check names it
      }
      const target = pointerGet(doc.node, fragment);
      if ((isObj(target) || typeof target === "boolean") && target !== doc.node && !found.has(target))
        found.set(target, `${doc.at}${fragment}`);
    }
  });
  return found;
}

/** Meta-validation errors of each subschema the whole schema's meta-validation did not reach. */
export function subschemaErrors(
  explain: Explain,
  schema: unknown,
  max: number,
): Array<{ at: string; error: TbError }> {
  const out: Array<{ at: string; error: TbError }> = [];
  for (const [node, at] of unreachedSubschemas(schema)) {
    if (out.length >= max) break;
    const [valid, errors] = explain(node);
    if (!valid) for (const error of errors) out.push({ at, error });
  }
  return out;
}

/** The stored schema a reference points into, raw, and its draft's meta-schema. */
export type Holder = (doc: string) => { schema: unknown; explain: Explain } | undefined;

// Keywords every draft's meta-schema descends into (a schema, a map of them, an array of them).
const ONE = new Set(["additionalProperties", "not", "items"]);
const NAMED = new Set(["properties", "patternProperties"]);
const LISTED = new Set(["allOf", "anyOf", "oneOf"]);

/** What a value is to the meta-validation that reached (or not) the object or array holding it. */
export type Reach = "schema" | "named" | "listed" | "none";

/** What the member `key` (`value`) of a value reached as `reach` is to that meta-validation. */
export function childReach(reach: Reach, key: string, value: unknown): Reach {
  if (reach === "named" || reach === "listed") return "schema";
  if (reach === "none") return "none";
  if (ONE.has(key) && !Array.isArray(value)) return "schema";
  return NAMED.has(key) ? "named" : LISTED.has(key) ? "listed" : "none";
}

/**
 * What `pointer` points to in `root`, and whether a meta-validation already made reached it: the
 * root's own or a checked target's, through keywords every draft's meta-schema descends. A target
 * met that way is not checked again: a hundred references down a chain of `properties` above a
 * 1 MB subschema checked it a hundred times.
 */
function follow(root: unknown, pointer: string, checked: Set<unknown>) {
  let cur = root;
  let reached = true;
  let expect: Reach = "schema";
  for (const raw of pointer.split("/").slice(1)) {
    const seg = unescapeSegment(raw);
    if ((!isObj(cur) && !Array.isArray(cur)) || !Object.hasOwn(cur, seg))
      return { target: undefined, reached };
    const next = (cur as Obj)[seg];
    expect = childReach(expect, seg, next);
    if (expect === "none") reached = false;
    cur = next;
    if (checked.has(cur)) [reached, expect] = [true, "schema"];
  }
  return { target: cur, reached: reached && expect === "schema" };
}

/**
 * Meta-validation errors of each target of `refs` (references into other stored schemas), in
 * the draft of the schema holding it. Shallowest first, and each target once: one a check
 * already reached (follow) is not checked again, and each reference costs its pointer's length.
 */
export function foreignSubschemaErrors<R extends PointerRef>(
  refs: R[],
  holder: Holder,
  max: number,
  checked: Set<unknown> = new Set(),
): Array<{ ref: R; error: TbError }> {
  const out: Array<{ ref: R; error: TbError }> = [];
  for (const ref of [...refs].sort((a, b) => a.pointer.length - b.pointer.length)) {
    if (out.length >= max) break;
    const h = holder(ref.doc);
    if (!h) continue; // a meta-schema, or unresolvable: the reference check names it
    const { target, reached } = follow(h.schema, ref.pointer, checked);
    if (reached || !(isObj(target) || typeof target === "boolean")) continue;
    if (isObj(target)) checked.add(target);
    const [valid, errors] = h.explain(target);
    if (!valid) for (const error of errors) out.push({ ref, error });
  }
  return out;
}
