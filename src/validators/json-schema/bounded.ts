// Whether a json_schema step validates in time linear in the document, judged from its config
// alone. The inline lane (src/jobs/inline.ts) runs such steps on the main thread, where nothing
// can interrupt them: the step's time limit only judges afterwards, and every other request
// waits meanwhile. So the answer is true only when the work is provably at most a constant of the
// schema × the document's size, and false whenever in doubt (the step then runs on a worker, whose
// timeout is the backstop). Every schema object of `schema` and of every `resources` value:
// - `pattern` and `patternProperties` keys run on a linear-time engine (shared/user-regex.ts);
//   each weighs its RE2 program size, the most steps one character can cost;
// - `format`, when asserted: only LINEAR_FORMATS, typebox's checks we read to be linear; any
//   other could be registered with a slow checker;
// - no `uniqueItems: true`: typebox compares every pair of items, quadratic;
// - no unevaluatedProperties/unevaluatedItems: typebox then tracks evaluated keys and items
//   across every applicator; no content*: decoding and validating embedded documents;
// - every $ref/$dynamicRef/$recursiveRef is local or names a resource: anything else could be
//   a meta-schema (with unevaluated*) we did not analyse;
// - the schema reached from the root through applicators and references is a finite tree
//   (no recursion) of weight at most MAX_SCHEMA_WEIGHT: allOf [$ref a, $ref a] nested 22 deep
//   applies `a` 2^22 times to one value (110 ms, measured), however small the document.
import { isPlainObject } from "../shared/config-shape.ts";
import { compileUserRegex } from "../shared/user-regex.ts";
import { walkSchemas } from "./walk.ts";

/**
 * typebox's format checks (node_modules/typebox/build/format) that run in linear time: anchored
 * regexes whose quantified parts are separated by characters they cannot match, plus splits.
 */
export const LINEAR_FORMATS: ReadonlySet<string> = new Set([
  "date",
  "date-time",
  "time",
  "email",
  "uuid",
  "ipv4",
  "duration",
]);

const UNBOUNDED_KEYWORDS = [
  "unevaluatedProperties",
  "unevaluatedItems",
  "contentMediaType",
  "contentEncoding",
  "contentSchema",
];

const REFS = ["$ref", "$dynamicRef", "$recursiveRef"] as const;

/**
 * Most work the expanded schema may do per value or character of the document: each schema object
 * counts 1, plus its enum values, required names, property names and its regexes' program sizes.
 * At this bound, 16 KiB of valid JSON built to be slow took 15-25 ms in Bun 1.4.5 (allOf of 495
 * schemas under items on 8,000 numbers); an RE2 program of 458 instructions forced off re2js's
 * DFA took under 1 ms on 16 KiB.
 */
export const MAX_SCHEMA_WEIGHT = 500;
/**
 * The JSON Pointers of a schema's objects, characters in all, past which it is not analysed (a
 * worker validates it, as any schema found unbounded): a few milliseconds of hashing; a schema
 * within the weight has ~500 pointers, and 4 M characters allow 40,000 objects of 100 each.
 */
export const MAX_POINTER_CHARS = 4_000_000;
/** Schema objects in a config and its resources, reached or not, past which it is not analysed. */
export const MAX_ANALYSED_SCHEMAS = 5_000;

type Obj = Record<string, unknown>;

/** One document (the step's schema or a resource): its schema objects by JSON Pointer. */
interface Doc {
  root: Obj;
  at: Map<string, Obj>;
}

function len(v: unknown): number {
  if (Array.isArray(v)) return v.length;
  return isPlainObject(v) ? Object.keys(v).length : 0;
}

/** Work the schema object does itself on one value, before its subschemas. */
function ownWeight(s: Obj): number {
  let w = 1 + len(s.enum) + len(s.required) + len(s.properties) + len(s.patternProperties);
  for (const deps of [s.dependencies, s.dependentRequired]) {
    if (isPlainObject(deps)) for (const v of Object.values(deps)) w += len(v);
  }
  const patterns = isPlainObject(s.patternProperties) ? Object.keys(s.patternProperties) : [];
  if (typeof s.pattern === "string") patterns.push(s.pattern);
  for (const p of patterns) w += regexCost(p);
  return w;
}

function regexCost(pattern: string): number {
  const r = compileUserRegex(pattern);
  return r.ok ? r.regex.cost : Number.POSITIVE_INFINITY;
}

/** False when the schema object breaks a rule that does not depend on references. */
function objectIsBounded(s: Obj, assertFormats: boolean): boolean {
  if (assertFormats && typeof s.format === "string" && !LINEAR_FORMATS.has(s.format)) return false;
  if (s.uniqueItems === true) return false;
  return !UNBOUNDED_KEYWORDS.some((k) => Object.hasOwn(s, k));
}

/** True when the json_schema step config provably validates in time linear in the document. */
export function runsInBoundedTime(config: unknown): boolean {
  return schemaWeight(config) <= MAX_SCHEMA_WEIGHT;
}

