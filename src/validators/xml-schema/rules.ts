// The `rule` of a validity finding, read from libxml2's message (libxml2-wasm passes no error
// code): for XSD the validation rule of XML Schema 1.0 that failed (the cvc-* names that Xerces
// and Saxon report too), for DTD the validity constraint of XML 1.0 ("VC: …"), for RelaxNG,
// which names no rules, the kind of pattern that did not match. docs/validators.md lists them.
import type { SchemaType } from "./compile.ts";

type Table = ReadonlyArray<readonly [RegExp, string | ((m: RegExpExecArray) => string)]>;

const XSD: Table = [
  // XML Schema Part 2 names each facet's rule cvc-<facet>-valid.
  [/\[facet '(\w+)'\]/, (m) => `cvc-${m[1]}-valid`],
  [/is not a valid value of the (?:local )?(?:atomic|list|union)/, "cvc-datatype-valid"],
  [/The attribute '[^']*' is not allowed/, "cvc-complex-type.3.2.2"],
  [/is required but missing/, "cvc-complex-type.4"],
  [/This element is not expected|Missing child element/, "cvc-complex-type.2.4"],
  [/Character content other than whitespace is not allowed/, "cvc-complex-type.2.3"],
  [/Element content is not allowed, because the content type is a simple type/, "cvc-complex-type.2.2"],
  [/Element content is not allowed, because the type definition is simple/, "cvc-type.3.1.2"],
  [/No matching global declaration available for the validation root/, "cvc-elt.1"],
  [/The element declaration is abstract/, "cvc-elt.2"],
  [/The type definition is abstract/, "cvc-type.2"],
  [/because the element is 'nilled'/, "cvc-elt.3.2.1"],
  [/not 'nillable'|xsi:nil/, "cvc-elt.3"],
  [/because the content type is empty/, "cvc-complex-type.2.1"],
  [/xsi:type/, "cvc-elt.4"],
  [/fixed value constraint/, "cvc-elt.5.2.2"],
  [/Duplicate key-sequence .* in unique identity-constraint/, "cvc-identity-constraint.4.1"],
  [/Duplicate key-sequence/, "cvc-identity-constraint.4.2.2"],
  [/Not all fields of key identity-constraint/, "cvc-identity-constraint.4.2.1"],
  [/No match found for key-sequence/, "cvc-identity-constraint.4.3"],
  // A field must give at most one node, of a simple type (XML Schema 1.0 §3.11.4, clause 3).
  [
    /of a field of \w+ identity-constraint .*(?:more than one member|non-simple type)/,
    "cvc-identity-constraint.3",
  ],
  // A QName's prefix names no namespace in scope: the value is not in QName's value space.
  [/The QName value '[^']*' has no corresponding namespace declaration/, "cvc-datatype-valid"],
  [/The value '[^']*' of simple type/, "cvc-attribute.3"],
];

const DTD: Table = [
  [/ENTIT(?:Y|IES) attribute \S+ reference an unknown entity/, "VC: Entity Name"],
  [/ID .* already defined/, "VC: ID"],
  [/IDREFS? attribute .* references an unknown ID/, "VC: IDREF"],
  [/is not among the enumerated (?:set|notation set)/, "VC: Enumeration"],
  [/must be "|different from default/, "VC: Fixed Attribute Default"],
  [/does not carry attribute|attribute .* is required/i, "VC: Required Attribute"],
  [/No declaration for attribute|Syntax of value for attribute/, "VC: Attribute Value Type"],
  [/root and DTD name do not match|root element/i, "VC: Root Element Type"],
  [/Redefinition of element|declared twice/i, "VC: Unique Element Type Declaration"],
];

const RELAXNG: Table = [
  [/datatype|doesn't allow value|Type \S+ doesn't/i, "relaxng:data"],
  [/Error validating value|Expecting .*value|value .* not/i, "relaxng:value"],
  [/attribute/i, "relaxng:attribute"],
  [/text|extra content|character/i, "relaxng:text"],
  [/interleave/i, "relaxng:interleave"],
];

/** The fallback per schema language: the whole-document rule of each. */
const DEFAULT: Record<SchemaType, string> = {
  xsd: "cvc-assess-elt",
  dtd: "VC: Element Valid",
  relaxng: "relaxng:element",
};
const TABLES: Record<SchemaType, Table> = { xsd: XSD, dtd: DTD, relaxng: RELAXNG };

/**
 * The names libxml2 puts before an XSD message (`Element 'abstract', attribute 'x': `): read past
 * them, so that an element named like a rule's words is not taken for that rule (a fixed-value
 * failure of an element named `abstract` was labelled cvc-elt.2).
 */
const XSD_SUBJECT = /^Element '[^']*'(?:, attribute '[^']*')?: /;

/** An attribute's value against its fixed value: Xerces's cvc-complex-type.3.1, not the element's rule. */
const XSD_FIXED_ATTRIBUTE = /^Element '[^']*', attribute '[^']*': .*fixed value constraint/;

export function validityRule(type: SchemaType, message: string): string {
  if (type === "xsd" && XSD_FIXED_ATTRIBUTE.test(message)) return "cvc-complex-type.3.1";
  const text = type === "xsd" ? message.replace(XSD_SUBJECT, "") : message;
  for (const [re, rule] of TABLES[type]) {
    const m = re.exec(text);
    if (m) return typeof rule === "string" ? rule : rule(m);
  }
  return DEFAULT[type];
}

/**
 * RelaxNG messages that only restate, for an enclosing pattern, a failure libxml2 has already
 * reported in detail ("Type integer doesn't allow value 'x'" is followed by "Error validating
 * datatype integer" and "Element age failed to validate content", all on the same element).
 */
const RELAXNG_ECHO =
  /^(?:Error validating datatype \S+|Element \S+ failed to validate (?:content|attributes)|Invalid sequence in interleave|Error validating value ?\S*)$/;

/**
 * libxml2's note after a key/unique/keyref field's value failed its type: the failure itself is
 * reported just before, so this second "error" on the same element only doubled the count.
 */
const XSD_ECHO = /No precomputed value available, the value was either invalid or something strange happened/;

/** Keeps a finding unless it repeats one already kept (see RELAXNG_ECHO, XSD_ECHO). */
export function dedupe(type: SchemaType) {
  const seen = new Set<string>();
  // Every reported path and its ancestors: an echo at one of them restates a reported failure.
  const covered = new Set<string>();
  return (message: string, path: string | null, line: number | null): boolean => {
    const key = `${path}\u0000${line}\u0000${message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    const echo = type === "relaxng" ? RELAXNG_ECHO : type === "xsd" ? XSD_ECHO : null;
    if (echo && path !== null && echo.test(message) && covered.has(path)) return false;
    for (let p = path; p && !covered.has(p); p = p.slice(0, p.lastIndexOf("/"))) covered.add(p);
    return true;
  };
}
