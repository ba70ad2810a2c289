// Marks on route schemas that only the OpenAPI document reads. They are symbol-keyed: TypeBox's
// compiled checks and JSON serialisation ignore them, and @elysiajs/openapi's copies keep them
// (object spread copies enumerable symbols), so src/http/openapi/normalize.ts finds them again.
import type { TSchema } from "@sinclair/typebox";

/** The name under components.schemas of a reusable schema. */
export const SCHEMA_NAME = Symbol.for("assay.openapi.name");
/** A JSON Schema to document instead of the validation schema (e.g. integers sent as query text). */
export const DOCUMENTED_AS = Symbol.for("assay.openapi.documentedAs");

/**
 * Names a schema: the document then holds it once, under components.schemas, and refers to it
 * wherever a route uses it (clients generate one type per name). Names are PascalCase and unique;
 * two different schemas under one name make the document build throw (test/openapi.test.ts).
 */
export function named<S extends TSchema>(name: string, schema: S): S {
  Object.defineProperty(schema, SCHEMA_NAME, { value: name, enumerable: true, configurable: true });
  return schema;
}

export const nameOf = (schema: unknown): string | undefined =>
  schema && typeof schema === "object" ? (schema as Record<symbol, string>)[SCHEMA_NAME] : undefined;

/**
 * Validates with `schema` but documents `json`: for query parameters that are validated by hand
 * (page numbers arrive as text) yet are integers to a client.
 */
export function documentedAs<S extends TSchema>(schema: S, json: Record<string, unknown>): S {
  Object.defineProperty(schema, DOCUMENTED_AS, { value: json, enumerable: true, configurable: true });
  return schema;
}

/**
 * Validates with `schema`, documents it with `bounds` added: for limits that a service checks
 * itself, so that every problem of a body is reported together, with the service's message (the
 * service stays the authority). Services count lengths in characters (code points: charCount in
 * src/lib/text.ts), as JSON Schema does, not in UTF-16 code units (String.length).
 */
export function documentedWith<S extends TSchema>(schema: S, bounds: Record<string, unknown>): S {
  return documentedAs(schema, { ...schema, ...bounds });
}