/** The weight of the schema as it unfolds from its root; Infinity when a rule above fails. */
export function schemaWeight(config: unknown): number {
  const NO = Number.POSITIVE_INFINITY;
  if (!isPlainObject(config) || !isPlainObject(config.schema)) return NO;
  const resources = config.resources ?? {};
  if (!isPlainObject(resources) || !Object.values(resources).every(isPlainObject)) return NO;
  const assertFormats = config.assert_formats !== false;
  const docs = new Map<string, Doc>();
  const all: Array<{ s: Obj; doc: Doc }> = [];
  const parentOf = new Map<Obj, Obj>();
  let ok = true;
  let embeddedIds = false;
  let refs = false;
  let pointerChars = 0;
  for (const [uri, root] of [["", config.schema], ...Object.entries(resources)] as Array<[string, Obj]>) {
    const doc: Doc = { root, at: new Map() };
    docs.set(uri, doc);
    walkSchemas(root, (s, pointer) => {
      // Past a verdict of NO nothing below matters; and each pointer is hashed (the map) and cut
      // (appliedBy) whole, so their lengths in all are bounded: 40,000 schemas under a spine of
      // 100 keys of 5,000 characters made 20 GB of pointer text, hashed on the HTTP thread.
      if (!ok) return;
      pointerChars += pointer.length;
      // Schemas the unfolding never reaches (a stored schema's unused $defs) still go into the
      // compile, on the HTTP thread: 6,000 of them (0.9 MB) held it 0.13 s at a version's first run.
      if (pointerChars > MAX_POINTER_CHARS || all.length >= MAX_ANALYSED_SCHEMAS) {
        ok = false;
        return;
      }
      doc.at.set(pointer, s);
      all.push({ s, doc });
      if (pointer !== "") {
        const parent = appliedBy(doc, pointer);
        if (parent) parentOf.set(s, parent);
        embeddedIds ||= typeof s.$id === "string" || typeof s.id === "string";
      }
      refs ||= REFS.some((k) => typeof s[k] === "string");
      ok &&= objectIsBounded(s, assertFormats);
    });
  }
  // An embedded $id changes what "#..." means below it: resolving it is not worth the code here.
  if (!ok || (embeddedIds && refs)) return NO;
  const edges = new Map<Obj, Obj[]>(all.map(({ s }) => [s, []]));
  for (const [child, parent] of parentOf) edges.get(parent)?.push(child);
  for (const { s, doc } of all) {
    for (const key of REFS) {
      if (typeof s[key] !== "string") continue;
      const targets = refTargets(key, s[key] as string, doc, docs, all);
      if (targets.length === 0) return NO;
      edges.get(s)?.push(...targets);
    }
  }
  return expandedWeight(config.schema, edges, new Map());
}

/**
 * The schema object that applies the one at `pointer` (…/items, …/allOf/0, …/properties/name);
 * none for definitions, which apply only through a reference.
 */
function appliedBy(doc: Doc, pointer: string): Obj | undefined {
  const up = pointer.slice(0, pointer.lastIndexOf("/"));
  const direct = doc.at.get(up);
  if (direct) return direct;
  const container = up.slice(up.lastIndexOf("/") + 1);
  return container === "$defs" || container === "definitions"
    ? undefined
    : doc.at.get(up.slice(0, up.lastIndexOf("/")));
}

/** Where a reference may land; none when it leaves the analysed documents. */
function refTargets(key: string, ref: string, doc: Doc, docs: Map<string, Doc>, all: Array<{ s: Obj }>) {
  const hash = ref.indexOf("#");
  const base = hash < 0 ? ref : ref.slice(0, hash);
  const target = base === "" ? doc : (docs.get(base) ?? docs.get(`${base}#`));
  let fragment: string;
  try {
    fragment = decodeURIComponent(hash < 0 ? "" : ref.slice(hash + 1));
  } catch {
    return [];
  }
  const out: Obj[] = [];
  if (target && fragment === "") out.push(target.root);
  else if (target && fragment.startsWith("/")) {
    const s = target.at.get(fragment);
    if (s) out.push(s);
  } else if (target) {
    for (const s of target.at.values())
      if (s.$anchor === fragment || s.$dynamicAnchor === fragment) out.push(s);
  }
  // A dynamic reference may land on any matching anchor in the dynamic scope: count them all.
  if (key === "$ref") return out;
  for (const { s } of all) {
    const dynamic = key === "$dynamicRef" ? s.$dynamicAnchor === fragment : s.$recursiveAnchor === true;
    if (dynamic && !out.includes(s)) out.push(s);
  }
  return out;
}

const VISITING = -1;

/** Weight of the tree the schema unfolds into; Infinity when it recurses. */
function expandedWeight(s: Obj, edges: Map<Obj, Obj[]>, memo: Map<Obj, number>): number {
  const known = memo.get(s);
  if (known === VISITING) return Number.POSITIVE_INFINITY;
  if (known !== undefined) return known;
  memo.set(s, VISITING);
  let total = ownWeight(s);
  for (const next of edges.get(s) ?? []) {
    if (total > MAX_SCHEMA_WEIGHT) break;
    total += expandedWeight(next, edges, memo);
  }
  memo.set(s, total);
  return total;
}
