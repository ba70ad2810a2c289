// Compiling XSD / RelaxNG / DTD with libxml2-wasm. Compiled schemas live in wasm memory: they are
// cached per worker (bounded, least recently used is disposed) and shared by every run of the
// same config. An XSD may include and import the organization's stored XSD documents pinned in the
// step config (documents.ts); RelaxNG and DTD references are refused at save time.
import { createHash } from "node:crypto";
import type { XmlDocument } from "libxml2-wasm";
import { libxml, serveWhile } from "../shared/libxml.ts";
import { xmlParseOptions } from "../shared/xml.ts";
import { facetProblem } from "./facets.ts";
import { dataParamProblem } from "./relaxng-params.ts";
import { XSD_NS, parseXsd, referencesOf, resolveSchemaSet, resolveUri, type SchemaSet } from "./documents.ts";

export type SchemaType = "xsd" | "relaxng" | "dtd";

/** What a step compiles: the inline schema or a stored root, and the pinned documents. */
export interface SchemaSource {
  type: SchemaType;
  schema?: string;
  schemaUri?: string;
  documents?: Record<string, string>;
}

export interface CompiledSchema {
  validate(doc: XmlDocument): void;
  dispose(): void;
}

export class SchemaCompileError extends Error {}

const RELAXNG_NS = "http://relaxng.org/ns/structure/1.0";
/** A DTD's external parameter entities (any name: a regex on names let `é` through). */
const DTD_EXTERNAL = /<!ENTITY\s+%\s*[^\s"'>]+\s+(SYSTEM|PUBLIC)\s+["']([^"']*)/;

/**
 * The first reference to another document in a RelaxNG schema or DTD, which we never load: said
 * at save, so the author is told to inline it. RelaxNG is read as XML, not matched as text (an
 * attribute `f:x=">"` before href, or a non-ASCII prefix, hid one from a regex); the loader
 * refuses every load anyway (shared/libxml.ts), this is the message. Null for XSD, and for a
 * RelaxNG schema that does not parse (the compile reports that).
 */
export function externalReference(type: SchemaType, schema: string): string | null {
  if (type === "xsd") return null;
  if (type === "dtd") {
    const m = DTD_EXTERNAL.exec(schema);
    return m ? `${m[1]} of "${m[2]}"` : null;
  }
  let doc: XmlDocument;
  try {
    doc = libxml().XmlDocument.fromString(schema, { option: xmlParseOptions() });
  } catch {
    return null;
  }
  try {
    const ref = doc.get("//rng:externalRef[@href] | //rng:include[@href]", { rng: RELAXNG_NS });
    if (!(ref instanceof libxml().XmlElement)) return null;
    return `${ref.name} of "${ref.attr("href")?.value ?? ""}"`;
  } finally {
    doc.dispose();
  }
}

/**
 * Writes the resolved schemaLocation into the references that need it (see documents.ts). An
 * existing attribute gets its value; a missing one is added. True when one was added: libxml2-wasm's
 * setAttr puts a new attribute in the in-scope default namespace, where libxml2's XSD reader does
 * not look, so the document must be serialized and read again (its text has it unprefixed, no
 * namespace). Until 2026-11-29 an existing one got a second `schemaLocation` in that namespace, and
 * a schema declaring a default namespace lost the location Assay resolved.
 */
function patchLocations(doc: XmlDocument, base: string | null, at: Map<number, string> | undefined): boolean {
  if (!at) return false;
  let added = false;
  referencesOf(doc, base).forEach((ref, i) => {
    const target = at.get(i);
    if (!target) return;
    const attr = ref.element.attr("schemaLocation");
    if (attr) attr.value = target;
    else {
      ref.element.setAttr("schemaLocation", target);
      added = true;
    }
  });
  return added;
}

/** What may come before the root element: space, comments, processing instructions, a doctype. */
const PROLOG = /^(?:\s+|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>)*/;

/**
 * A changed document as text whose root is on the line it was on, so that libxml2's messages name
 * the lines the author wrote: without the declaration the serializer writes (UTF-8 is the
 * default), and with as many line breaks before it as the prolog lost (the serializer keeps the
 * root's content as it was, but not the blank lines before the root).
 */
function sameLines(doc: XmlDocument): string {
  const text = doc.toString({ format: false }).replace(/^<\?xml[^>]*\?>\r?\n?/, "");
  const before = (PROLOG.exec(text)?.[0] ?? "").split("\n").length - 1;
  const lost = doc.root.line - 1 - before;
  return lost > 0 ? "\n".repeat(lost) + text : text;
}

/** `child::` written out at the start of a step: after the start, a `/`, a `|` or a space. */
const CHILD_AXIS = /(^|[\s/|])child\s*::\s*/g;

