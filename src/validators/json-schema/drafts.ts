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

/** 2020-12's format-assertion vocabulary meta-schema, which typebox does not ship. */
const FORMAT_ASSERTION_META = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://json-schema.org/draft/2020-12/meta/format-assertion",
  $dynamicAnchor: "meta",
  title: "Format vocabulary meta-schema for assertion results",
  type: ["object", "boolean"],
  properties: { format: { type: "string" } },
};

/**
 * Meta-schemas keyed as typebox expects, with and without the trailing "#", and the vocabulary
 * meta-schemas they embed (…/meta/core, …/meta/applicator …) under their own URIs, so that a
 * custom meta-schema stored by an org can $ref them.
 */
export function metaResources(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [uri, schema] of Object.entries(Schema.Meta)) {
    out[uri] = schema;
    out[uri.replace(/#$/, "")] = schema;
    for (const part of (schema as { allOf?: unknown[] }).allOf ?? []) {
      const id = (part as { $id?: unknown }).$id;
      if (typeof id === "string") out[id] = part;
    }
  }
  out[FORMAT_ASSERTION_META.$id] = FORMAT_ASSERTION_META;
  return out;
}

/** Keywords of each vocabulary of 2019-09 and 2020-12, by the last segment of its URI. */
const VOCABULARY_KEYWORDS: Record<string, string[]> = {
  applicator: [
    "prefixItems",
    "items",
    "contains",
    "additionalProperties",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "propertyNames",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "additionalItems",
  ],
  unevaluated: ["unevaluatedItems", "unevaluatedProperties"],
  validation: [
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
  ],
  content: ["contentEncoding", "contentMediaType", "contentSchema"],
  format: ["format"],
  "format-annotation": ["format"],
  "format-assertion": ["format"],
};
/** Vocabularies Assay implements (core and meta-data have nothing to switch off). */
export const KNOWN_VOCABULARIES = new Set([...Object.keys(VOCABULARY_KEYWORDS), "core", "meta-data"]);

/** The vocabulary's name when `uri` is one of 2019-09's or 2020-12's; undefined otherwise. */
export function vocabularyName(uri: string): string | undefined {
  const m = /^https:\/\/json-schema\.org\/draft\/(?:2019-09|2020-12)\/vocab\/([a-z-]+)$/.exec(uri);
  return m && KNOWN_VOCABULARIES.has(m[1]) ? m[1] : undefined;
}

/** Keywords that no enabled vocabulary defines (2019-09's unevaluated* live in its applicator). */
function disabledKeywords(vocab: ReadonlySet<string>, draft: Draft): string[] {
  const on = new Set<string>();
  for (const v of vocab) for (const k of VOCABULARY_KEYWORDS[v] ?? []) on.add(k);
  if (draft === "2019-09" && vocab.has("applicator"))
    for (const k of VOCABULARY_KEYWORDS.unevaluated) on.add(k);
  return Object.values(VOCABULARY_KEYWORDS)
    .flat()
    .filter((k) => !on.has(k));
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
export const DATA = new Set(["const", "default", "enum", "examples"]);

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
  /** Vocabulary names a custom meta-schema's $vocabulary enables; absent = all of the draft's. */
  vocabularies?: ReadonlySet<string>;
  /** The URI the schema is known by (a stored schema's): its base when it declares no absolute $id. */
  uri?: string;
}

/** Returns a rewritten deep copy of `schema` for typebox. */
export function normalise(schema: unknown, opts: NormaliseOptions): unknown {
  const copy = structuredClone(schema);
  const legacy = opts.draft === "4" || opts.draft === "6" || opts.draft === "7";
  const disabled = opts.vocabularies ? disabledKeywords(opts.vocabularies, opts.draft) : [];
  walkSchemas(copy, (s) => {
    if (!opts.assertFormats) delete s.format;
    for (const key of UNKNOWN[opts.draft]) delete s[key];
    for (const key of disabled) delete s[key];
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
  if (opts.uri && typeof copy === "object" && copy !== null && !Array.isArray(copy)) {
    // A stored schema is retrieved by its URI: that is the base its relative references use
    // (a relative $id resolves against it), as if it had been fetched from there.
    const root = copy as Record<string, unknown>;
    const id = typeof root.$id === "string" ? root.$id : "";
    try {
      if (!id.startsWith("#") && !/^[a-z][a-z0-9+.-]*:/i.test(id)) root.$id = new URL(id, opts.uri).href;
    } catch {
      // an unparsable $id is reported by the reference check
    }
  }
  return copy;
}
