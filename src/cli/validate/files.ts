// Which files to send and as what: the content type from the extension (or --content-type), the
// name findings are reported against, checked before anything is submitted; the bytes, read one
// file at a time as it is sent (eachInput).
import { accessSync, constants, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, isAbsolute, relative, resolve, sep } from "node:path";
import { EXTENSION_TYPES, parseMediaType } from "../../runs/intake/filetypes.ts";
import { safeFilename } from "../../runs/intake/filenames.ts";
import { UsageError } from "../args.ts";
import { ValidateError } from "./result.ts";

export interface InputFile {
  /** As reported: relative to the working directory when inside it, with forward slashes. */
  label: string;
  /** The submission filename: without directories, characters the server refuses as "_". */
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

export function labelOf(path: string, cwd = process.cwd()): string {
  const rel = relative(cwd, resolve(cwd, path));
  const inside = rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  // Forward slashes where "\\" separates directories (Windows); elsewhere it is part of a name.
  const shown = inside ? rel : path;
  return sep === "\\" ? shown.replace(/\\/g, "/") : shown;
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

/** A file to validate, checked but not read yet: its bytes are read just before it is sent. */
export type PlannedFile = Omit<InputFile, "bytes"> & { path: string };

const unreadable = (path: string, e: unknown) => {
  const code = (e as NodeJS.ErrnoException).code;
  const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "a directory" : (e as Error).message;
  return new ValidateError(`cannot read ${path}: ${why}`);
};

/**
 * Every path's content type and readability, checked before anything is submitted (a typo is
 * exit 2 with nothing sent). The bytes are not read here: twelve files of 20 MB read up front
 * held 723 MB whatever --jobs said.
 */
export function planInputs(paths: string[], override: string | undefined): PlannedFile[] {
  if (override !== undefined && !parseMediaType(override))
    throw new UsageError(`--content-type "${override}" is not a media type like application/json`);
  return paths.map((path) => {
    const contentType = contentTypeOf(path, override);
    try {
      if (statSync(path).isDirectory()) throw Object.assign(new Error(), { code: "EISDIR" });
      accessSync(path, constants.R_OK);
    } catch (e) {
      throw unreadable(path, e);
    }
    // The server keeps a name, not a path, of characters it can show safely: the label (findings,
    // reports) stays the name as typed.
    return { path, label: labelOf(path), name: safeFilename(basename(path)), contentType };
  });
}

/** Reads a planned file's bytes. */
export async function readInput(f: PlannedFile): Promise<InputFile> {
  try {
    return {
      label: f.label,
      name: f.name,
      contentType: f.contentType,
      bytes: new Uint8Array(await readFile(f.path)),
    };
  } catch (e) {
    throw unreadable(f.path, e);
  }
}

/**
 * Runs `run` on every file, `limit` at a time, each file read just before its run and dropped
 * after it: at most `limit` files' bytes are held at once. Results in the order of `files`.
 */
export async function eachInput<R>(
  files: PlannedFile[],
  limit: number,
  read: (f: PlannedFile) => Promise<InputFile>,
  run: (f: InputFile) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(files.length);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const i = next++;
      out[i] = await run(await read(files[i]!));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, files.length) }, worker));
  return out;
}
