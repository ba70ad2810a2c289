// Which stored schemas a json_schema step needs: follow $ref from the step's schema through the
// available schemas, transitively. The result is the snapshot saved in the step's `resources`, so
// a run executes exactly what was saved and the worker needs no database.
import { isPlainObject } from "../shared/config-shape.ts";
import { DEFAULT_DRAFT, type Draft, DRAFTS, draftFromUri, normalise } from "./drafts.ts";
import {
  absolutiseRefs,
  type Bases,
  basesOf,
  externalRefs,
  ROOT_BASE,
  rebaseRefs,
  refSummary,
} from "./refs.ts";
import { pinPointerRefs, type View } from "./pointer-refs.ts";

type Schemas = Record<string, Record<string, unknown>>;

function draftOf(config: Record<string, unknown>): Draft {
  const d = config.draft;
  return (DRAFTS as readonly unknown[]).includes(d) ? (d as Draft) : DEFAULT_DRAFT;
}

/**
 * External URIs a schema references; it follows its own $schema, else the step's draft. A
 * `$schema` that names no draft names a custom meta-schema, which must be stored too.
 */
export function refsOf(schema: unknown, fallback: Draft, uri?: string): string[] {
  if (!isPlainObject(schema)) return [];
  const declared = typeof schema.$schema === "string" ? schema.$schema : undefined;
  const own = declared ? draftFromUri(declared) : undefined;
  const refs = externalRefs(normalise(schema, { draft: own ?? fallback, assertFormats: true }), uri);
  return declared && !own ? [...refs, declared.replace(/#$/, "")] : refs;
}

/**
 * External URIs a stored schema references in any draft it may be read in: one without `$schema`
 * is read in the draft of each step referencing it, and draft 4's `id`, or a `$id` beside `$ref`
 * (ignored up to draft 7), moves the base its relative references resolve against. Read in
 * 2020-12 alone, a draft-4 schema `{"id": "http://x/object", … {"$ref": "name.json"}}` asked for
 * `<its URI's folder>/name.json`, its draft-4 check lacked `http://x/name.json`, and it could not
 * be stored. 2019-09 reads bases as 2020-12 does, draft 6 as draft 7.
 */
export function refsInAnyDraft(schema: unknown, uri: string): string[] {
  if (isPlainObject(schema) && typeof schema.$schema === "string") return refsOf(schema, DEFAULT_DRAFT, uri);
  return [...new Set((["2020-12", "7", "4"] as const).flatMap((d) => refsOf(schema, d, uri)))];
}

/** External URIs the config's schema references directly. */
export function schemaRefs(config: unknown): string[] {
  if (!isPlainObject(config)) return [];
  return refsOf(config.schema, draftOf(config));
}

/** The part of `available` the config's schema reaches through $ref, keyed as in `available`. */
export function referencedResources(config: unknown, available: Schemas): Schemas {
  const out: Schemas = {};
  if (!isPlainObject(config)) return out;
  const draft = draftOf(config);
  const queue = refsOf(config.schema, draft);
  while (queue.length > 0) {
    const uri = queue.pop() as string;
    const key = uri in available ? uri : `${uri}#`;
    if (key in out || !(key in available)) continue;
    out[key] = available[key]!;
    queue.push(...refsOf(available[key], draft, uri));
  }
  return out;
}

/**
 * The part of `context` the schema reaches through $ref, transitively. typebox tracks evaluated
 * keys and items on every object and array when ANY schema in its context uses unevaluated*,
 * and the 2019-09/2020-12 meta-schemas do: compiled against the whole context, a schema that
 * names no meta-schema paid a Set per object (30% of a 10 MiB check, docs/benchmarks.md).
 * Resources the schema cannot reach cannot change its result.
 */
export function reachableContext(schema: unknown, context: Record<string, unknown>): Record<string, unknown> {
  return reach(context, externalRefs(schema)).reached;
}

/** reachableContext from the URIs in `queue`, and the keys of those that name a pointer by URI. */
function reach(context: Record<string, unknown>, queue: string[]) {
  const reached: Record<string, unknown> = {};
  const naming = new Set<string>();
  while (queue.length > 0) {
    const uri = queue.pop() as string;
    // Meta-schemas are keyed both with and without the trailing "#": keep whichever exist.
    const keys = [uri, `${uri}#`].filter((k) => k in context && !(k in reached));
    if (keys.length === 0) continue;
    for (const k of keys) reached[k] = context[k];
    const { external, pointerByUri } = refSummary(context[keys[0]!], uri);
    if (pointerByUri) for (const k of keys) naming.add(k);
    queue.push(...external);
  }
  return { reached, naming };
}

/** Where a stored schema's embedded resources reach its root resource from (refs.ts, absolutiseRefs). */
const ROUTE = "urn:assay:root:";

const basesCache = new WeakMap<object, { uri: string; bases: Bases }>();

/** The bases of a reached schema (refs.ts), once per schema and URI. */
function basesIn(res: Record<string, unknown>, uri: string): Bases {
  const hit = basesCache.get(res);
  if (hit?.uri === uri) return hit.bases;
  const bases = basesOf(res, uri);
  basesCache.set(res, { uri, bases });
  return bases;
}

/**
 * The schema and the part of the context it reaches, as the engine must see them, on copies of
 * what has to change: a step's snapshot is never touched, and nothing is copied when no schema
 * reached declares a base other than the URI it is stored under.
 *
 * typebox enters a stored schema by the URI it is stored under and from then on resolves the
 * references inside it against the base of that entry, whatever the schema declares:
 * - a stored schema with an absolute `$id` other than its storage URI (which JSON Schema makes
 *   its base): stored under `https://example.com/s.json` with `"$id": "https://other.example/tree"`,
 *   its `"$ref": "node"` passed every save-time check (which resolves it against the `$id`) and the
 *   engine read it as `false`, so every document failed. So each such schema reached is also
 *   given under its `$id` (unless another schema reached is known by that URI, or claims it too:
 *   either could be meant), and references to its storage URI are rewritten to the same fragment
 *   of its `$id`.
 * - a subschema moving the base again by a relative `$id` (`"$id": "baseUriChange/"`): references
 *   below it were still resolved against the stored schema's base (and the `$id` applied twice
 *   when searching), and read as `false`, while the same schema passed inline. So each resource
 *   it embeds is given under its URI too, on the same terms.
 * In both, the schema's `$id`s and `$ref`s are made absolute as the save-time checks resolve them
 * (refs.ts, absolutiseRefs): what those checks accept is what the engine runs, also where no alias
 * can be given.
 * Then, in the schema as in any stored schema, each `$ref` to a JSON Pointer of a document named
 * by URI (`other.json#/$defs/a`, an embedded resource's `sub/#/$defs/a`) is given to the engine
 * as the schema it names (pointer-refs.ts): its own search could answer from the wrong document.
 */
export function engineView(schema: unknown, context: Record<string, unknown>, rootUri = ROOT_BASE): View {
  const { external, pointerByUri } = refSummary(schema);
  const { reached, naming } = reach(context, external);
  const view = rebasedView(schema, reached, rootUri);
  // No reference names a pointer by URI (the common case, stored schemas or not): nothing to name.
  if (!pointerByUri && naming.size === 0) return view;
  return pinPointerRefs(view, schema, reached, naming, rootUri);
}

/** The schema and the context it reaches with every base the engine does not track made absolute. */
function rebasedView(schema: unknown, reached: Record<string, unknown>, rootUri: string): View {
  const entries = Object.entries(reached);
  // No stored schema reached (the common case, and the inline lane's): nothing more to do.
  if (entries.length === 0) return { schema, context: reached };
  const claims = new Map<string, string[]>();
  const based = new Map<string, Bases>();
  for (const [key, res] of entries) {
    if (!isPlainObject(res)) continue;
    const doc = key.replace(/#$/, "");
    const bases = basesIn(res, doc);
    if (bases.root === doc && bases.embedded.size === 0) continue;
    based.set(doc, bases);
    for (const uri of bases.root === doc ? bases.embedded.keys() : [bases.root, ...bases.embedded.keys()])
      if (!(uri in reached) && !(`${uri}#` in reached)) claims.set(uri, [...(claims.get(uri) ?? []), doc]);
  }
  if (based.size === 0) return { schema, context: reached };
  const out: Record<string, unknown> = { ...reached };
  const rebased = new Map<unknown, { copy: unknown; uri: string }>();
  const copyOf = (key: string) => {
    const res = reached[key];
    let c = rebased.get(res);
    if (!c) {
      c = { copy: structuredClone(res), uri: key.replace(/#$/, "") };
      rebased.set(res, c);
    }
    // Under both keys when it is reached under both (meta-schemas are).
    for (const k of [c.uri, `${c.uri}#`]) if (reached[k] === res) out[k] = c.copy;
    return c.copy;
  };
  const keyOf = (doc: string) => (doc in reached ? doc : `${doc}#`);
  // Each URI that one schema reached alone claims, its root's or an embedded one's, is given under it.
  const alias = new Map<string, string>();
  const given = new Map<string, string[]>();
  for (const [uri, docs] of claims) {
    if (new Set(docs).size !== 1) continue;
    const doc = docs[0]!;
    if (uri === based.get(doc)!.root) alias.set(doc, uri);
    else given.set(doc, [...(given.get(doc) ?? []), uri]);
  }
  let routes = 0;
  const named = new Map<string, unknown>();
  for (const doc of based.keys()) {
    const copy = copyOf(keyOf(doc));
    let route: string;
    do route = `${ROUTE}${routes++}`;
    while (route in reached);
    for (const [ref, node] of absolutiseRefs(copy, doc, route)) {
      named.set(ref, node);
      if (ref.split("#")[0] === route) out[route] = copy;
    }
    if (alias.has(doc)) out[alias.get(doc)!] = copy;
    if (!given.has(doc)) continue;
    const { embedded } = basesOf(copy, doc);
    for (const uri of given.get(doc)!) out[uri] = embedded.get(uri);
  }
  // A place named inside a resource the engine knows by its URI, by the reference that names it.
  for (const [ref, node] of named) if (ref.split("#")[0] in out && !(ref in out)) out[ref] = node;
  if (alias.size === 0) return { schema, context: out };
  // References to an aliased URI may sit in any schema reached (the meta-schemas name none).
  for (const [key, res] of entries)
    if (
      isPlainObject(res) &&
      !rebased.has(res) &&
      externalRefs(res, key.replace(/#$/, "")).some((u) => alias.has(u))
    )
      copyOf(key);
  for (const { copy, uri } of rebased.values()) rebaseRefs(copy, alias, uri);
  const own = structuredClone(schema);
  rebaseRefs(own, alias, rootUri);
  return { schema: own, context: out };
}