/**
 * An identity constraint's selector and field with the `child::` axis written out, as XML Schema
 * 1.0 §3.11.6 allows (`child::p:*`, `.//child::p:row`), in the form libxml2 reads: the axis
 * dropped, which means the same (the child axis is the default). libxml2 refused `child::p:*` as
 * a selector or field that does not compile and found no node with `child::p:row` (the W3C suite's
 * idI013, idJ014, idL014, idL029, idL039, idL064). `child::` with no name test after it stays as
 * it is, and libxml2 refuses it as before.
 */
function childAxis(doc: XmlDocument): boolean {
  let changed = false;
  for (const node of doc.find("//xs:selector | //xs:field", { xs: XSD_NS })) {
    if (!(node instanceof libxml().XmlElement)) continue;
    const attr = node.attr("xpath");
    const xpath = attr?.value;
    if (!attr || xpath === undefined || !xpath.includes("::")) continue;
    const written = xpath.replace(CHILD_AXIS, (m, before: string, at: number) =>
      /^[\s|]*$/.test(xpath.slice(at + m.length, at + m.length + 1)) ? m : before,
    );
    // The attribute's own value: setAttr would add a second `xpath` in the default namespace
    // when the schema declares one (libxml2-wasm's setAttr takes the in-scope default).
    if (written !== xpath) {
      attr.value = written;
      changed = true;
    }
  }
  return changed;
}

const INT_MAX = 2147483647n;
const OCCURS = /^\s*\+?\d+\s*$/;

/**
 * minOccurs and maxOccurs beyond a C int, which libxml2 refuses as not a nonNegativeInteger
 * (`maxOccurs="100000000000"`; the W3C suite's particlesZ033_a, particlesZ035_a), handed to it as
 * bounds that no document can tell apart: maxOccurs `unbounded`, minOccurs 2147483647 (a document
 * of that many elements is gigabytes over any size Assay takes). A minOccurs over its maxOccurs
 * stays as it is, for libxml2 to refuse.
 */
function occursBounds(doc: XmlDocument): boolean {
  let changed = false;
  for (const node of doc.find("//xs:*[@minOccurs or @maxOccurs]", { xs: XSD_NS })) {
    if (!(node instanceof libxml().XmlElement)) continue;
    const min = node.attr("minOccurs");
    const max = node.attr("maxOccurs");
    const lo = min && OCCURS.test(min.value) ? BigInt(min.value.trim()) : null;
    const hi = max && OCCURS.test(max.value) ? BigInt(max.value.trim()) : null;
    if ((lo === null || lo <= INT_MAX) && (hi === null || hi <= INT_MAX)) continue;
    if (lo !== null && hi !== null && lo > hi) continue;
    if (min && lo !== null && lo > INT_MAX) min.value = String(INT_MAX);
    if (max && hi !== null && hi > INT_MAX) max.value = "unbounded";
    changed = true;
  }
  return changed;
}

/** Whether a schema document may hold a selector or field that childAxis rewrites. */
const mayHaveChildAxis = (text: string) => /child\s*::/.test(text);
/** Whether a schema document may hold an occurrence bound that occursBounds rewrites. */
const mayHaveHugeOccurs = (text: string) => /Occurs\s*=\s*["']\s*\+?\d{10}/.test(text);

function served(set: SchemaSet): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const utf8 = new TextEncoder();
  for (const [uri, text] of set.used) {
    const at = set.locations.get(uri);
    if (!at && !mayHaveChildAxis(text) && !mayHaveHugeOccurs(text)) {
      out.set(uri, utf8.encode(text));
      continue;
    }
    const doc = parseXsd(text, uri);
    try {
      patchLocations(doc, uri, at);
      // Not short-circuited: each rewrites what it finds.
      const changed = [at !== undefined, childAxis(doc), occursBounds(doc)].includes(true);
      out.set(uri, utf8.encode(changed ? sameLines(doc) : text));
    } finally {
      doc.dispose();
    }
  }
  return out;
}

/** facetProblem of the set's documents that may have one, named by URI. */
function setFacetProblem(set: SchemaSet): string | null {
  for (const [uri, text] of set.used) {
    if (!text.includes("fractionDigits") && !(text.includes("minLength") && text.includes("maxLength")))
      continue;
    const doc = parseXsd(text, uri);
    try {
      const problem = facetProblem(doc);
      if (problem) return `${uri} ${problem}`;
    } finally {
      doc.dispose();
    }
  }
  return null;
}

/** A readable list of what a schema set cannot resolve (at most five). */
export function setProblems(set: SchemaSet): string | null {
  if (set.problems.length === 0) return null;
  return set.problems
    .slice(0, 5)
    .map((p) => `${p.document ? `${p.document} ` : ""}${p.line > 0 ? `line ${p.line}: ` : ""}${p.message}`)
    .join("; ");
}

