// An element's fixed value, compared as XML Schema compares it. XML Schema 1.0 (cvc-elt.5.2.2.2.2)
// compares the element's actual value with the fixed value in the type's value space, after the
// type's whitespace rule: `<d> 1.00 </d>` meets `fixed="1.0"` on an xs:decimal. libxml2 compares
// the two strings (attributes it compares as values), so its cvc-elt.5.2.2 errors are checked
// again here and dropped when the values are equal. Only where the element's type is known to be
// a built-in one (directly, or by restrictions of named simple types) for every declaration of
// that name with that fixed value; otherwise libxml2's verdict stands.
import type { XmlDocument, XmlElement } from "libxml2-wasm";
import { libxml } from "../shared/libxml.ts";
import { xmlParseOptions } from "../shared/xml.ts";
import { INTEGERS, XSD_NS } from "./documents.ts";

const NS = { xs: XSD_NS };

/** "Element '{urn:x}d': The actual value ' 1.00 ' does not match the fixed value constraint '1.0'." */
const FIXED_ERROR =
  /^Element '(?:\{[^}]*\})?([^']*)': The actual value '([\s\S]*)' does not match the fixed value constraint '([\s\S]*)'\.$/;

/** Built-in types whose whitespace rule is `collapse` and whose value is the collapsed text. */
const COLLAPSED_AS_TEXT = new Set([
  "token",
  "language",
  "Name",
  "NCName",
  "ID",
  "IDREF",
  "ENTITY",
  "NMTOKEN",
  "anyURI",
  "QName",
  "NOTATION",
  "duration",
  "date",
  "time",
  "dateTime",
  "gYear",
  "gYearMonth",
  "gMonth",
  "gMonthDay",
  "gDay",
  "base64Binary",
]);

/** Per element name and fixed value, the built-in types of its declarations; null: one is unknown. */
export type FixedIndex = Map<string, string[] | null>;

const keyOf = (name: string, fixed: string) => `${name}\u0000${fixed}`;
const localOf = (qname: string) => qname.slice(qname.indexOf(":") + 1);

/** Indexes the element declarations with a fixed value in an XSD schema set's documents. */
export function indexFixedValues(texts: string[]): FixedIndex {
  const docs: XmlDocument[] = [];
  try {
    for (const text of texts) {
      try {
        docs.push(libxml().XmlDocument.fromString(text, { option: xmlParseOptions() }));
      } catch {
        // Compiled already, so it parses; a document that does not is left out (unknown types).
      }
    }
    const find = (xpath: string) =>
      docs.flatMap((d) => d.find(xpath, NS)).filter((n): n is XmlElement => n instanceof libxml().XmlElement);
    // Named simple types by local name: their base, or null for a list, a union or no base.
    const simple = new Map<string, XmlElement[]>();
    for (const t of find("/xs:schema/xs:simpleType[@name] | /xs:schema/xs:redefine/xs:simpleType[@name]"))
      simple.set(t.attr("name")!.value, [...(simple.get(t.attr("name")!.value) ?? []), t]);
    /** The built-in type a QName in `at`'s scope names, following named simple types; null: unknown. */
    const builtinOf = (qname: string, at: XmlElement, seen: Set<string>): string | null => {
      const colon = qname.indexOf(":");
      const ns = at.namespaceForPrefix(colon < 0 ? "" : qname.slice(0, colon));
      const local = localOf(qname);
      if (ns === XSD_NS) return local;
      const decls = simple.get(local);
      if (!decls || seen.has(local)) return null;
      seen.add(local);
      const bases = decls.map((d) => simpleBase(d, seen));
      return bases.every((b) => b !== null && b === bases[0]) ? bases[0]! : null;
    };
    const simpleBase = (simpleType: XmlElement, seen: Set<string>): string | null => {
      const r = simpleType.get("xs:restriction", NS);
      if (!(r instanceof libxml().XmlElement)) return null;
      const base = r.attr("base")?.value;
      if (base) return builtinOf(base, r, seen);
      const inner = r.get("xs:simpleType", NS);
      return inner instanceof libxml().XmlElement ? simpleBase(inner, seen) : null;
    };
    const typeOf = (decl: XmlElement): string | null => {
      const type = decl.attr("type")?.value;
      if (type) return builtinOf(type, decl, new Set());
      const inner = decl.get("xs:simpleType", NS);
      return inner instanceof libxml().XmlElement ? simpleBase(inner, new Set()) : null;
    };

    const index: FixedIndex = new Map();
    const add = (name: string, fixed: string, type: string | null) => {
      const key = keyOf(name, fixed);
      const types = index.has(key) ? index.get(key)! : [];
      index.set(key, types === null || type === null ? null : [...types, type]);
    };
    // A reference cannot carry a fixed value (XSD 1.0 §3.3.2): the global declaration's holds.
    for (const decl of find("//xs:element[@fixed][@name]"))
      add(decl.attr("name")!.value, decl.attr("fixed")!.value, typeOf(decl));
    return index;
  } finally {
    for (const d of docs) d.dispose();
  }
}

