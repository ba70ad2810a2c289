// `assay backup FILE`: a consistent online copy (VACUUM INTO reads one snapshot; the server
// keeps running).
import { existsSync } from "node:fs";
import { AppError } from "../errors.ts";
import { type Parsed, UsageError, allowOnly } from "./args.ts";
import { print, withDeps } from "./context.ts";

export async function backup(p: Parsed) {
  allowOnly(p, ["data_dir"]);
  const [file] = p.positionals;
  if (!file || p.positionals.length !== 1) throw new UsageError("usage: assay backup FILE [--data-dir DIR]");
  if (existsSync(file)) throw new AppError(409, "conflict", `${file} exists; choose a new file name.`);
  await withDeps(p, async (d) => {
    d.db.query("VACUUM INTO ?").run(file);
    print(`Backup written to ${file}.`);
  });
}
