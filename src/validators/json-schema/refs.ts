// Save-time check that every $ref can be resolved WITHOUT the network: to the schema itself, an
// embedded resource ($id), a meta-schema, or a registered resource (the org's stored schemas).
// typebox would silently treat an unresolvable reference as `false`; we refuse it at save time.
import type { AnchorRef } from "./anchors.ts";
import { DATA, type Draft } from "./drafts.ts";
import { ARRAY, MAP, SINGLE, walkSchemas } from "./walk.ts";

/** Base for a root without $id: hierarchical, so relative $ids/$refs resolve like URLs do. */
export const ROOT_BASE = "https://assay.invalid/schema.json";

interface Resource {
  node: unknown;
  anchors: Set<string>;
  /** The schema object each anchor names (the first declaration); made at the first anchor. */
  anchorNodes?: Map<string, Record<string, unknown>>;
}

function addAnchor(doc: Resource | undefined, name: string, s: Record<string, unknown>): void {
  if (!doc) return;
  doc.anchors.add(name);
  doc.anchorNodes ??= new Map();
  if (!doc.anchorNodes.has(name)) doc.anchorNodes.set(name, s);
}

function stripHash(u: URL): string {
  return u.href.split("#")[0];
}

function pointerGet(node: unknown, pointer: string): boolean {
  let cur = node;
  for (const raw of pointer.split("/").slice(1)) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (typeof cur !== "object" || cur === null || !Object.hasOwn(cur, seg)) return false;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return true;
}

/**
 * typebox's JSON Pointer refuses these keys (its guard against prototype pollution) and resolves
 * the reference to nothing, i.e. the schema `false`: `"$ref": "#/$defs/constructor"` was saved
 * and then failed every document with "no value is allowed here".
 */
const UNFOLLOWABLE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

function unfollowableKey(pointer: string): string | undefined {
  return pointer
    .split("/")
    .slice(1)
    .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"))
    .find((seg) => UNFOLLOWABLE_KEYS.has(seg));
}

function resolveUrl(ref: string, base: string): URL | null {
  try {
    return new URL(ref, base);
  } catch {
    return null;
  }
}

interface FoundRef {
  ref: string;
  base: string;
  at: string;
  /** The schema object holding it, and under which key (`$ref`, `$dynamicRef`). */
  owner: Record<string, unknown>;
  key: string;
}

interface Scan {
  docs: Map<string, Resource>;
  refs: FoundRef[];
}

/** The resources a schema embeds ($id) and every reference in it with its base URI. */
function scan(schema: unknown, rootUri: string): Scan {
  // The schema is already normalised: draft 4's `id` has become `$id`.
  const idKey = "$id";
  const docs = new Map<string, Resource>();
  const bases = new Map<object, string>();
  const refs: FoundRef[] = [];
  const rootId = typeof (schema as Record<string, unknown>)?.[idKey] === "string";
  const rootBase = rootId
    ? (resolveUrl((schema as Record<string, string>)[idKey], rootUri)?.href ?? rootUri)
    : rootUri;
  docs.set(rootBase.split("#")[0], { node: schema, anchors: new Set() });

  // Pass 1: base URI of every schema object (parents are visited before children), resources, anchors.
  walkSchemas(schema, (s, pointer, parent) => {
    // The nearest schema around this one has its base already (the walk is pre-order). Read back
    // from the root by the pointer it cost depth × pointer length a schema: quadratic, and 40,000
    // leaves under 100 levels of 5,000-character keys (1 MB) held the HTTP thread 230 s.
    let base = parent === undefined ? rootBase : (bases.get(parent) ?? rootBase);
    let doc = docs.get(base.split("#")[0]);
    const id = s[idKey];
    if (typeof id === "string" && pointer !== "") {
      const u = resolveUrl(id, base);
      if (u && id.startsWith("#")) addAnchor(doc, decodeURIComponent(u.hash.slice(1)), s);
      else if (u) {
        base = stripHash(u);
        doc = { node: s, anchors: new Set() };
        docs.set(base, doc);
      }
    }
    for (const key of ["$anchor", "$dynamicAnchor"])
      if (typeof s[key] === "string") addAnchor(doc, s[key] as string, s);
    bases.set(s, base);
    for (const key of ["$ref", "$dynamicRef"]) {
      if (typeof s[key] === "string")
        refs.push({ ref: s[key] as string, base, at: `#${pointer}`, owner: s, key });
    }
  });
  return { docs, refs };
}