function compileXsd(src: SchemaSource, atSave: boolean): CompiledSchema {
  const { XsdValidator } = libxml();
  const documents = src.documents ?? {};
  const root = src.schemaUri ? { uri: src.schemaUri } : { text: src.schema ?? "", uri: null };
  const set = resolveSchemaSet(root, documents);
  const unresolved = setProblems(set);
  if (unresolved) throw new SchemaCompileError(unresolved);
  const rootUri = src.schemaUri ?? null;
  let schemaDoc = parseXsd(rootUri ? documents[rootUri]! : (src.schema ?? ""), rootUri);
  try {
    if (patchLocations(schemaDoc, rootUri, set.locations.get(rootUri))) {
      const patched = schemaDoc;
      schemaDoc = parseXsd(sameLines(patched), rootUri);
      patched.dispose();
    }
    childAxis(schemaDoc);
    occursBounds(schemaDoc);
    const docs = served(set);
    // Only the set's documents can be read (shared/libxml.ts refuses every other load).
    const v = serveWhile(
      (name) => docs.get(name) ?? docs.get(resolveUri(name, null) ?? ""),
      () => XsdValidator.fromDoc(schemaDoc),
    );
    // What libxml2 accepts and XML Schema does not (facets.ts), in the root, then the set. At save
    // only: a workflow saved before this check (libxml2 took it) runs on as it did, never `error`.
    const problem = atSave ? (facetProblem(schemaDoc) ?? setFacetProblem(set)) : null;
    if (problem) {
      v.dispose();
      throw new SchemaCompileError(problem);
    }
    // The schema document lives as long as the validator: XSD components may point into it.
    return {
      validate: (doc) => v.validate(doc),
      dispose: () => {
        v.dispose();
        schemaDoc.dispose();
      },
    };
  } catch (e) {
    schemaDoc.dispose();
    throw e;
  }
}

function describe(e: unknown): string {
  if (e instanceof libxml().XmlLibError && e.details.length > 0) {
    return e.details
      .filter((d) => d.level >= 2)
      .slice(0, 5)
      .map((d) => `${d.line > 0 ? `line ${d.line}: ` : ""}${d.message.trim()}`)
      .join("; ");
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * Compiles a schema; throws SchemaCompileError with a readable message. Caller disposes.
 * `atSave`: the save-time check of a step config (config.ts), which also refuses what XML Schema
 * forbids and libxml2 accepts (facets.ts); a run compiles what was saved without it.
 */
export function compileSchema(src: SchemaSource, opts: { atSave?: boolean } = {}): CompiledSchema {
  const { DtdValidator, RelaxNGValidator, XmlDocument, XmlDtd } = libxml();
  try {
    if (src.type === "xsd") return compileXsd(src, opts.atSave === true);
    const schema = src.schema ?? "";
    if (src.type === "dtd") {
      const v = new DtdValidator(XmlDtd.fromString(schema));
      return { validate: (doc) => v.validate(doc), dispose: () => v.dispose() };
    }
    const schemaDoc = XmlDocument.fromString(schema, { option: xmlParseOptions() });
    try {
      const v = RelaxNGValidator.fromDoc(schemaDoc);
      const problem = dataParamProblem(schemaDoc);
      if (problem) {
        v.dispose();
        throw new SchemaCompileError(problem);
      }
      return {
        validate: (doc) => v.validate(doc),
        dispose: () => {
          v.dispose();
          schemaDoc.dispose();
        },
      };
    } catch (e) {
      schemaDoc.dispose();
      throw e;
    }
  } catch (e) {
    if (e instanceof SchemaCompileError) throw e;
    throw new SchemaCompileError(describe(e));
  }
}

/** A short key for a source: what it compiles to depends on nothing else. */
export function sourceKey(src: SchemaSource): string {
  const h = createHash("sha256");
  h.update(`${src.type}\u0000${src.schemaUri ?? ""}\u0000${src.schema ?? ""}`);
  for (const uri of Object.keys(src.documents ?? {}).sort())
    h.update(`\u0000${uri}\u0000${src.documents![uri]}`);
  return h.digest("base64url");
}

const CACHE_SIZE = 16;
const cache = new Map<string, CompiledSchema>();

/** The cached compiled schema for a source key, compiling (and evicting the oldest) on a miss. */
export function cachedSchema(key: string, src: SchemaSource): CompiledSchema {
  let hit = cache.get(key);
  if (hit) {
    cache.delete(key); // re-insert: Map order is our LRU order
  } else {
    hit = compileSchema(src);
    if (cache.size >= CACHE_SIZE) {
      const [oldKey, old] = cache.entries().next().value as [string, CompiledSchema];
      cache.delete(oldKey);
      old.dispose();
    }
  }
  cache.set(key, hit);
  return hit;
}
