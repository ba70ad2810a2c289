// XSD schema sets: documents that include or import each other. Nothing is ever fetched: the
// documents are the organization's stored XSDs (src/schemas/), pinned into the step config when
// it is saved. A reference resolves by its schemaLocation (relative to the referencing document's
// URI) when that names a stored document, else — for an import — by namespace, to the one stored
// document with that targetNamespace. libxml2 reads the set through an input provider that serves
// only these documents, so no schema can reach the file system or the network.
import type { XmlDocument, XmlElement } from "libxml2-wasm";
import { libxml } from "../shared/libxml.ts";
import { xmlParseOptions } from "../shared/xml.ts";

export const XSD_NS = "http://www.w3.org/2001/XMLSchema";
/** xs:integer and the built-in types derived from it (facets.ts, fixed-values.ts). */
export const INTEGERS = new Set([
  "integer",
  "nonPositiveInteger",
  "negativeInteger",
  "long",
  "int",
  "short",
  "byte",
  "nonNegativeInteger",
  "unsignedLong",
  "unsignedInt",
  "unsignedShort",
  "unsignedByte",
  "positiveInteger",
]);
const REFERENCES = new Set(["include", "import", "redefine", "override"]);
/** Bounds the documents one schema set may pull in (UBL 2.1's invoice needs 14). */
export const MAX_SET_DOCUMENTS = 500;

export interface Reference {
  kind: "include" | "import" | "redefine" | "override";
  /** The schemaLocation as written, and resolved against the document's URI (null if neither). */
  location: string | null;
  resolved: string | null;
  /** For imports: the namespace attribute ("" when absent: a no-namespace import). */
  namespace: string | null;
  line: number;
  element: XmlElement;
}

/** Parses an XSD document (the caller disposes it); throws libxml2's parse error. */
export function parseXsd(text: string, uri: string | null): XmlDocument {
  return libxml().XmlDocument.fromString(text, {
    ...(uri ? { url: uri } : {}),
    option: xmlParseOptions(),
  });
}

export function isXsdRoot(doc: XmlDocument): boolean {
  return doc.root.name === "schema" && doc.root.namespaceUri === XSD_NS;
}

export function targetNamespaceOf(doc: XmlDocument): string {
  return doc.root.attr("targetNamespace")?.value ?? "";
}

/** Resolves a URI reference against a base; null when it is not absolute afterwards. */
export function resolveUri(ref: string, base: string | null): string | null {
  try {
    return new URL(ref.trim(), base ?? undefined).href;
  } catch {
    return null;
  }
}

/** The include/import/redefine/override children of a schema document, in document order. */
export function referencesOf(doc: XmlDocument, base: string | null): Reference[] {
  const out: Reference[] = [];
  for (let n = doc.root.firstChild; n; n = n.next) {
    const el = n as XmlElement;
    if (!(el instanceof libxml().XmlElement) || el.namespaceUri !== XSD_NS || !REFERENCES.has(el.name))
      continue;
    const location = el.attr("schemaLocation")?.value ?? null;
    out.push({
      kind: el.name as Reference["kind"],
      location,
      resolved: location === null ? null : resolveUri(location, base),
      namespace: el.name === "import" ? (el.attr("namespace")?.value ?? "") : null,
      line: el.line,
      element: el,
    });
  }
  return out;
}

export interface SetProblem {
  /** The document holding the reference (null: the step's inline schema). */
  document: string | null;
  line: number;
  message: string;
}

export interface SchemaSet {
  /** URI → the stored document's text, for every document the root reaches. */
  used: Map<string, string>;
  /**
   * Per document (null: an inline root), the schemaLocation to write into a reference (by its
   * index in referencesOf order) that resolves otherwise than libxml2 would read it.
   */
  locations: Map<string | null, Map<number, string>>;
  problems: SetProblem[];
  /** What the documents at hand could not answer: URIs and namespaces to look up in the store. */
  wanted: { uris: Set<string>; namespaces: Set<string> };
  /** Namespaces imported without a location that no available document declares. */
  unstored: Set<string>;
}

type Available = Record<string, string>;

/**
 * Walks the references from the root through the available documents. Pure over its inputs:
 * the save-time check, the snapshot and the worker's compile all call it on the same documents.
 */
