// SQLite says "unable to open database file" or "attempt to write a readonly database" and names
// neither the file nor the reason: an operator who started the server as the wrong user, or on a
// read-only copy, learns neither. The error is restated with the data dir and, when that is the
// cause, the missing permission.
import { accessSync, constants, existsSync } from "node:fs";
import { join } from "node:path";

const OPEN_ERRORS = /^(SQLITE_(CANTOPEN|READONLY|PERM|AUTH)|EACCES|EPERM|EROFS)/;

/** `e` restated for `dir` when SQLite could not open or write a file in it; any other error as it is. */
export function dataDirError(dir: string, file: string, e: unknown): unknown {
  const code = String((e as { code?: unknown } | null)?.code ?? "");
  if (!OPEN_ERRORS.test(code)) return e;
  const path = join(dir, file);
  const writable = (p: string) => {
    try {
      accessSync(p, constants.R_OK | constants.W_OK);
      return true;
    } catch {
      return false;
    }
  };
  const denied = !writable(dir) || (existsSync(path) && !writable(path));
  return new Error(
    `cannot write the data directory ${dir} (${denied ? "permission denied" : (e as Error).message})`,
    { cause: e },
  );
}