/** Whether libxml2's cvc-elt.5.2.2 error `message` is wrong: the values are equal in the type. */
export function fixedValueMet(index: FixedIndex, message: string): boolean {
  const m = FIXED_ERROR.exec(message);
  if (!m) return false;
  const [, name, actual, fixed] = m as unknown as [string, string, string, string];
  const types = index.get(keyOf(name, fixed));
  return !!types?.length && types.every((t) => sameValue(t, actual, fixed));
}

const collapse = (s: string) => s.replace(/[\t\n\r ]+/g, " ").trim();
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const INTEGER = /^[+-]?\d+$/;
const FLOAT = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|-?INF|NaN)$/;

/** A decimal's canonical text: no sign on zero, no leading or trailing zeros, no bare point. */
function canonicalDecimal(s: string): string {
  const negative = s.startsWith("-");
  const [int = "", frac = ""] = s.replace(/^[+-]/, "").split(".");
  const i = int.replace(/^0+/, "") || "0";
  const f = frac.replace(/0+$/, "");
  const body = f ? `${i}.${f}` : i;
  return negative && body !== "0" ? `-${body}` : body;
}

const floatOf = (s: string) => (s === "INF" ? Infinity : s === "-INF" ? -Infinity : Number(s));

/** Equal in the value space of built-in type `type` (its whitespace rule applied first). */
export function sameValue(type: string, actual: string, fixed: string): boolean {
  if (type === "string") return actual === fixed;
  if (type === "normalizedString")
    return actual.replace(/[\t\n\r]/g, " ") === fixed.replace(/[\t\n\r]/g, " ");
  const a = collapse(actual);
  const f = collapse(fixed);
  if (type === "decimal" || INTEGERS.has(type)) {
    const form = type === "decimal" ? DECIMAL : INTEGER;
    return form.test(a) && form.test(f) && canonicalDecimal(a) === canonicalDecimal(f);
  }
  if (type === "float" || type === "double") {
    if (!FLOAT.test(a) || !FLOAT.test(f)) return false;
    const [x, y] = [floatOf(a), floatOf(f)];
    // float is single precision: 0.1 and 0.10000000149 are one float.
    if (type === "float") return Object.is(Math.fround(x), Math.fround(y)) || (x === 0 && y === 0);
    return Object.is(x, y) || (x === 0 && y === 0);
  }
  if (type === "boolean") {
    const b = (s: string) => (s === "true" || s === "1" ? 1 : s === "false" || s === "0" ? 0 : -1);
    return b(a) >= 0 && b(a) === b(f);
  }
  if (type === "hexBinary") return /^(?:[0-9a-fA-F]{2})*$/.test(a) && a.toLowerCase() === f.toLowerCase();
  if (COLLAPSED_AS_TEXT.has(type)) return a === f;
  return false;
}