export function resolveSchemaSet(
  root: { text: string; uri: string | null } | { uri: string },
  available: Available,
): SchemaSet {
  const set: SchemaSet = {
    used: new Map(),
    locations: new Map(),
    problems: [],
    wanted: { uris: new Set(), namespaces: new Set() },
    unstored: new Set(),
  };
  const byNamespace = namespaceIndex(available);
  const queue: Array<{ uri: string | null; text: string }> = [];
  if ("text" in root) queue.push({ uri: root.uri, text: root.text });
  else if (root.uri in available) {
    set.used.set(root.uri, available[root.uri]!);
    queue.push({ uri: root.uri, text: available[root.uri]! });
  } else {
    set.wanted.uris.add(root.uri);
    set.problems.push({ document: null, line: 0, message: `"${root.uri}" is not a stored XSD document` });
  }
  while (queue.length > 0) {
    const { uri, text } = queue.shift()!;
    let doc: XmlDocument;
    try {
      doc = parseXsd(text, uri);
    } catch {
      continue; // reported by whoever stored or wrote it; libxml2 says more when compiling
    }
    try {
      const at = new Map<number, string>();
      referencesOf(doc, uri).forEach((ref, index) => {
        const target = resolveReference(ref, uri, available, byNamespace, set);
        if (!target) return;
        if (target !== ref.resolved) at.set(index, target);
        if (!set.used.has(target)) {
          if (set.used.size >= MAX_SET_DOCUMENTS) {
            set.problems.push({
              document: uri,
              line: ref.line,
              message: `a schema set may hold at most ${MAX_SET_DOCUMENTS} documents`,
            });
            return;
          }
          set.used.set(target, available[target]!);
          queue.push({ uri: target, text: available[target]! });
        }
      });
      if (at.size > 0) set.locations.set(uri, at);
    } finally {
      doc.dispose();
    }
  }
  return set;
}

function resolveReference(
  ref: Reference,
  from: string | null,
  available: Available,
  byNamespace: Map<string, string[]>,
  set: SchemaSet,
): string | null {
  const problem = (message: string) => {
    set.problems.push({ document: from, line: ref.line, message });
    return null;
  };
  if (ref.resolved && ref.resolved in available) return ref.resolved;
  if (ref.resolved) set.wanted.uris.add(ref.resolved);
  if (ref.location !== null && !ref.resolved)
    return problem(
      `${ref.kind} of "${ref.location}": a relative schemaLocation needs a document with a URI; use the absolute URI of a stored document`,
    );
  if (ref.kind !== "import") {
    return problem(
      ref.location === null
        ? `${ref.kind} without schemaLocation`
        : `${ref.kind} of "${ref.resolved}", which is not a stored XSD document`,
    );
  }
  const ns = ref.namespace ?? "";
  const candidates = byNamespace.get(ns) ?? [];
  if (candidates.length === 1) return candidates[0]!;
  set.wanted.namespaces.add(ns);
  const where = ref.location === null ? "" : ` ("${ref.resolved}" is not stored)`;
  // An import without a location is only a hint (XML Schema 1.0 §4.2.3): with nothing stored for
  // its namespace it stays libxml2's to judge, which fails the compile only if a component of that
  // namespace is used (then the message says what is missing: set.unstored).
  if (candidates.length === 0 && ref.location === null) {
    set.unstored.add(ns);
    return null;
  }
  if (candidates.length === 0)
    return problem(`import of namespace "${ns}"${where}: no stored XSD document has this targetNamespace`);
  return problem(
    `import of namespace "${ns}"${where}: ${candidates.length} stored XSD documents have this targetNamespace (${candidates.join(", ")}); name one by its schemaLocation`,
  );
}

/** targetNamespace → URIs of the available documents declaring it (sorted, for stable messages). */
function namespaceIndex(available: Available): Map<string, string[]> {
  const index = new Map<string, string[]>();
  for (const [uri, text] of Object.entries(available)) {
    const ns = declaredTargetNamespace(text);
    if (ns === null) continue;
    index.set(ns, [...(index.get(ns) ?? []), uri].sort());
  }
  return index;
}

// The root start tag after the prolog (XML declaration, comments, PIs, a doctype).
const ROOT_TAG =
  /^\uFEFF?(?:\s+|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>)*<([\w.-]+:)?schema\b([^>]*)>/;
const TARGET_NS = /\btargetNamespace\s*=\s*(?:"([^"]*)"|'([^']*)')/;

/**
 * The targetNamespace on an XSD document's root start tag ("" without one), or null when the
 * root is not a schema element; read from the text, as documents are large (UBL's aggregate
 * components are 2.4 MB) and the store checked at storing time that the root is xs:schema.
 */
export function declaredTargetNamespace(text: string): string | null {
  const root = ROOT_TAG.exec(text);
  if (!root) return null;
  const ns = TARGET_NS.exec(root[2] ?? "");
  return ns ? (ns[1] ?? ns[2] ?? "") : "";
}
