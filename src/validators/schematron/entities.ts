// The general entities a document declares in its own DTD, for the Schematron validator's second
// parse: saxes reads no DTD, so `<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>` — well-formed XML
// (XML 1.0 §4.1, WFC: Entity Declared) — would fail there as "undefined entity". libxml2 has
// parsed the document already (src/validators/shared/xml.ts: entities substituted, external ones
// never loaded, the amplification limit on), so it also gives each entity's replacement: one more
// parse of the prolog with the entities the body uses, each in an element of its own. This leaves
// the character references, nested entities and literal rules to libxml2, not to code of ours.
import { libxml } from "../shared/libxml.ts";
import { xmlParseOptions } from "../shared/xml.ts";
import { prologEnd, withoutCommentsAndPIs } from "../shared/xml-prolog.ts";

/** What saxes needs: entity name → replacement text; or `markup` when one holds elements. */
export type Entities = Record<string, string> | "markup";

const PREDEFINED = new Set(["amp", "lt", "gt", "quot", "apos"]);
const DECLARATION = /<!ENTITY\s+([^\s%"'<>]+)\s/g;
const REFERENCE = /&([^\s;&#<>"']+);/g;

/**
 * The entities the body refers to that its own DTD does not declare, each as "" — for a document
 * libxml2 accepted all the same: one with an external subset or a parameter-entity reference,
 * where an undeclared entity is no well-formedness error (XML 1.0 §4.1, WFC: Entity Declared)
 * and its declaration is in a DTD that is never read. Unexpanded, it adds no text.
 */
export function undeclaredEntities(text: string): Record<string, string> {
  const end = prologEnd(text);
  const declared = new Set<string>();
  for (const m of withoutCommentsAndPIs(text.slice(0, end)).matchAll(DECLARATION)) declared.add(m[1]!);
  const out: Record<string, string> = {};
  for (const m of text.slice(end).matchAll(REFERENCE))
    if (!declared.has(m[1]!) && !PREDEFINED.has(m[1]!)) out[m[1]!] = "";
  return out;
}

/**
 * The entities of the document's internal DTD subset that its body refers to, with their
 * replacement text ({} without a DOCTYPE that declares any: the common case costs a scan of the
 * prolog). External entities are "" (libxml2 does not load them, so it validated them empty).
 * `markup` when a replacement holds elements (or libxml2 refuses the probe): saxes can only
 * insert text, so the caller reads libxml2's expanded tree instead.
 */
export function declaredEntities(text: string): Entities {
  const end = prologEnd(text);
  const prolog = text.slice(0, end);
  if (!prolog.includes("<!ENTITY")) return {};
  const declared = new Set<string>();
  for (const m of withoutCommentsAndPIs(prolog).matchAll(DECLARATION)) declared.add(m[1]!);
  const used = new Set<string>();
  for (const m of text.slice(end).matchAll(REFERENCE)) {
    if (declared.has(m[1]!) && !PREDEFINED.has(m[1]!)) used.add(m[1]!);
  }
  if (used.size === 0) return {};
  const names = [...used];
  const { XmlDocument, XmlElement } = libxml();
  let doc: InstanceType<typeof XmlDocument>;
  try {
    doc = XmlDocument.fromString(`${prolog}<probe>${names.map((n) => `<e>&${n};</e>`).join("")}</probe>`, {
      option: xmlParseOptions(),
    });
  } catch {
    return "markup";
  }
  try {
    const out: Record<string, string> = {};
    let e = doc.root.firstChild;
    for (const name of names) {
      if (!(e instanceof XmlElement)) return "markup";
      for (let c = e.firstChild; c; c = c.next) if (c instanceof XmlElement) return "markup";
      out[name] = e.content;
      e = e.next;
    }
    return out;
  } finally {
    doc.dispose();
  }
}