/**
 * Absolute URIs (without fragment) that a normalised schema references outside itself: what a
 * registry of stored schemas must supply. `rootUri` is the URI the schema is known by.
 */
export function externalRefs(schema: unknown, rootUri = ROOT_BASE): string[] {
  return refSummary(schema, rootUri).external;
}

/**
 * externalRefs, and whether a reference names a JSON Pointer of a document by URI (`other.json#/a`,
 * `sub/#/a`; not a bare `#/a`): what the engine needs named for it (resources.ts, pinPointerRefs).
 */
export function refSummary(
  schema: unknown,
  rootUri = ROOT_BASE,
): { external: string[]; pointerByUri: boolean } {
  const { docs, refs } = scan(schema, rootUri);
  const out = new Set<string>();
  let pointerByUri = false;
  for (const { ref, base } of refs) {
    const target = resolveUrl(ref, base);
    if (target && !docs.has(stripHash(target))) out.add(stripHash(target));
    pointerByUri ||= !ref.startsWith("#") && !!target?.hash.startsWith("#/");
  }
  return { external: [...out], pointerByUri };
}

/**
 * Rewrites in place each reference of a normalised schema whose document is a key of `alias` to
 * the same fragment of the document it maps to. `rootUri`: the URI the schema is known by.
 */
export function rebaseRefs(schema: unknown, alias: ReadonlyMap<string, string>, rootUri = ROOT_BASE): void {
  for (const { ref, base, owner, key } of scan(schema, rootUri).refs) {
    const target = resolveUrl(ref, base);
    const to = target && alias.get(stripHash(target));
    if (to !== undefined && target) owner[key] = `${to}${target.hash || ""}`;
  }
}

/** Where a normalised schema's references are based: its root's base, and the resources it embeds. */
export interface Bases {
  /** The base of the root (its `$id` resolved against the URI it is known by), without fragment. */
  root: string;
  /** The resources it embeds below its root (a subschema's `$id` that moves the base), by absolute URI. */
  embedded: Map<string, Record<string, unknown>>;
}

/** The bases of a normalised schema (see Bases). `rootUri`: the URI the schema is known by. */
export function basesOf(schema: unknown, rootUri = ROOT_BASE): Bases {
  const { docs } = scan(schema, rootUri);
  const root = docs.keys().next().value as string;
  const embedded = new Map<string, Record<string, unknown>>();
  for (const [uri, { node }] of docs)
    if (node !== schema && uri !== root) embedded.set(uri, node as Record<string, unknown>);
  return { root, embedded };
}

/**
 * The schema object a fragment of a resource names, and the innermost resource holding it with
 * the rest of the fragment (`#/…` below that resource, `#name`, or "" for the resource itself).
 */
function locate(
  docs: Map<string, Resource>,
  doc: string,
  hash: string,
): { node: unknown; uri: string; fragment: string } | undefined {
  const res = docs.get(doc)!;
  if (hash === "" || hash === "#") return { node: res.node, uri: doc, fragment: "" };
  if (!hash.startsWith("#/")) {
    let name: string;
    try {
      name = decodeURIComponent(hash.slice(1));
    } catch {
      return undefined;
    }
    const node = res.anchorNodes?.get(name);
    return node && { node, uri: doc, fragment: hash };
  }
  const resources = new Map<unknown, string>();
  for (const [uri, r] of docs) resources.set(r.node, uri);
  const segs = pointerSegments(hash);
  if (!segs) return undefined;
  let node = res.node;
  let uri = doc;
  let rest: string[] = [];
  for (const [token, seg] of segs) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, seg)) return undefined;
    node = (node as Record<string, unknown>)[seg];
    rest.push(token);
    const inner = resources.get(node);
    if (inner !== undefined) {
      uri = inner;
      rest = [];
    }
  }
  return { node, uri, fragment: rest.length > 0 ? `#/${rest.join("/")}` : "" };
}

/**
 * Rewrites in place the identifiers and references of a normalised schema whose meaning hangs on
 * a base the engine does not track (resources.ts, engineView) to the absolute URIs they stand for:
 * each embedded resource's `$id`, and each `$ref` but a JSON Pointer (`#`, `#/…`) of the root
 * resource, which the engine finds from the root whatever its base. A `$ref` to a place in this
 * schema names it from the innermost resource holding it, and the root resource as `route` from
 * inside an embedded one (the engine searches below the innermost `$id` only, and its pointer
 * search tries the pointer from every subschema on the way, so a `#/$defs/a` of the wrong resource
 * could answer): the result maps each such reference, as rewritten, to the schema object it names,
 * for the engine to find by name. `$dynamicRef`s are left: they resolve against the lexical base,
 * which the engine tracks. `rootUri`: the URI the schema is known by.
 */
