// A submission's filename: the envelope's or multipart's `filename`, the file part's own name, the
// raw body's X-Filename. One line of text that names a file, never a path (docs/limits.md).
import { isUtf8 } from "node:buffer";
import type { ErrorItem } from "../../errors.ts";
import { charCount } from "../../lib/text.ts";

// Control characters and path separators; also the bidirectional controls, which make a download
// prompt show another name than the file has ("invoice\u202Efdp.exe"), U+2028/U+2029, line breaks
// to every Unicode-aware display (a filename is one line), and lone surrogates (checked apart),
// which no encoding stores (they came back as U+FFFD). C1 controls too (U+0085 is a line break,
// U+009B a terminal's CSI), as in names (src/lib/text.ts).
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const NOT_IN_FILENAMES = /[\u0000-\u001f\u007f-\u009f/\\\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/**
 * A name checkFilename accepts, made from a local file's: every character it refuses becomes "_"
 * and a lone surrogate U+FFFD. For clients (`assay validate`), whose files may be named anything
 * the file system allows (`back\\slash.json` on Linux).
 */
export function safeFilename(name: string): string {
  const safe = name.toWellFormed().replace(new RegExp(NOT_IN_FILENAMES.source, "g"), "_");
  return safe === "." || safe === ".." ? "_" : safe;
}

export function checkFilename(
  v: unknown,
  limits: { maxFilenameLength: number },
  errors: ErrorItem[],
  field = "filename",
): string | null {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string") errors.push({ field, code: "invalid", message: "filename must be a string." });
  else if (charCount(v) > limits.maxFilenameLength)
    errors.push({
      field,
      code: "too_long",
      message: `filename may hold at most ${limits.maxFilenameLength} characters.`,
    });
  else if (NOT_IN_FILENAMES.test(v) || !v.isWellFormed())
    errors.push({
      field,
      code: "invalid",
      message:
        "filename may not contain control characters (bidirectional ones too), line separators, unpaired surrogates or path separators.",
    });
  else if (v === "." || v === "..")
    errors.push({ field, code: "invalid", message: 'filename may not be "." or "..".' });
  else return v;
  return null;
}

/**
 * A header's text. Bun reads a header's bytes as Latin-1 code units, so a UTF-8 X-Filename
 * (`€.xml`, bytes E2 82 AC) arrived as "â\u0082¬.xml": bytes that are valid UTF-8 are read as
 * UTF-8, others stay Latin-1 (RFC 9110 §5.5's historical reading). docs/api.md.
 */
export function headerText(v: string | null): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: any code unit above 0x7F
  if (v === null || !/[\u0080-\u00ff]/.test(v) || /[^\u0000-\u00ff]/.test(v)) return v;
  const bytes = Buffer.from(v, "latin1");
  return isUtf8(bytes) ? bytes.toString("utf8") : v;
}
