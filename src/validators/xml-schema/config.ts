// Config of `xml_schema`: the schema inline (`schema`) or, for XSD, a stored document as the root
// of a schema set (`schema_uri`); `documents` is the snapshot of the stored XSDs the set reaches,
// written by the server when the step is saved (src/validators/registry.ts pinStepConfig).
import { COMMON_CONFIG_PROPERTIES } from "../shared/common.ts";
import { issue, isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import type { ConfigIssue } from "../types.ts";
import {
  compileSchema,
  externalReference,
  SchemaCompileError,
  type SchemaSource,
  type SchemaType,
  setProblems,
} from "./compile.ts";
import { resolveSchemaSet } from "./documents.ts";

const MAX_SCHEMA_CHARS = 5 * 1024 * 1024;

/** The fields and their types: what the save checks first (the rules between fields follow, worded). */
const fieldsSchema = {
  type: "object",
  required: ["schema_type"],
  properties: {
    schema_type: { enum: ["xsd", "relaxng", "dtd"] },
    schema: {
      type: "string",
      minLength: 1,
      maxLength: MAX_SCHEMA_CHARS,
      description:
        "The schema text itself. An XSD may include or import the organization's stored XSD documents by absolute schemaLocation, or import them by namespace alone.",
    },
    schema_uri: {
      type: "string",
      minLength: 1,
      maxLength: 500,
      description:
        "XSD only, instead of schema: the URI of a stored XSD document (/api/v1/orgs/{org}/schemas/, kind xsd), the root of a schema set.",
    },
    documents: {
      type: "object",
      additionalProperties: { type: "string" },
      description:
        "Written by the server on save: the stored XSD documents the schema reaches, by URI (a snapshot; later edits of the stored documents change only workflows saved afterwards).",
    },
    ...COMMON_CONFIG_PROPERTIES,
  },
  additionalProperties: false,
};

/**
 * The published config schema (GET /api/v1/validators/): the fields, and the rules between them
 * that checkXmlSchemaConfig words for people — exactly one of `schema` and `schema_uri`, and
 * `schema_uri` and `documents` for XSD only — so that a config this schema accepts is one the
 * save accepts, as far as JSON Schema can say it.
 */
export const xmlSchemaConfigSchema = {
  ...fieldsSchema,
  oneOf: [{ required: ["schema"] }, { required: ["schema_uri"] }],
  // For XSD, or without schema_uri and documents (if/then, said without a `then` key: an object
  // with one is a thenable to `await`).
  anyOf: [
    { properties: { schema_type: { const: "xsd" } } },
    { not: { anyOf: [{ required: ["schema_uri"] }, { required: ["documents"] }] } },
  ],
};

export interface XmlSchemaConfig {
  schema_type: SchemaType;
  schema?: string;
  schema_uri?: string;
  documents?: Record<string, string>;
}

export function sourceOf(cfg: XmlSchemaConfig): SchemaSource {
  return {
    type: cfg.schema_type,
    schema: cfg.schema,
    schemaUri: cfg.schema_uri,
    documents: cfg.documents,
  };
}

/** The root of an XSD step's schema set, or null for other steps. */
export function xsdRootOf(config: unknown): { text: string; uri: null } | { uri: string } | null {
  if (!isPlainObject(config) || config.schema_type !== "xsd") return null;
  if (typeof config.schema_uri === "string") return { uri: config.schema_uri };
  if (typeof config.schema === "string") return { text: config.schema, uri: null };
  return null;
}

/** The snapshot to save: the documents the set reaches, from those carried and those stored. */
export function pinXsdDocuments(
  config: Record<string, unknown>,
  stored: Record<string, string> = {},
): Record<string, unknown> {
  const root = xsdRootOf(config);
  if (!root || (config.documents !== undefined && !isStringMap(config.documents))) return config;
  const carried = (config.documents as Record<string, string> | undefined) ?? {};
  const used = resolveSchemaSet(root, { ...carried, ...stored }).used;
  const { documents: _old, ...rest } = config;
  return used.size > 0 ? { ...rest, documents: Object.fromEntries(used) } : rest;
}

const isStringMap = (v: unknown): v is Record<string, string> =>
  isPlainObject(v) && Object.values(v).every((x) => typeof x === "string");

/**
 * Save-time check. `stored`: the organization's XSD documents the set may reach (beyond those the
 * config carries), so that a reference it cannot use is reported with the reason (none stored,
 * or several for one namespace).
 */
export function checkXmlSchemaConfig(config: unknown, stored: Record<string, string> = {}): ConfigIssue[] {
  if (!isPlainObject(config)) return [issue("", "invalid", "must be an object")];
  const shape = shapeIssues(fieldsSchema, config);
  if (shape.length > 0) return shape;
  const cfg = config as unknown as XmlSchemaConfig;
  const which = cfg.schema_uri !== undefined ? "schema_uri" : "schema";
  if (cfg.schema !== undefined && cfg.schema_uri !== undefined)
    return [issue("schema_uri", "conflict", "must not be given together with schema: give one or the other")];
  if (cfg.schema === undefined && cfg.schema_uri === undefined)
    return [issue("schema", "required", "is required (or schema_uri, for a stored XSD)")];
  if (cfg.schema_type !== "xsd" && (cfg.schema_uri !== undefined || cfg.documents !== undefined))
    return [
      issue(
        cfg.schema_uri !== undefined ? "schema_uri" : "documents",
        "invalid",
        `applies to XSD only; a ${cfg.schema_type === "dtd" ? "DTD" : "RelaxNG schema"} is given inline in schema`,
      ),
    ];
  const ext = externalReference(cfg.schema_type, cfg.schema ?? "");
  if (ext)
    return [
      issue(
        "schema",
        "external_reference",
        `has an ${ext}; external documents are never loaded, inline them`,
      ),
    ];
  let unstored: string[] = [];
  if (cfg.schema_type === "xsd") {
    const root = xsdRootOf(cfg)!;
    const available = { ...stored, ...cfg.documents };
    if ("uri" in root && root.uri !== null && !(root.uri in available))
      return [
        issue(
          "schema_uri",
          "unknown_schema",
          `"${root.uri}" is not a stored XSD document of this organization`,
        ),
      ];
    const set = resolveSchemaSet(root, available);
    const unresolved = setProblems(set);
    if (unresolved) return [issue(which, "unresolved_reference", unresolved)];
    unstored = [...set.unstored];
  }
  try {
    // Compiled and freed at once: the API process should not hold wasm memory for schemas.
    compileSchema(sourceOf(cfg), { atSave: true }).dispose();
  } catch (e) {
    const message = e instanceof SchemaCompileError ? e.message : String(e);
    const hint =
      unstored.length > 0
        ? ` (no stored XSD document has the targetNamespace ${unstored.map((n) => `"${n}"`).join(", ")}, imported without a schemaLocation)`
        : "";
    return [
      issue(which, "invalid_schema", `is not a valid ${cfg.schema_type.toUpperCase()}: ${message}${hint}`),
    ];
  }
  return [];
}
