// Which stored schemas a json_schema step needs: follow $ref from the step's schema through the
// available schemas, transitively. The result is the snapshot saved in the step's `resources`, so
// a run executes exactly what was saved and the worker needs no database.
import { isPlainObject } from "../shared/config-shape.ts";
import { DEFAULT_DRAFT, type Draft, DRAFTS, draftFromUri, normalise } from "./drafts.ts";
import { externalRefs } from "./refs.ts";

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
