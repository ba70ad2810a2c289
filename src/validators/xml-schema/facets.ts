// Facets of one restriction that XML Schema 1.0 forbids and libxml2 accepts, checked when an XSD
// compiles (a bad schema is a 400 at save, CONTRACT §2a; docs/conformance.md, "# XML", lists the
// W3C suite's cases):
//  - minLength over maxLength in the same restriction (Part 2 §4.3.3.4,
//    minLength-less-than-equal-to-maxLength), e.g. `<xs:minLength value="6"/><xs:maxLength value="5"/>`;
//  - fractionDigits other than 0 on xs:integer and the types derived from it, whose fractionDigits
//    is 0 and fixed (Part 2 §3.3.13; a fixed facet may not be given another value, §4.3.12.4).
//  - what a built-in base already fixes, and a restriction may only narrow: minLength or maxLength
//    under 1 on NMTOKENS, IDREFS and ENTITIES, whose minLength is 1 (§4.3.2.4, and minLength over
//    maxLength); a looser whiteSpace than the base's (preserve on normalizedString, whose whiteSpace
//    is replace; preserve or replace on token and the types derived from it, collapse; §4.3.6.4);
//    maxExclusive at or under the minInclusive of an integer type (1 on positiveInteger, §4.3.7.4).
//    A named simple type between the restriction and the built-in can only narrow these further,
//    so the built-in's value is a bound that always holds.
// Only what one document says for sure: a base named by a QName in the XSD namespace, or a named
// simple type of the same document that restricts one (followed through such types).
import type { XmlDocument, XmlElement } from "libxml2-wasm";
import { libxml } from "../shared/libxml.ts";
import { INTEGERS, XSD_NS } from "./documents.ts";

const NS = { xs: XSD_NS };

/** Built-in list types whose minLength is 1. */
const LISTS = new Set(["NMTOKENS", "IDREFS", "ENTITIES"]);
/** whiteSpace of the built-in string types but xs:string (preserve); the others have no choice. */
const WHITESPACE: Record<string, number> = {
  normalizedString: 1,
  token: 2,
  language: 2,
  Name: 2,
  NCName: 2,
  ID: 2,
  IDREF: 2,
  ENTITY: 2,
  NMTOKEN: 2,
};
const WHITESPACE_VALUES = ["preserve", "replace", "collapse"];
/** minInclusive of the integer types that have one. */
const MIN_INCLUSIVE: Record<string, bigint> = {
  long: -9223372036854775808n,
  int: -2147483648n,
  short: -32768n,
  byte: -128n,
  nonNegativeInteger: 0n,
  unsignedLong: 0n,
  unsignedInt: 0n,
  unsignedShort: 0n,
  unsignedByte: 0n,
  positiveInteger: 1n,
};

/** A facet's value as an integer, or null when it is not one (libxml2 says so). */
function integer(el: XmlElement | undefined): bigint | null {
  const v = el?.attr("value")?.value.trim();
  return v !== undefined && /^[+-]?\d+$/.test(v) ? BigInt(v) : null;
}

/** A facet's value as a non-negative integer, or null when it is not one (libxml2 says so). */
function count(el: XmlElement | undefined): bigint | null {
  const v = el?.attr("value")?.value.trim();
  return v !== undefined && /^\+?\d+$/.test(v) ? BigInt(v) : null;
}

/** The facet elements of a restriction, by name (the first of each). */
function facetsOf(restriction: XmlElement): Map<string, XmlElement> {
  const out = new Map<string, XmlElement>();
  for (const n of restriction.find("xs:*", NS))
    if (n instanceof libxml().XmlElement && !out.has(n.name)) out.set(n.name, n);
  return out;
}

/**
 * The built-in type a restriction's base comes to (its local name), following named simple types
 * of the same document; null when it is not known from this document.
 */
function builtinBase(restriction: XmlElement, doc: XmlDocument, seen = new Set<string>()): string | null {
  const base = restriction.attr("base")?.value.trim();
  if (!base) return null;
  const colon = base.indexOf(":");
  const prefix = colon < 0 ? "" : base.slice(0, colon);
  const local = colon < 0 ? base : base.slice(colon + 1);
  const ns = restriction.namespaceForPrefix(prefix) ?? "";
  if (ns === XSD_NS) return local;
  const target = doc.root.attr("targetNamespace")?.value ?? "";
  if (ns !== target || seen.has(local)) return null;
  seen.add(local);
  for (const t of doc.find("/xs:schema/xs:simpleType[@name]/xs:restriction[@base]", NS)) {
    const r = t as XmlElement;
    const type = r.parent as XmlElement | null;
    if (type?.attr("name")?.value.trim() === local) return builtinBase(r, doc, seen);
  }
  return null;
}

/** The first such facet problem of an XSD document, as `line N: …`; null if none. */
export function facetProblem(doc: XmlDocument): string | null {
  for (const node of doc.find("//xs:restriction", NS)) {
    if (!(node instanceof libxml().XmlElement)) continue;
    const facets = facetsOf(node);
    const min = facets.get("minLength");
    const max = facets.get("maxLength");
    const lo = count(min);
    const hi = count(max);
    if (min && lo !== null && hi !== null && lo > hi)
      return `line ${min.line}: minLength (${lo}) is greater than maxLength (${hi}) in the same restriction (XML Schema 1.0 Part 2 §4.3.3.4, minLength-less-than-equal-to-maxLength)`;
    if (
      !["fractionDigits", "minLength", "maxLength", "whiteSpace", "maxExclusive"].some((f) => facets.has(f))
    )
      continue;
    const base = builtinBase(node, doc);
    if (base === null) continue;
    const problem = againstBuiltin(base, facets);
    if (problem) return problem;
  }
  return null;
}

/** A facet of a restriction whose base comes to the built-in `base` that the built-in forbids. */
function againstBuiltin(base: string, facets: Map<string, XmlElement>): string | null {
  const digits = facets.get("fractionDigits");
  const n = count(digits);
  if (digits && n !== null && n !== 0n && INTEGERS.has(base))
    return `line ${digits.line}: fractionDigits ${n} on a restriction of xs:${base}, whose fractionDigits is 0 and fixed (XML Schema 1.0 Part 2 §3.3.13, §4.3.12.4)`;
  if (LISTS.has(base))
    for (const name of ["minLength", "maxLength"]) {
      const el = facets.get(name);
      if (el && count(el) === 0n)
        return `line ${el.line}: ${name} 0 on a restriction of xs:${base}, whose minLength is 1 (XML Schema 1.0 Part 2 §4.3.2.4, §4.3.3.4)`;
    }
  const ws = facets.get("whiteSpace");
  const wsValue = WHITESPACE_VALUES.indexOf(ws?.attr("value")?.value.trim() ?? "");
  if (ws && wsValue >= 0 && base in WHITESPACE && wsValue < WHITESPACE[base]!)
    return `line ${ws.line}: whiteSpace ${WHITESPACE_VALUES[wsValue]} on a restriction of xs:${base}, whose whiteSpace is ${WHITESPACE_VALUES[WHITESPACE[base]!]} (a restriction may not loosen it: XML Schema 1.0 Part 2 §4.3.6.4)`;
  const max = facets.get("maxExclusive");
  const bound = integer(max);
  if (max && bound !== null && base in MIN_INCLUSIVE && bound <= MIN_INCLUSIVE[base]!)
    return `line ${max.line}: maxExclusive ${bound} on a restriction of xs:${base}, whose minInclusive is ${MIN_INCLUSIVE[base]} (maxExclusive must exceed it: XML Schema 1.0 Part 2 §4.3.7.4)`;
  return null;
}
