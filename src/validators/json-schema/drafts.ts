// Draft detection and the few rewrites that make typebox (one engine for all drafts) follow the
// semantics of older drafts. Rewrites work on a deep copy; rule locations stay valid because
// keys are only removed or renamed in place, never moved.
import Schema from "typebox/schema";
import { ARRAY, MAP, SINGLE, walkSchemas } from "./walk.ts";

export const DRAFTS = ["4", "6", "7", "2019-09", "2020-12"] as const;
export type Draft = (typeof DRAFTS)[number];
export const DEFAULT_DRAFT: Draft = "2020-12";

export const META_URIS: Record<Draft, string> = {
  "4": "http://json-schema.org/draft-04/schema#",
  "6": "http://json-schema.org/draft-06/schema#",
  "7": "http://json-schema.org/draft-07/schema#",
  "2019-09": "https://json-schema.org/draft/2019-09/schema",
  "2020-12": "https://json-schema.org/draft/2020-12/schema",
};

/** Canonical form for comparing meta-schema URIs: no fragment, no scheme difference. */
function canon(uri: string): string {
  return uri.replace(/#$/, "").replace(/^https?:\/\//, "");
}

export function draftFromUri(uri: string): Draft | undefined {
  return DRAFTS.find((d) => canon(META_URIS[d]) === canon(uri));
}

/** Meta-schemas keyed as typebox expects, with and without the trailing "#". */
export function metaResources(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [uri, schema] of Object.entries(Schema.Meta)) {
    out[uri] = schema;
    out[uri.replace(/#$/, "")] = schema;
  }
  return out;
}

/** Keywords a draft does not define: ignored there, as the spec says unknown keywords are. */
const NEWER = [
  "dependentRequired",
  "dependentSchemas",
  "prefixItems",
  "unevaluatedItems",
  "unevaluatedProperties",
];
const ANCHORS = ["$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor"];
const UNKNOWN: Record<Draft, string[]> = {
  "4": [
    "const",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "minContains",
    "maxContains",
    "contentSchema",
    ...NEWER,
    ...ANCHORS,
  ],
  "6": ["if", "then", "else", "minContains", "maxContains", "contentSchema", ...NEWER, ...ANCHORS],
  "7": ["minContains", "maxContains", "contentSchema", ...NEWER, ...ANCHORS],
  "2019-09": ["prefixItems", "$dynamicRef", "$dynamicAnchor"],
  "2020-12": ["$recursiveRef", "$recursiveAnchor"],
};

/** Values that are data, not schemas: an "$id" in them is just a string and stays untouched. */
const DATA = new Set(["const", "default", "enum", "examples"]);

/**
 * An $id under an unknown keyword does not identify anything, but typebox indexes every $id it
 * finds; renaming it there keeps $ref from landing on it. Pointers into the subtree still work.
 */
function hideIdentifiers(value: unknown): void {
  if (Array.isArray(value)) value.forEach(hideIdentifiers);
  else if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>;
    for (const key of ["$id", "$anchor", "$dynamicAnchor"]) {
      if (key in o) {
        o[`x-ignored-${key}`] = o[key];
        delete o[key];
      }
    }
    Object.values(o).forEach(hideIdentifiers);
  }
}

export interface NormaliseOptions {
  draft: Draft;
  assertFormats: boolean;
}

/** Returns a rewritten deep copy of `schema` for typebox. */
export function normalise(schema: unknown, opts: NormaliseOptions): unknown {
  const copy = structuredClone(schema);
  const legacy = opts.draft === "4" || opts.draft === "6" || opts.draft === "7";
  walkSchemas(copy, (s) => {
    if (!opts.assertFormats) delete s.format;
    for (const key of UNKNOWN[opts.draft]) delete s[key];
    for (const [key, value] of Object.entries(s)) {
      if (!SINGLE.has(key) && !ARRAY.has(key) && !MAP.has(key) && !DATA.has(key)) hideIdentifiers(value);
    }
    if (opts.draft === "4") {
      // Draft 4 spells $id as `id`, and exclusiveMaximum/Minimum are booleans on maximum/minimum.
      if (typeof s.id === "string" && s.$id === undefined) {
        s.$id = s.id;
        delete s.id;
      }
      for (const [ex, bound] of [
        ["exclusiveMaximum", "maximum"],
        ["exclusiveMinimum", "minimum"],
      ] as const) {
        if (s[ex] === true && typeof s[bound] === "number") {
          s[ex] = s[bound];
          delete s[bound];
        } else if (s[ex] === false) delete s[ex];
      }
    }
    // Up to draft 7, every keyword beside $ref is ignored (definitions stay addressable by pointer).
    if (legacy && typeof s.$ref === "string") {
      for (const key of Object.keys(s)) {
        if (key !== "$ref" && key !== "definitions" && key !== "$defs") delete s[key];
      }
    }
  });
  return copy;
}
