// The media types a submission may have and the file type each maps to (CONTRACT §4). No imports
// that carry code: the web app bundles this file to send an upload with a type the API reads.
import type { FileType } from "../../validators/types.ts";

const EXACT: Readonly<Record<string, FileType>> = {
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

export const typeFromFilename = (name: string | undefined): string | undefined => {
  const ext = name?.includes(".") ? name.split(".").pop()!.toLowerCase() : "";
  return Object.hasOwn(EXTENSION_TYPES, ext) ? EXTENSION_TYPES[ext] : undefined;
};

/** The file type a MIME type (lower-cased, no parameters) maps to; null when Assay does not support it (→ 415). */
export function fileTypeOf(mime: string): FileType | null {
  if (Object.hasOwn(EXACT, mime)) return EXACT[mime]!;
  if (/^application\/[a-z0-9!#$&^_.-]+\+json$/.test(mime)) return "JSON";
  if (/^application\/[a-z0-9!#$&^_.-]+\+xml$/.test(mime)) return "XML";
  return null;
}
