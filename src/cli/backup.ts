// `assay backup FILE`: a consistent online copy (VACUUM INTO reads one snapshot; the server
// keeps running).
import { existsSync } from "node:fs";
import { AppError } from "../errors.ts";
import { type Parsed, UsageError, allowOnly } from "./args.ts";
import { print, withDeps } from "./context.ts";

export async function backup(p: Parsed) {
  allowOnly(p, ["data_dir", "database_url"]);
  const [file] = p.positionals;
  if (!file || p.positionals.length !== 1) throw new UsageError("usage: assay backup FILE [--data-dir DIR]");
  if (existsSync(file)) throw new AppError(409, "conflict", `${file} exists; choose a new file name.`);
  if (p.flags.database_url || process.env.ASSAY_DATABASE_URL)
    throw new AppError(
      400,
      "invalid_request",
      'On PostgreSQL, back up with PostgreSQL\'s own tools: pg_dump --format=custom --file FILE "$ASSAY_DATABASE_URL" (restore with pg_restore), or the continuous archiving your operations team runs. See docs/postgres.md.',
    );
  await withDeps(p, async (d) => {
    if (d.db.dialect !== "sqlite") return;
    d.db.raw.query("VACUUM INTO ?").run(file);
    print(`Backup written to ${file}.`);
  });
}
