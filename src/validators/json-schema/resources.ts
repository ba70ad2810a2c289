// Which stored schemas a json_schema step needs: follow $ref from the step's schema through the
// available schemas, transitively. The result is the snapshot saved in the step's `resources`, so
// a run executes exactly what was saved and the worker needs no database.
import { isPlainObject } from "../shared/config-shape.ts";
import { DEFAULT_DRAFT, type Draft, DRAFTS, draftFromUri, normalise } from "./drafts.ts";
import { externalRefs, ROOT_BASE, rebaseRefs } from "./refs.ts";

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
  const out: Record<string, unknown> = {};
  const queue = externalRefs(schema);
  while (queue.length > 0) {
    const uri = queue.pop() as string;
    // Meta-schemas are keyed both with and without the trailing "#": keep whichever exist.
    const keys = [uri, `${uri}#`].filter((k) => k in context && !(k in out));
    if (keys.length === 0) continue;
    for (const k of keys) out[k] = context[k];
    queue.push(...externalRefs(context[keys[0]], uri));
  }
  return out;
}

const ABSOLUTE = /^[a-z][a-z0-9+.-]*:/i;

/**
 * The schema and the part of the context it reaches, as the engine must see them. typebox enters
 * a stored schema by the URI it is stored under and then resolves the references inside it
 * against that URI, not against the absolute `$id` the schema declares (which JSON Schema makes
 * its base): stored under `https://example.com/s.json` with `"$id": "https://other.example/tree"`,
 * its `"$ref": "node"` passed every save-time check (which resolves it against the `$id`) and the
 * engine read it as `false`, so every document failed. Entered by its `$id`, it resolves them
 * right; so each such schema reached is also given under its `$id` (unless another schema reached
 * is known by that URI), and references to the URI it is stored under are rewritten, on copies,
 * to the same fragment of its `$id`. Nothing is copied when none declares another URI.
 */
export function engineView(
  schema: unknown,
  context: Record<string, unknown>,
  rootUri = ROOT_BASE,
): { schema: unknown; context: Record<string, unknown> } {
  const reached = reachableContext(schema, context);
  const claims = new Map<string, string[]>();
  for (const [key, res] of Object.entries(reached)) {
    const id = isPlainObject(res) && typeof res.$id === "string" ? res.$id.split("#")[0] : undefined;
    const doc = key.replace(/#$/, "");
    if (!id || !ABSOLUTE.test(id) || id === doc || id in reached || `${id}#` in reached) continue;
    claims.set(id, [...(claims.get(id) ?? []), doc]);
  }
  const alias = new Map<string, string>();
  for (const [id, docs] of claims) if (new Set(docs).size === 1) alias.set(docs[0]!, id);
  if (alias.size === 0) return { schema, context: reached };
  const out: Record<string, unknown> = { ...reached };
  const rebased = new Map<unknown, { copy: unknown; uri: string }>();
  const copyOf = (key: string) => {
    const res = reached[key];
    let c = rebased.get(res);
    if (!c) {
      c = { copy: structuredClone(res), uri: key.replace(/#$/, "") };
      rebased.set(res, c);
    }
    out[key] = c.copy;
    return c.copy;
  };
  for (const [doc, id] of alias) out[id] = copyOf(doc in reached ? doc : `${doc}#`);
  // References to an aliased URI may sit in any schema reached (the meta-schemas name none).
  for (const [key, res] of Object.entries(reached))
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
