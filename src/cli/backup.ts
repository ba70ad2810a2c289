// `assay backup FILE`: a consistent online copy (VACUUM INTO reads one snapshot; the server
// keeps running).
import { closeSync, openSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describeDb, openDatabase } from "../db/open.ts";
import { AppError } from "../errors.ts";
import { type Parsed, UsageError, allowOnly } from "./args.ts";
import { configOf, print, requireInstallation } from "./context.ts";

export async function backup(p: Parsed) {
  allowOnly(p, ["data_dir", "database_url"]);
  const [name] = p.positionals;
  if (!name || p.positionals.length !== 1) throw new UsageError("usage: assay backup FILE [--data-dir DIR]");
  // A path, always: SQLite reads `:memory:` as an in-memory database (the copy went nowhere and
  // was reported written) and `file:…` as a URI.
  const file = resolve(name);
  // First: both --data-dir and --database-url is a usage error (exit 2), as for every command.
  const config = configOf(p);
  if (p.flags.database_url || (!p.flags.data_dir && process.env.ASSAY_DATABASE_URL))
    throw new AppError(
      400,
      "invalid_request",
      'On PostgreSQL, back up with PostgreSQL\'s own tools: pg_dump --format=custom --file FILE "$ASSAY_DATABASE_URL" (restore with pg_restore), or the continuous archiving your operations team runs. See docs/postgres.md.',
    );
  // The data dir as it is: not migrated first (a newer binary taking a backup before an upgrade
  // upgraded the very database it copied, and the older release then refused both). A missing
  // installation is reported as every command reports it.
  await requireInstallation(config);
  const db = openDatabase(config.data_dir, { readonly: true });
  try {
    // The copy holds password and token hashes, content and webhook signing secrets: readable by
    // its owner only, from its first byte. VACUUM INTO writes into an empty file, so the file is
    // created first, exclusively (an existing one is never overwritten), with mode 0600.
    let fd: number;
    try {
      fd = openSync(file, "wx", 0o600);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST") throw new AppError(409, "conflict", `${file} exists; choose a new file name.`);
      // Said in the command's words, as the other refusals are: not the system's "ENOENT: …, open".
      const why =
        code === "ENOENT"
          ? `the directory ${dirname(file)} does not exist`
          : code === "EACCES" || code === "EPERM"
            ? "permission denied"
            : code === "EISDIR"
              ? "it is a directory"
              : (e as Error).message;
      throw new AppError(400, "invalid_request", `Cannot write the backup to ${file}: ${why}.`);
    }
    closeSync(fd);
    try {
      db.query("VACUUM INTO ?").run(file);
    } catch (e) {
      rmSync(file, { force: true });
      // SQLite's "database or disk is full" / "disk I/O error" named neither the file nor what to do.
      const code = String((e as { code?: unknown }).code ?? "");
      if (/^SQLITE_(FULL|IOERR)/.test(code))
        throw new AppError(
          400,
          "invalid_request",
          `Cannot write the backup to ${file}: ${code.startsWith("SQLITE_FULL") ? "the disk is full" : "the disk reported an I/O error (full, or a file size limit)"}; nothing was left behind.`,
        );
      throw e;
    }
    print(`Backup of ${describeDb(config)} written to ${file}.`);
  } finally {
    db.close();
  }
}
