// Escaping for XML and HTML. Findings quote submitted data, so every character that reaches a
// report is escaped, and characters XML 1.0 cannot carry at all (control characters, lone
// surrogates) are replaced: a report must parse even when the submission was binary noise.
import { showHiddenControls } from "../lib/text.ts";

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

/** DEL and the C1 controls: XML 1.0 allows them, but a terminal showing the raw text may obey them. */
const C1 = /[\u007f-\u009f]/g;
/** What `visible` writes as \xNN: C0 but tab, DEL and C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: exactly the characters meant
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;
const hex2 = (c: string) => c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0");

function escapeMarkup(value: unknown): string {
  return String(value)
    .replace(INVALID_XML, "\ufffd")
    .replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/**
 * Text and attribute values alike (quotes escaped too). DEL and C1 controls become character
 * references: the same data to an XML parser, inert when the report is printed to a CI log.
 */
export function escapeXml(value: unknown): string {
  return escapeMarkup(value).replace(C1, (c) => `&#x${hex2(c)};`);
}

/** Attribute values additionally keep newlines and tabs, which parsers would normalise away. */
export function escapeAttr(value: unknown): string {
  return escapeXml(value).replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
}

/** Controls HTML cannot hold: all but ASCII whitespace (tab, LF, CR; FF is shown too, as the CLI does). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: exactly the characters meant
const HTML_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
const NONCHARACTERS = /\p{Noncharacter_Code_Point}/gu;

/**
 * The HTML standard makes every control but ASCII whitespace a parse error, raw or as a reference
 * (and reads &#x80;–&#x9F; as windows-1252 characters), and every noncharacter: a page holding them
 * is not conforming HTML. The report is read by people, as `assay validate`'s text is: controls
 * show as `\xNN` and bidirectional controls and line separators as `\uNNNN` (visible()'s), not
 * obeyed — an override made a message read as another; noncharacters and lone surrogates U+FFFD.
 */
export const escapeHtml = (value: unknown): string =>
  showHiddenControls(
    escapeMarkup(
      String(value)
        .replace(HTML_CONTROLS, (c) => `\\x${hex2(c).toLowerCase()}`)
        .replace(NONCHARACTERS, "\ufffd"),
    ),
  );

/**
 * A value with every string in it — object keys too — well-formed: lone UTF-16 surrogates become
 * U+FFFD. JSON.stringify writes a lone surrogate as an escape ("\ud800") that jq and strict
 * parsers refuse, so every JSON report goes through this.
 */
export function wellFormed<T>(value: T): T {
  if (typeof value === "string") return value.toWellFormed() as T;
  if (Array.isArray(value)) return value.map(wellFormed) as T;
  if (value && typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    // defineProperty: a "__proto__" key (submission metadata is anyone's JSON) stays a key.
    for (const [k, v] of Object.entries(value))
      Object.defineProperty(out, k.toWellFormed(), {
        value: wellFormed(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out as T;
  }
  return value;
}

/**
 * JSON text of a report: well-formed (above), and DEL and C1 controls written as \u escapes like
 * JSON.stringify writes C0 (the same data to a parser; nothing a terminal obeys when it is printed).
 */
export function reportJson(value: unknown, indent?: number): string {
  return JSON.stringify(wellFormed(value), null, indent).replace(C1, (c) => `\\u00${hex2(c).toLowerCase()}`);
}

/**
 * Text printed for people (terminal, CI log): control characters are shown, not obeyed. C0 but tab
 * (newline and carriage return included), DEL and C1 become `\xNN` (ESC is `\x1b`); bidirectional
 * controls and U+2028/U+2029 `\uNNNN`; lone surrogates U+FFFD. Apply it to each line: the output's
 * own line breaks are the only ones left.
 */
export function visible(text: string): string {
  return showHiddenControls(
    text.toWellFormed().replace(TERMINAL_CONTROLS, (c) => `\\x${hex2(c).toLowerCase()}`),
  );
}
