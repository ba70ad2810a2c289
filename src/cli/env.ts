// Misspelt ASSAY_* variables, reported by every command, not only `serve`: a command reads them too
// (ASSAY_DATA_DIR, ASSAY_DATABASE_URL, ASSAY_SERVER, ASSAY_TOKEN), and `ASSAY_DATA_DIRR=/srv/assay
// assay init` initialised ./assay-data without a word. Kept free of src/config.ts so that the light
// client (src/cli/light.ts) stays small: it checks only the two variables it reads.
import { nearest } from "../lib/nearest.ts";

/** The variables the clients (`assay validate`, `workflows export|apply`, assay-validate) read. */
export const CLIENT_ENV = ["ASSAY_SERVER", "ASSAY_TOKEN"] as const;

export { nearest };

/** One warning line per variable, in `assay serve`'s words. */
export const envWarning = (program: string, u: { name: string; meant: string | null }) =>
  `${program}: warning: ${u.name} names no setting and is ignored${u.meant ? ` (did you mean ${u.meant}?)` : ""}\n`;

/**
 * For the light client: ASSAY_* variables that are not ASSAY_SERVER or ASSAY_TOKEN but look like
 * one of them (ASSAY_TOKN, ASSAY_SERVER_URL). Other ASSAY_* variables are the server's business
 * and not warned of: a CI job's environment may well hold them.
 */
export function misspeltClientEnv(env: Record<string, string | undefined>) {
  return Object.keys(env)
    .filter((n) => n.startsWith("ASSAY_") && !(CLIENT_ENV as readonly string[]).includes(n))
    .sort()
    .map((name) => ({ name, meant: nearest(name, CLIENT_ENV) }))
    .filter((u) => u.meant !== null);
}
