// SQLite says "unable to open database file" or "attempt to write a readonly database" and names
// neither the file nor the reason: an operator who started the server as the wrong user, or on a
// read-only copy, learns neither. The error is restated with the data dir and, when that is the
// cause, the missing permission.
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { join, resolve, sep } from "node:path";

const OPEN_ERRORS = /^(SQLITE_(CANTOPEN|READONLY|PERM|AUTH)|EACCES|EPERM|EROFS)/;

/** Not a directory where one is named, or a file that is no database: said in words, with the path. */
const NOT_USABLE: Record<string, (dir: string, file: string, e?: unknown) => string> = {
  EEXIST: (dir) => `the data directory ${dir} is a file, not a directory`,
  // Also a file further up the path (`--data-dir notes.txt/data`): that file is named, not the dir.
  ENOTDIR: (dir) => {
    const file = fileOnPath(dir);
    return file === null || file === dir
      ? `the data directory ${dir} is a file, not a directory`
      : `cannot create the data directory ${dir}: ${file} is a file, not a directory`;
  },
  SQLITE_NOTADB: (dir, file) => `${join(dir, file)} is not an Assay database (not a SQLite file, or damaged)`,
  ASSAY_FOREIGN_DB: (dir, file, e) =>
    `${join(dir, file)} is not an Assay database: it is ${(e as Error).message}; restore an Assay backup or choose another --data-dir`,
  SQLITE_CORRUPT: (dir, file) =>
    `${join(dir, file)} is damaged (SQLite reports it corrupt); restore a backup`,
};

/** The first path on the way to `dir` that exists and is not a directory, or null. */
function fileOnPath(dir: string): string | null {
  const parts = resolve(dir).split(sep);
  for (let i = 1; i <= parts.length; i++) {
    const p = parts.slice(0, i).join(sep) || sep;
    try {
      if (!statSync(p).isDirectory()) return i === parts.length ? dir : p;
    } catch {
      return null;
    }
  }
  return null;
}

/** `e` restated for `dir` when SQLite could not open or write a file in it; any other error as it is. */
export function dataDirError(dir: string, file: string, e: unknown): unknown {
  const code = String((e as { code?: unknown } | null)?.code ?? "");
  const plain = NOT_USABLE[code];
  if (plain) return new Error(plain(dir, file, e), { cause: e });
  // SQLite's "database or disk is full" / "disk I/O error" named neither the data dir nor the cause.
  if (/^SQLITE_FULL/.test(code))
    return new Error(`cannot write the data directory ${dir}: the disk is full`, { cause: e });
  if (/^SQLITE_IOERR/.test(code))
    return new Error(
      `cannot write the data directory ${dir}: the disk reported an I/O error (full, a file size limit, or failing)`,
      { cause: e },
    );
  if (!OPEN_ERRORS.test(code)) return e;
  const path = join(dir, file);
  /** Why `p` may not be written, or null when it may. */
  const unwritable = (p: string): string | null => {
    try {
      accessSync(p, constants.R_OK | constants.W_OK);
      return null;
    } catch (a) {
      // A read-only mount (a snapshot, a container's read-only volume) was "permission denied",
      // and the operator went looking for the wrong owner or mode. A dir not there yet: the
      // failed mkdir's own code says which.
      const why = (a as { code?: string }).code === "ENOENT" ? code : (a as { code?: string }).code;
      return why === "EROFS" ? "read-only file system" : "permission denied";
    }
  };
  const why = unwritable(dir) ?? (existsSync(path) ? unwritable(path) : null);
  return new Error(`cannot write the data directory ${dir} (${why ?? (e as Error).message})`, {
    cause: e,
  });
}

/** Creates the data dir if needed (0700); a file in its place is said in words, not as EEXIST. */
export function ensureDataDir(dir: string): void {
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new Error(NOT_USABLE.ENOTDIR!(dir, ""));
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw dataDirError(dir, "", e);
  }
}

/**
 * Creates `file` empty, readable and writable by its owner only (0600), unless it exists. SQLite
 * creates a database with 0644 less the umask, and its -wal and -shm files take the database
 * file's mode: in a data dir the operator made (`mkdir`, systemd's StateDirectory=, both 0755),
 * password and token hashes, webhook secrets and submitted content were readable by every local
 * user, while a backup of the same file is 0600. An existing file keeps the mode it was given.
 */
export function createOwnerOnly(file: string): void {
  // Never an open for writing where the file is there: a read-only copy is opened as before.
  if (existsSync(file)) return;
  try {
    closeSync(openSync(file, "wx", 0o600));
  } catch (e) {
    if ((e as { code?: string }).code !== "EEXIST") throw e;
  }
}
