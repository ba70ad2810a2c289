// The charsets a submission may name, and how their bytes become text. WHATWG's labels (what
// TextDecoder knows) with three corrections, since a declared charset is a promise about the
// bytes (docs/decisions.md "Bytes and charsets") and WHATWG's browser compatibility breaks it:
// - us-ascii and its aliases are 7-bit: WHATWG reads them as windows-1252 (`caf\xE9` passed).
// - iso-8859-1 and its aliases are ISO-8859-1, bytes = code points: WHATWG reads them as
//   windows-1252 too, so 0x80 became "€" where the document said U+0080.
// - a plain `utf-16` label lets the BOM decide the byte order, big-endian without one (RFC 2781
//   §4.3): WHATWG maps the label to utf-16le, so a big-endian document with its BOM was garbage.
import { isAscii, isUtf8 } from "node:buffer";

/** WHATWG's labels for windows-1252 that name US-ASCII. */
const ASCII_LABELS = new Set(["us-ascii", "ascii", "ansi_x3.4-1968"]);
/** WHATWG's labels for windows-1252 that name ISO-8859-1. */
const LATIN1_LABELS = new Set([
  "iso-8859-1",
  "iso8859-1",
  "iso88591",
  "iso_8859-1",
  "iso_8859-1:1987",
  "iso-ir-100",
  "latin1",
  "l1",
  "csisolatin1",
  "cp819",
  "ibm819",
]);

/** A charset the server can decode, normalised; null when unknown (→ 415). */
export function normaliseCharset(label: string): string | null {
  const l = label.trim().toLowerCase();
  if (ASCII_LABELS.has(l)) return "us-ascii";
  if (LATIN1_LABELS.has(l)) return "iso-8859-1";
  try {
    return new TextDecoder(l).encoding;
  } catch {
    return null;
  }
}

/**
 * The charset of these bytes under a declared label: normaliseCharset, except that `utf-16`
 * (the label itself, not WHATWG's other aliases, which name little-endian by usage) reads the BOM.
 */
export function charsetOf(label: string, bytes: Uint8Array): string | null {
  if (label.trim().toLowerCase() !== "utf-16") return normaliseCharset(label);
  return bytes[0] === 0xff && bytes[1] === 0xfe ? "utf-16le" : "utf-16be";
}

/**
 * Whether a document sent without a `charset` parameter is UTF-16 by its byte order mark (which
 * no UTF-8 text starts with): YAML 1.2 §5.2 requires UTF-16 input, Excel's and Notepad's
 * "Unicode" text files are UTF-16LE with one, and XML names its encoding so (RFC 7303). JSON is
 * UTF-8 (RFC 8259 §8.1). The server's intake and `assay validate --local` both ask this.
 */
export function utf16ByBom(fileType: string, bytes: Uint8Array): boolean {
  const bom = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
  return bom && fileType !== "JSON";
}

/** Whether ASCII text is the same bytes in this charset (a JSON envelope can be sniffed as bytes). */
export const asciiCompatible = (charset: string) => charset !== "utf-16le" && charset !== "utf-16be";

export class CharsetError extends Error {}

/**
 * The bytes as text in a normalised charset. Fatal: bytes not valid in it throw CharsetError.
 * Not fatal (the worker, reading bytes intake already checked): as TextDecoder does.
 */
export function decodeText(bytes: Uint8Array, charset: string, fatal = true): string {
  if (charset === "us-ascii" || charset === "iso-8859-1") {
    if (charset === "us-ascii" && fatal && !isAscii(bytes)) throw new CharsetError("not us-ascii");
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  }
  try {
    return new TextDecoder(charset, { fatal }).decode(bytes);
  } catch {
    throw new CharsetError(`not ${charset}`);
  }
}

/** Whether the bytes decode in this (supported) charset without a replacement. */
export function decodes(bytes: Uint8Array, charset: string): boolean {
  if (charset === "utf-8") return isUtf8(bytes);
  if (charset === "iso-8859-1") return true;
  try {
    decodeText(bytes, charset);
    return true;
  } catch {
    return false;
  }
}
