// From route schemas to clean OpenAPI 3.1 JSON Schema. The schemas in route hooks are TypeBox
// objects (or @elysiajs/openapi's copies of them) and carry what is not JSON Schema: TypeBox's
// `error` messages, Elysia's `nullable`, Elysia's numeric-text branches (t.Integer also takes "5"
// in input), and our marks (./named.ts). This pass drops or rewrites each, and moves every named
// schema to components.schemas, leaving a $ref in its place. Pure: no app, no I/O.
import { DOCUMENTED_AS, SCHEMA_NAME } from "./named.ts";

export type Obj = Record<string, unknown>;

/** The format of a Chars() string: `assay-chars-{min}-{max}`. */
export const CHARS_FORMAT = /^assay-chars-(\d+)-(\d+)$/;

/** Keywords that TypeBox or Elysia add and JSON Schema 2020-12 does not define. */
const DROPPED = new Set(["error", "nullable", "$id"]);
/** Keywords whose value is a map of name → schema. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);
/** Keywords whose value is one schema. */
const SCHEMA_VALUES = new Set([
  "items",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "propertyNames",
]);
/** Elysia's t.Integer / t.Numeric accept numbers written as text through this branch. */
const NUMERIC_TEXT_FORMATS = new Set(["integer", "numeric", "number"]);

export const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);
const refTo = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const copyJson = (v: unknown): unknown => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

export class SchemaRegistry {
  /** components.schemas, filled as named schemas are met. */
  readonly schemas = new Map<string, Obj>();

  /** A clean copy of `node`; named schemas become $refs (with a null branch if made nullable). */
  clean(node: unknown): unknown {
    if (!isObj(node)) return copyJson(node);
    const documented = (node as Record<symbol, unknown>)[DOCUMENTED_AS];
    if (documented) return this.clean(documented);
    const name = (node as Record<symbol, unknown>)[SCHEMA_NAME];
    if (typeof name !== "string") return this.body(node);
    // t.Nullable(Named) reaches us as the named schema with type [T, "null"] (the plugin merges
    // the null branch into it): refer to the schema and add the null branch back.
    const types = node.type;
    const nullable = Array.isArray(types) && types.includes("null");
    const rest = types as string[];
    const plain = nullable
      ? {
          ...node,
          type: rest.length === 2 ? rest.find((t) => t !== "null") : rest.filter((t) => t !== "null"),
        }
      : node;
    this.register(name, this.body(plain));
    return nullable ? { anyOf: [refTo(name), { type: "null" }] } : refTo(name);
  }

  private register(name: string, schema: Obj) {
    const known = this.schemas.get(name);
    if (known && JSON.stringify(known) !== JSON.stringify(schema))
      throw new Error(`OpenAPI: two different schemas are named "${name}"`);
    this.schemas.set(name, schema);
  }

  private body(node: Obj): Obj {
    const out: Obj = {};
    for (const key of Object.keys(node)) {
      const v = node[key];
      if (DROPPED.has(key)) continue;
      if (SCHEMA_MAPS.has(key) && isObj(v))
        out[key] = Object.fromEntries(Object.entries(v).map(([k, s]) => [k, this.clean(s)]));
      else if (SCHEMA_LISTS.has(key) && Array.isArray(v)) out[key] = v.map((s) => this.clean(s));
      else if (SCHEMA_VALUES.has(key) && isObj(v)) out[key] = this.clean(v);
      else out[key] = copyJson(v);
    }
    return simplify(out);
  }

  /** components.schemas, sorted by name. */
  components(): Record<string, Obj> {
    return Object.fromEntries([...this.schemas].sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** Rewrites what Elysia's schemas spell in a way that lints or generates badly. */
export function simplify(s: Obj): Obj {
  let out = s;
  if (Array.isArray(out.anyOf)) {
    let branches = out.anyOf as Obj[];
    const hasNumber = branches.some((b) => b.type === "integer" || b.type === "number");
    if (hasNumber)
      branches = branches.filter(
        (b) => !(b.type === "string" && NUMERIC_TEXT_FORMATS.has(String(b.format ?? ""))),
      );
    const { anyOf: _, ...rest } = out;
    if (branches.length === 1) out = { ...branches[0], ...rest };
    else {
      out = { ...rest, anyOf: branches };
      const [a, b] = branches;
      // anyOf [T, null] with T an inline schema of one type: 3.1 writes that as type [T, "null"].
      if (branches.length === 2 && b?.type === "null" && a && typeof a.type === "string" && !a.$ref) {
        const { anyOf: __, ...wrapper } = out;
        out = { ...a, ...wrapper, type: [a.type, "null"] };
        if (Array.isArray(a.enum)) out.enum = [...a.enum, null];
      }
    }
  }
  // Chars() (src/http/schemas.ts) bounds a length in characters through a format of its own: to a
  // client that is JSON Schema's minLength/maxLength, which count characters too.
  const chars = typeof out.format === "string" ? CHARS_FORMAT.exec(out.format) : null;
  if (chars) {
    const { format: _, ...rest } = out;
    out = {
      ...(Number(chars[1]) > 0 ? { minLength: Number(chars[1]) } : {}),
      maxLength: Number(chars[2]),
      ...rest,
    };
  }
  // t.Record(t.String(), X) is patternProperties {"^(.*)$": X}: every key, i.e. additionalProperties.
  const pp = out.patternProperties;
  if (isObj(pp) && Object.keys(pp).length === 1 && "^(.*)$" in pp && out.additionalProperties === undefined) {
    const { patternProperties: _, ...rest } = out;
    out = { ...rest, additionalProperties: pp["^(.*)$"] };
  }
  return out;
}
