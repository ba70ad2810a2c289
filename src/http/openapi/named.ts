// Marks on route schemas that only the OpenAPI document reads. They are symbol-keyed: TypeBox's
// compiled checks and JSON serialisation ignore them, and @elysiajs/openapi's copies keep them
// (object spread copies enumerable symbols), so src/http/openapi/normalize.ts finds them again.
import type { TSchema } from "@sinclair/typebox";
import type { Problem } from "../../errors.ts";

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
 * service stays the authority). `check` is the service's own check of the field (FieldCheck), for
 * a body the schema refuses. Services count lengths in characters (code points: charCount in
 * src/lib/text.ts), as JSON Schema does, not in UTF-16 code units (String.length).
 */
export function documentedWith<S extends TSchema>(
  schema: S,
  bounds: Record<string, unknown>,
  check?: FieldCheck,
): S {
  documentedAs(schema, { ...schema, ...bounds });
  // After the documented copy, which the check would otherwise ride along in.
  if (check)
    Object.defineProperty(schema, FIELD_CHECK, { value: check, enumerable: true, configurable: true });
  return schema;
}

/** The service's own check of a field whose bounds documentedWith states (FieldCheck). */
export const FIELD_CHECK = Symbol.for("assay.fieldCheck");

/**
 * The problem the service reports for a field's value on its own, or null: the very function the
 * service calls (one source of truth for the item's code and message), pure (no database, no
 * network). `siblings` is the object holding the field, for a check that reads another field
 * (a password must not contain the username); a sibling of the wrong type reads as absent.
 * When the route's schema refuses a body, the error mapping runs these for the fields that are
 * present and passed the schema (src/http/errors.ts, boundItems), so that the 400 lists every
 * problem of the body at once.
 */
export type FieldCheck = (value: never, siblings: Record<string, unknown>) => Problem | null;

export const fieldCheckOf = (schema: unknown): FieldCheck | undefined =>
  schema && typeof schema === "object" ? (schema as Record<symbol, FieldCheck>)[FIELD_CHECK] : undefined;
