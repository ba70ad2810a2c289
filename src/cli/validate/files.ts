// Which files to send and as what: the content type from the extension (or --content-type), the
// name findings are reported against, and the bytes, all checked before anything is submitted.
import { readFile } from "node:fs/promises";
import { basename, isAbsolute, relative, resolve } from "node:path";
import { EXTENSION_TYPES, parseMediaType } from "../../runs/intake/filetypes.ts";
import { UsageError } from "../args.ts";
import { ValidateError } from "./result.ts";

export interface InputFile {
  /** As reported: relative to the working directory when inside it, with forward slashes. */
  label: string;
  /** The submission filename: the server keeps names without directories. */
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

export function labelOf(path: string, cwd = process.cwd()): string {
  const rel = relative(cwd, resolve(cwd, path));
  const inside = rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  return (inside ? rel : path).replace(/\\/g, "/");
}

export function contentTypeOf(path: string, override: string | undefined): string {
  if (override !== undefined) return override;
  const ext = basename(path).split(".").slice(1).pop()?.toLowerCase();
  const type = ext ? EXTENSION_TYPES[ext] : undefined;
  if (!type)
    throw new UsageError(
      `cannot tell the content type of ${path} from its extension (known: ${Object.keys(EXTENSION_TYPES).join(", ")}); use --content-type`,
    );
  return type;
}

export async function readInputs(paths: string[], override: string | undefined): Promise<InputFile[]> {
  if (override !== undefined && !parseMediaType(override))
    throw new UsageError(`--content-type "${override}" is not a media type like application/json`);
  const out: InputFile[] = [];
  for (const path of paths) {
    const contentType = contentTypeOf(path, override);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await readFile(path));
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message;
      throw new ValidateError(`cannot read ${path}: ${why}`);
    }
    out.push({ label: labelOf(path), name: basename(path), contentType, bytes });
  }
  return out;
}