export function absolutiseRefs(schema: unknown, rootUri: string, route: string): Map<string, unknown> {
  const { docs, refs } = scan(schema, rootUri);
  const rootDoc = docs.keys().next().value as string;
  const named = new Map<string, unknown>();
  for (const [uri, { node }] of docs)
    if (node !== schema && uri !== rootDoc) (node as Record<string, unknown>).$id = uri;
  for (const { ref, base, owner, key } of refs) {
    const inRoot = base.split("#")[0] === rootDoc;
    if (key !== "$ref" || (inRoot && (ref === "#" || ref.startsWith("#/")))) continue;
    const target = resolveUrl(ref, base);
    if (!target) continue;
    const doc = stripHash(target);
    const place = docs.has(doc) ? locate(docs, doc, target.hash) : undefined;
    if (!place) {
      owner[key] = target.href;
      continue;
    }
    const uri = place.uri === rootDoc && !inRoot ? route : place.uri;
    owner[key] = `${uri}${place.fragment}`;
    if (place.fragment !== "" || uri === route) named.set(owner[key] as string, place.node);
  }
  return named;
}

/** A JSON Pointer fragment's tokens (`#/…`) as written and decoded; undefined when one is not. */
function pointerSegments(hash: string): [string, string][] | undefined {
  const out: [string, string][] = [];
  for (const token of hash.slice(2).split("/")) {
    try {
      out.push([token, decodeURIComponent(token).replace(/~1/g, "/").replace(/~0/g, "~")]);
    } catch {
      return undefined;
    }
  }
  return out;
}

