// The Schematron source: the config's `schema` and the documents it includes, walked as one tree.
// `sch:include` (and `sch:extends href`) are resolved only against the config's `includes` map
// (href → text): nothing is read from disk or the network. Each element keeps the document it came
// from, so a problem is reported at its line in the right document.
import { sync } from "slimdom-sax-parser";
import { libxml } from "../shared/libxml.ts";
import { LineIndex } from "../shared/position.ts";
import { xmlParseOptions } from "../shared/xml.ts";

export const SCH_NS = "http://purl.oclc.org/dsdl/schematron";
/** Deepest chain of includes followed (a cycle is reported before this). */
const MAX_INCLUDE_DEPTH = 32;

export class SchemaProblem extends Error {
  constructor(
    /** Config field: "schema", or "includes" for a problem inside an included document. */
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** What we read of slimdom's elements and nodes. */
export interface SchNode {
  nodeType: number;
  data?: string;
}
export interface SchElement extends SchNode {
  localName: string;
  namespaceURI: string | null;
  children: ArrayLike<SchElement>;
  childNodes: ArrayLike<SchNode>;
  getAttribute(name: string): string | null;
  position?: { start: number };
}

export interface Doc {
  /** null: the config's `schema`; else the include's key in `includes`. */
  href: string | null;
  lines: LineIndex;
  root: SchElement;
}

export interface Located {
  el: SchElement;
  doc: Doc;
  /** Include keys followed to reach this element (cycle detection). */
  chain?: readonly string[];
}

/** "line 12" or "line 12 of include \"abstract/model.sch\"", for messages. */
export function where(n: Located): string {
  const start = n.el.position?.start;
  const line = start === undefined ? null : n.doc.lines.position(start).line;
  const at = line === null ? "" : `line ${line}`;
  if (n.doc.href === null) return at;
  return `${at}${at ? " of " : ""}include "${n.doc.href}"`;
}

export function problem(n: Located, message: string): SchemaProblem {
  const at = where(n);
  return new SchemaProblem(n.doc.href === null ? "schema" : "includes", at ? `${at}: ${message}` : message);
}

/** An include key or href, resolved against the including document: "./a/../b.sch" → "b.sch". */
export function resolveHref(base: string | null, href: string): string {
  const url = new URL(href, new URL(base ?? "", "assay-include:/"));
  return decodeURIComponent(url.pathname.replace(/^\/+/, ""));
}

/** Parses one Schematron document: libxml2 vouches for it first (bounded, no entities loaded). */
export function parseDoc(text: string, href: string | null): Doc {
  const field = href === null ? "schema" : "includes";
  const label = href === null ? "" : ` of include "${href}"`;
  const { XmlDocument, XmlParseError } = libxml();
  try {
    XmlDocument.fromString(text, { option: xmlParseOptions() }).dispose();
  } catch (e) {
    const d = e instanceof XmlParseError ? e.details.find((x) => x.level >= 2) : undefined;
    const message = d ? `line ${d.line}${label}: ${d.message.trim()}` : `${label.trim()} ${String(e)}`.trim();
    throw new SchemaProblem(field, `is not well-formed XML: ${message}`);
  }
  const root = sync(text, { position: true }).documentElement as unknown as SchElement | null;
  if (!root) throw new SchemaProblem(field, "has no root element");
  return { href, lines: new LineIndex(text), root };
}

export function isSch(el: SchElement, name?: string): boolean {
  return el.namespaceURI === SCH_NS && (name === undefined || el.localName === name);
}

/** Resolves includes on demand, each document parsed once. */
export class Includes {
  readonly #texts = new Map<string, string>();
  readonly #docs = new Map<string, Doc>();

  constructor(includes: Record<string, string>) {
    for (const [key, text] of Object.entries(includes)) this.#texts.set(resolveHref(null, key), text);
  }

  /** The element an include points at: the document's root, or the element with the fragment's id. */
  target(from: Located, href: string, chain: readonly string[]): Located & { key: string } {
    if (chain.length >= MAX_INCLUDE_DEPTH)
      throw problem(from, `includes nest deeper than ${MAX_INCLUDE_DEPTH}`);
    const [path, fragment] = href.split("#", 2);
    const key = resolveHref(from.doc.href, path);
    if (chain.includes(key)) throw problem(from, `includes "${href}" again (a cycle)`);
    const text = this.#texts.get(key);
    if (text === undefined)
      throw problem(from, `includes "${href}", which is not in the config's includes (nothing is fetched)`);
    let doc = this.#docs.get(key);
    if (!doc) {
      doc = parseDoc(text, key);
      this.#docs.set(key, doc);
    }
    if (!fragment) return { el: doc.root, doc, key };
    const found = [doc.root, ...descendants(doc.root)].find((e) => e.getAttribute("id") === fragment);
    if (!found) throw problem(from, `includes "${href}", but no element there has the id "${fragment}"`);
    return { el: found, doc, key };
  }
}

function* descendants(el: SchElement): Generator<SchElement> {
  for (const child of Array.from(el.children)) {
    yield child;
    yield* descendants(child);
  }
}

/**
 * The element children of `n` with every sch:include replaced by what it points at: an included
 * sch:schema contributes its children, anything else itself.
 */
export function* children(n: Located, includes: Includes, chain = n.chain ?? []): Generator<Located> {
  for (const el of Array.from(n.el.children)) {
    const child = { el, doc: n.doc, chain };
    if (!isSch(el, "include")) {
      yield child;
      continue;
    }
    const href = el.getAttribute("href");
    if (!href) throw problem(child, "sch:include has no href");
    const target = includes.target(child, href, chain);
    const next = [...chain, target.key];
    if (isSch(target.el, "schema"))
      yield* children({ el: target.el, doc: target.doc, chain: next }, includes, next);
    // The included element's own children may include further documents: it carries the chain.
    else yield { el: target.el, doc: target.doc, chain: next };
  }
}
