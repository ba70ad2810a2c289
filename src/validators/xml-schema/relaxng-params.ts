// RelaxNG `<data>` parameters, checked when the schema compiles. libxml2 checks the params of a
// `<data>` in the XML Schema datatype library only when it validates a document, so a bad
// `pattern`, `minInclusive="abc"` or an unknown facet was saved (201) and then failed every run,
// valid document or not (CONTRACT §2a: a bad schema is a 400 at save). Each such `<data>` is
// compiled as an `xs:simpleType` restriction of its type: libxml2 checks the facet names, their
// values against the type, and the pattern's syntax, as it does for an XSD.
import type { XmlDocument, XmlElement } from "libxml2-wasm";
import { libxml } from "../shared/libxml.ts";
import { xmlParseOptions } from "../shared/xml.ts";

const RNG = "http://relaxng.org/ns/structure/1.0";
const XSD_DATATYPES = "http://www.w3.org/2001/XMLSchema-datatypes";
const NCNAME = /^[A-Za-z_][\w.-]*$/;
// RelaxNG's XSD datatype library takes every facet but enumeration and whiteSpace as a param.
const PARAMS = new Set([
  "length",
  "minLength",
  "maxLength",
  "pattern",
  "minInclusive",
  "maxInclusive",
  "minExclusive",
  "maxExclusive",
  "totalDigits",
  "fractionDigits",
]);

const escapeAttr = (s: string) => s.replace(/[&<"\t\n\r]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The first problem of a `<data>` element's params, as a readable message; null if none. */
export function dataParamProblem(schemaDoc: XmlDocument): string | null {
  const { XmlDocument: Doc, XsdValidator } = libxml();
  for (const node of schemaDoc.find("//r:data[r:param]", { r: RNG })) {
    const data = node as XmlElement;
    const library = data.eval("string(ancestor-or-self::*[@datatypeLibrary][1]/@datatypeLibrary)");
    const type = data.attr("type")?.value.trim() ?? "";
    if (library !== XSD_DATATYPES || !NCNAME.test(type)) continue;
    const where = `<data type="${type}"> on line ${data.line}`;
    const facets: string[] = [];
    for (const p of data.find("r:param", { r: RNG })) {
      const name = (p as XmlElement).attr("name")?.value.trim() ?? "";
      if (!PARAMS.has(name)) return `${where}: "${name}" is not a parameter of ${type}`;
      facets.push(`<xs:${name} value="${escapeAttr(p.content)}"/>`);
    }
    const xsd = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:simpleType name="t"><xs:restriction base="xs:${type}">${facets.join("")}</xs:restriction></xs:simpleType></xs:schema>`;
    const doc = Doc.fromString(xsd, { option: xmlParseOptions() });
    try {
      XsdValidator.fromDoc(doc).dispose();
    } catch (e) {
      const detail = (e instanceof Error ? e.message : String(e)).split("\n")[0]?.trim();
      return `${where}: its params are not valid for ${type}${detail ? ` (${detail})` : ""}`;
    } finally {
      doc.dispose();
    }
  }
  return null;
}
