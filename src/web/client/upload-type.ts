// The content type an uploaded file is sent with. The browser's guess comes from the operating
// system: Windows with Excel calls a .csv "application/vnd.ms-excel", which the API refuses (415),
// and some systems give .yaml or .csv no type at all. A type the API does not read is replaced by
// the one the extension names (the multipart content_type part wins over the file part's type).
import { EXTENSION_TYPES, fileTypeOf } from "../../runs/intake/media-types.ts";

const MIME: Record<string, string> = {
  JSON: "application/json",
  XML: "application/xml",
  YAML: "application/yaml",
  CSV: "text/csv",
  TEXT: "text/plain",
};

/** The server's extension table (media-types.ts), and .xsd: schemas are uploaded here too. */
const BY_EXTENSION: Readonly<Record<string, string>> = { ...EXTENSION_TYPES, xsd: "application/xml" };

/** The media type the API reads for a file type (JSON → application/json). */
export const mimeOf = (fileType: string): string => MIME[fileType] ?? "text/plain";

/**
 * The content type to send for a file, or null when the browser's own type is one the API reads.
 * By the extension; else the workflow's first allowed type.
 */
export function uploadType(name: string, browserType: string, allowed: readonly string[]): string | null {
  const mime = browserType.split(";")[0]!.trim().toLowerCase();
  if (mime && fileTypeOf(mime)) return null;
  const ext = name.includes(".") ? name.split(".").pop()!.toLowerCase() : "";
  return Object.hasOwn(BY_EXTENSION, ext) ? BY_EXTENSION[ext]! : mimeOf(allowed[0] ?? "TEXT");
}
