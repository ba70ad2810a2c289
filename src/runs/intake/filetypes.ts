// Content type → logical file type (CONTRACT §4), and the re-inspection of stored content:
// text/plain that is clearly a JSON object or array is classified JSON (spec, Submission).
import { isUtf8 } from "node:buffer";
import type { FileType } from "../../validators/types.ts";

const EXACT: Record<string, FileType> = {
  "application/json": "JSON",
  "text/json": "JSON",
  "application/xml": "XML",
  "text/xml": "XML",
  "application/yaml": "YAML",
  "application/x-yaml": "YAML",
  "text/yaml": "YAML",
  "text/x-yaml": "YAML",
  "text/csv": "CSV",
  "application/csv": "CSV",
  "text/tab-separated-values": "CSV",
  "text/plain": "TEXT",
};

/** The content type a file name implies (clients that send every part as octet-stream, the CLI). */
export const EXTENSION_TYPES: Readonly<Record<string, string>> = {
  json: "application/json",
  xml: "application/xml",
  yaml: "application/yaml",
  yml: "application/yaml",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  txt: "text/plain",
};

export const typeFromFilename = (name: string | undefined): string | undefined =>
  name?.includes(".") ? EXTENSION_TYPES[name.split(".").pop()!.toLowerCase()] : undefined;

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

/** The file type a MIME type maps to; null when Assay does not support it (→ 415). */
export function fileTypeOf(mime: string): FileType | null {
  if (EXACT[mime]) return EXACT[mime]!;
  if (/^application\/[a-z0-9!#$&^_.-]+\+json$/.test(mime)) return "JSON";
  if (/^application\/[a-z0-9!#$&^_.-]+\+xml$/.test(mime)) return "XML";
  return null;
}

/** text/plain re-inspection: a JSON object or array is JSON; anything else stays TEXT. */
export function classify(fileType: FileType, text: string): FileType {
  if (fileType !== "TEXT") return fileType;
  const t = text.trim();
  if (!((t.startsWith("{") && t.endsWith("}")) || (t.startsWith("[") && t.endsWith("]")))) return fileType;
  try {
    const v = JSON.parse(t);
    return v !== null && typeof v === "object" ? "JSON" : fileType;
  } catch {
    return fileType;
  }
}

/** A charset the server can decode (WHATWG labels), normalised; null when unknown (→ 415). */
export function normaliseCharset(label: string): string | null {
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return null;
  }
}

/** The encoding an XML document declares for itself: a UTF-16 BOM or <?xml … encoding="…"?>. */
export function xmlEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 200));
  return (
    /^(?:\u00ef\u00bb\u00bf)?<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1] ?? null
  );
}

/** Whether the bytes decode in this (supported) charset without a replacement. */
export function decodes(bytes: Uint8Array, charset: string): boolean {
  if (charset === "utf-8") return isUtf8(bytes);
  try {
    new TextDecoder(charset, { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