/** The value at a JSON Pointer fragment (`#/…`, percent-encoded) below `node`; undefined when none. */
function valueAt(node: unknown, hash: string): unknown {
  const segs = pointerSegments(hash);
  if (!segs) return undefined;
  let cur = node;
  for (const [, seg] of segs) {
    if (typeof cur !== "object" || cur === null || !Object.hasOwn(cur, seg)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

/** A reference of a normalised schema as written, with the absolute URI it resolves to. */
export interface WrittenRef {
  /** The reference's text, which the engine looks up in its context before any search. */
  text: string;
  href: string;
  /** The schema object holding it, and under which key (`$ref`, `$dynamicRef`). */
  owner: Record<string, unknown>;
  key: string;
  /**
   * For a `$ref` to a JSON Pointer of a document named by URI (not a bare `#/…`): the document,
   * and the schema it points to when the document is a resource of this schema (root or embedded).
   */
  pointer?: { doc: string; hash: string; local: unknown };
}

/**
 * Every reference of a normalised schema, resolved as the save-time checks resolve it. typebox
 * looks a reference's text up in its context first; failing that, it tries the JSON Pointer from
 * every subschema on its way, the referring schema's own first, whatever document the reference
 * names: `other.json#/$defs/a` was answered by the referring schema's `#/$defs/a` when it had
 * one (resources.ts, pinPointerRefs). `rootUri`: the URI the schema is known by.
 */
export function writtenRefs(schema: unknown, rootUri = ROOT_BASE): WrittenRef[] {
  const { docs, refs } = scan(schema, rootUri);
  const out: WrittenRef[] = [];
  for (const { ref, base, owner, key } of refs) {
    const target = resolveUrl(ref, base);
    if (!target) continue;
    const written: WrittenRef = { text: ref, href: target.href, owner, key };
    if (key === "$ref" && !ref.startsWith("#") && target.hash.startsWith("#/")) {
      const doc = stripHash(target);
      const res = docs.get(doc);
      written.pointer = { doc, hash: target.hash, local: res ? valueAt(res.node, target.hash) : undefined };
    }
    out.push(written);
  }
  return out;
}

/** The schema at a JSON Pointer fragment (`#/…`) of a document; undefined when there is none. */
export function schemaAt(doc: unknown, hash: string): unknown {
  const v = valueAt(doc, hash);
  return typeof v === "object" || typeof v === "boolean" ? (v ?? undefined) : undefined;
}

/** A reference into a JSON Pointer of another document: `doc` without fragment, `pointer` decoded. */
export interface PointerRef {
  ref: string;
  at: string;
  doc: string;
  pointer: string;
}

/**
 * The references a normalised schema makes to a non-empty JSON Pointer of a document outside
 * itself (another stored schema): the meta-validation of that document did not reach what they
 * point to when it sits under an unknown keyword (subschemas.ts, foreignSubschemaErrors).
 */
export function foreignPointerRefs(schema: unknown, rootUri = ROOT_BASE): PointerRef[] {
  const { docs, refs } = scan(schema, rootUri);
  const out: PointerRef[] = [];
  for (const { ref, base, at } of refs) {
    const target = resolveUrl(ref, base);
    if (!target || docs.has(stripHash(target)) || !target.hash.startsWith("#/")) continue;
    try {
      out.push({ ref, at, doc: stripHash(target), pointer: decodeURIComponent(target.hash.slice(1)) });
    } catch {
      // not a URI reference: the reference check names it
    }
  }
  return out;
}

/** The references a normalised schema makes to an anchor of another stored schema (anchors.ts). */
export function foreignAnchorRefs(schema: unknown, rootUri = ROOT_BASE): AnchorRef[] {
  const { docs, refs } = scan(schema, rootUri);
  const out: AnchorRef[] = [];
  for (const { ref, base, at } of refs) {
    const target = resolveUrl(ref, base);
    if (!target || docs.has(stripHash(target)) || target.hash.length < 2 || target.hash.startsWith("#/"))
      continue;
    try {
      out.push({ ref, at, doc: stripHash(target), anchor: decodeURIComponent(target.hash.slice(1)) });
    } catch {
      // not a URI reference: the reference check names it
    }
  }
  return out;
}

const rootAnchors = new WeakMap<object, Set<string>>();

/**
 * The anchors the root resource of a normalised document declares where the engine finds them
 * (schema locations: drafts.ts hides those under unknown keywords). `uri`: the document's URI.
 */
export function documentAnchors(doc: unknown, uri: string): Set<string> {
  if (typeof doc !== "object" || doc === null) return new Set();
  let anchors = rootAnchors.get(doc);
  if (!anchors) {
    anchors = scan(doc, uri).docs.values().next().value?.anchors ?? new Set<string>();
    rootAnchors.set(doc, anchors);
  }
  return anchors;
}

/** Where a normalised schema keeps a draft's anchor under an unknown keyword (drafts.ts, hideIdentifiers). */
const HIDDEN_ANCHORS: Record<Draft, Array<{ key: string; hash: boolean }>> = {
  "4": [{ key: "id", hash: true }], // draft 4's `id` is left as it is there, and the engine reads no `id`
  "6": [{ key: "x-ignored-$id", hash: true }],
  "7": [{ key: "x-ignored-$id", hash: true }],
  "2019-09": [{ key: "x-ignored-$anchor", hash: false }],
  "2020-12": [
    { key: "x-ignored-$anchor", hash: false },
    { key: "x-ignored-$dynamicAnchor", hash: false },
  ],
};

/** An anchor declared where no schema is: `at` its declaration, `keyword` the unknown keyword above it. */
interface HiddenAnchor {
  at: string;
  keyword: string;
}

const esc = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

function declared(value: unknown, hash: boolean): string | undefined {
  if (typeof value !== "string") return undefined;
  if (!hash) return value;
  if (!value.startsWith("#")) return undefined;
  try {
    return decodeURIComponent(value.slice(1));
  } catch {
    return undefined;
  }
}

/**
 * Each anchor name `doc` (normalised, in `draft`) declares only under an unknown keyword, where
 * what it holds is not a schema, with the first such declaration. One walk, iterative below the
 * schema locations: data there may nest deeper than the stack allows.
 */
function hiddenAnchors(doc: unknown, draft: Draft): Map<string, HiddenAnchor> {
  const found = new Map<string, HiddenAnchor>();
  const spellings = HIDDEN_ANCHORS[draft];
  walkSchemas(doc, (s, pointer) => {
    for (const [keyword, value] of Object.entries(s)) {
      if (SINGLE.has(keyword) || ARRAY.has(keyword) || MAP.has(keyword) || DATA.has(keyword)) continue;
      const stack: Array<[unknown, string]> = [[value, `${pointer}/${esc(keyword)}`]];
      while (stack.length > 0) {
        const [v, at] = stack.pop()!;
        if (typeof v !== "object" || v === null) continue;
        if (!Array.isArray(v))
          for (const { key, hash } of spellings) {
            const name = declared((v as Record<string, unknown>)[key], hash);
            if (name !== undefined && !found.has(name))
              found.set(name, { at: `${at}/${esc(key.replace(/^x-ignored-/, ""))}`, keyword });
          }
        for (const [k, c] of Object.entries(v)) stack.push([c, `${at}/${esc(k)}`]);
      }
    }
  });
  return found;
}

/** What the spec of each draft that says so says of a reference into an unknown keyword. */
const NON_SCHEMAS: Partial<Record<Draft, string>> = {
  "2019-09": "JSON Schema 2019-09 Core §8.2.4.4",
  "2020-12": "JSON Schema 2020-12 Core §9.4.2",
};

function hiddenAnchorMessage(
  ref: string,
  at: string,
  name: string,
  where: string,
  h: HiddenAnchor,
  draft: Draft,
) {
  const spec = NON_SCHEMAS[draft];
  const defs = draft === "2019-09" || draft === "2020-12" ? "$defs" : "definitions";
  return (
    `$ref "${ref}" at ${at} names an anchor "${name}" that is declared only at ${where}${h.at}, under ` +
    `"${h.keyword}", a keyword draft ${draft} does not define: what an unknown keyword holds is not a ` +
    `schema, so that anchor identifies nothing${spec ? ` (${spec}: a reference into it is undefined)` : ""}; ` +
    `declare the anchor in a schema, under ${defs} for instance`
  );
}

/** The drafts the anchor check reads documents in, for a precise message. */
export interface RefDrafts {
  /** The draft of the schema checked. */
  draft: Draft;
  /** The draft of another document (a stored schema) by its URI. */
  draftOf: (uri: string) => Draft;
}

/**
 * Messages for each unresolvable reference in a normalised schema. `resources` maps absolute URIs to schemas that may
 * be referenced (meta-schemas, registered schemas); `rootUri` is the URI the schema is known by.
 */
export function unresolvableRefs(
  schema: unknown,
  resources: Record<string, unknown>,
  rootUri = ROOT_BASE,
  drafts?: RefDrafts,
): string[] {
  const { docs, refs } = scan(schema, rootUri);
  const rootDoc = docs.keys().next().value;
  const hidden = new Map<unknown, Map<string, HiddenAnchor>>();
  const problems: string[] = [];
  for (const { ref, base, at } of refs) {
    const target = resolveUrl(ref, base);
    if (!target) {
      problems.push(`$ref "${ref}" at ${at} is not a valid URI reference`);
      continue;
    }
    const docUri = stripHash(target);
    const fragment = decodeURIComponent(target.hash.slice(1));
    const local = docs.get(docUri);
    const external = resources[docUri] ?? resources[`${docUri}#`];
    if (!local && external === undefined) {
      problems.push(
        `$ref "${ref}" at ${at} points to ${docUri}, which is neither part of this schema nor ` +
          "stored by the organization; remote schemas are never fetched: inline it under $defs " +
          "or store it (POST /api/v1/orgs/{org_slug}/schemas/)",
      );
      continue;
    }
    const unsafe = fragment.startsWith("/") ? unfollowableKey(fragment) : undefined;
    if (fragment.startsWith("/") && !pointerGet(local ? local.node : external, fragment)) {
      problems.push(`$ref "${ref}" at ${at} points to nothing (no value at ${fragment})`);
    } else if (unsafe !== undefined) {
      problems.push(
        `$ref "${ref}" at ${at} goes through the key "${unsafe}", which the engine never follows ` +
          "(__proto__, constructor, prototype): every document would fail it; put that schema under " +
          "$defs with another name and refer to it there",
      );
    } else if (fragment !== "" && !fragment.startsWith("/")) {
      // An anchor of another stored schema must exist too: the engine reads a missing one as
      // `false`, and every document failed the step (until 2026-11-29).
      const node = local ? local.node : external;
      if ((local ? local.anchors : documentAnchors(external, docUri)).has(fragment)) continue;
      const draft = drafts && (local ? drafts.draft : drafts.draftOf(docUri));
      let inDoc = draft && hidden.get(node);
      if (draft && !inDoc) {
        inDoc = hiddenAnchors(node, draft);
        hidden.set(node, inDoc);
      }
      const h = inDoc?.get(fragment);
      const where = local && docUri === rootDoc ? "#" : `${docUri}#`;
      if (h && draft) problems.push(hiddenAnchorMessage(ref, at, fragment, where, h, draft));
      else if (local)
        problems.push(`$ref "${ref}" at ${at} names an anchor "${fragment}" that is not defined`);
      else
        problems.push(`$ref "${ref}" at ${at} names an anchor "${fragment}" that ${docUri} does not define`);
    }
  }
  return problems;
}
