// A few of typebox's format checks, corrected where the official test suite says otherwise. The
// registry is typebox's global one, so importing this module (index.ts does) applies it to every
// compiled schema in this thread.
import Format from "typebox/format";
import { walkSchemas } from "./walk.ts";

/** RFC 1123 host name: letters, digits and hyphens, labels of 1-63, 253 in all. */
const LDH =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

// typebox applies IDNA's rule against "--" in the 3rd and 4th position to every label; RFC 1123
// allows `ab--cd.example`, which the suite's drafts 4 and 6 call valid. Labels that are A-labels
// (xn--…) still go through typebox's Punycode and IDNA checks.
const hostname = Format.IsHostname;
Format.Set("hostname", (v: string) => (LDH.test(v) && !/(^|\.)xn--/i.test(v) ? true : hostname(v)));

// RFC 3986's IP-literal may be an IPvFuture, "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ),
// and ABNF letters are case-insensitive: `http://[V1.fe]` is an IRI. typebox leaves the check to
// the WHATWG URL parser, which knows no IPvFuture; it gets an IPv6 literal in its place instead.
const IPV_FUTURE = /\[[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+\]/;
const ipvFuture = (v: string) => v.replace(IPV_FUTURE, "[::1]");
for (const [name, check] of [
  ["iri", Format.IsIri],
  ["iri-reference", Format.IsIriReference],
  ["uri", Format.IsUri],
  ["uri-reference", Format.IsUriReference],
] as const) {
  Format.Set(name, (v: string) => check(v) || (IPV_FUTURE.test(v) && check(ipvFuture(v))));
}

/**
 * `format` values no check exists for, as "#/pointer/format": "name". JSON Schema 2020-12
 * Validation §7.2.3: with the format-assertion vocabulary, implementations MUST fail upon
 * encountering unknown formats (a misspelt "emial" would otherwise assert nothing).
 */
export function unknownFormats(schema: unknown): string[] {
  const out: string[] = [];
  walkSchemas(schema, (s, pointer) => {
    if (typeof s.format === "string" && !Format.Has(s.format))
      out.push(`#${pointer}/format: ${JSON.stringify(s.format)}`);
  });
  return out;
}
