// Escaping for XML and HTML. Findings quote submitted data, so every character that reaches a
// report is escaped, and characters XML 1.0 cannot carry at all (control characters, lone
// surrogates) are replaced: a report must parse even when the submission was binary noise.

const INVALID_XML =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly what XML 1.0 forbids
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text and attribute values alike (quotes escaped too). */
export function escapeXml(value: unknown): string {
  return String(value)
    .replace(INVALID_XML, "\ufffd")
    .replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Attribute values additionally keep newlines and tabs, which parsers would normalise away. */
export function escapeAttr(value: unknown): string {
  return escapeXml(value).replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
}

export const escapeHtml = escapeXml;
