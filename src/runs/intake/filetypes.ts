// Content type → logical file type (CONTRACT §4), and the re-inspection of stored content:
// text/plain that is clearly a JSON object or array is classified JSON (spec, Submission).
import type { FileType } from "../../validators/types.ts";

export { decodes, normaliseCharset } from "./charsets.ts";
export { EXTENSION_TYPES, fileTypeOf, typeFromFilename } from "./media-types.ts";

export interface MediaType {
  /** Lower-cased type/subtype without parameters. */
  mime: string;
  charset: string | null;
  params: Record<string, string>;
  /** Parameters given more than once with different values (`charset=utf-8; charset=latin1`). */
  conflicting: string[];
}

/** Parses a Content-Type value; null when it is not type/subtype. */
export function parseMediaType(value: string | null | undefined): MediaType | null {
  if (!value) return null;
  const [head, ...rest] = value.split(";");
  const mime = head!.trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(mime)) return null;
  const params: Record<string, string> = {};
  const conflicting: string[] = [];
  for (const p of rest) {
    const eq = p.indexOf("=");
    if (eq < 0) continue;
    const name = p.slice(0, eq).trim().toLowerCase();
    const value = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1");
    const before = params[name];
    if (before !== undefined && before.toLowerCase() !== value.toLowerCase() && !conflicting.includes(name))
      conflicting.push(name);
    params[name] = value;
  }
  return { mime, charset: params.charset?.toLowerCase() ?? null, params, conflicting };
}

/**
 * text/plain re-inspection: a JSON object or array is JSON; anything else stays TEXT. Around it
 * only JSON's own whitespace (RFC 8259 §2): trim() also takes U+00A0, U+2028, VT, FF …, which
 * made "\u00A0{}" JSON here and a syntax error to the JSON validator. (A BOM is gone already:
 * the decoder drops it.)
 */
export function classify(fileType: FileType, text: string): FileType {
  if (fileType !== "TEXT") return fileType;
  let a = 0;
  let b = text.length - 1;
  while (a <= b && isJsonSpace(text.charCodeAt(a))) a++;
  while (b > a && isJsonSpace(text.charCodeAt(b))) b--;
  const first = text[a];
  const last = text[b];
  if (!((first === "{" && last === "}") || (first === "[" && last === "]")) || a === b) return fileType;
  try {
    // JSON.parse skips the same whitespace itself: no trimmed copy of a large text.
    const v = JSON.parse(text);
    return v !== null && typeof v === "object" ? "JSON" : fileType;
  } catch {
    return fileType;
  }
}

const isJsonSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** The encoding an XML document declares for itself: a UTF-16 BOM or <?xml … encoding="…"?>. */
export function xmlEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  // No BOM: "<?" in two bytes a character is UTF-16 (XML 1.0 Appendix F), as libxml2 detects it.
  // It was taken for UTF-8 (NULs are valid UTF-8): libxml2 read the bytes right, while the steps
  // that read the text (Schematron, assertions) got "\0<\0?…" ("disallowed character").
  if (bytes[0] === 0 && bytes[1] === 0x3c && bytes[2] === 0 && bytes[3] === 0x3f) return "utf-16be";
  if (bytes[0] === 0x3c && bytes[1] === 0 && bytes[2] === 0x3f && bytes[3] === 0) return "utf-16le";
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 200));
  return (
    /^(?:\u00ef\u00bb\u00bf)?<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1] ?? null
  );
}
