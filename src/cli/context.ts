// Shared by the headless admin commands: open the data dir (the server may be running — WAL and
// a busy timeout make that safe) and build the same services the server uses.
import { loadConfig } from "../config.ts";
import { openDb } from "../db/open.ts";
import { createDeps, type Deps } from "../deps.ts";
import { createLogger } from "../lib/log.ts";
import type { Parsed } from "./args.ts";

/** The settings of a command on a database: --data-dir or --database-url, else the environment. */
export const configOf = (p: Parsed) => {
  const flags: Record<string, string> = {};
  if (p.flags.data_dir) flags.data_dir = p.flags.data_dir;
  if (p.flags.database_url) flags.database_url = p.flags.database_url;
  return loadConfig(process.env, flags);
};

export async function withDeps<T>(p: Parsed, fn: (deps: Deps) => Promise<T>): Promise<T> {
  const config = configOf(p);
  const db = await openDb(config);
  const deps = createDeps(config, db, createLogger("warn"));
  try {
    return await fn(deps);
  } finally {
    await deps.tokens.close();
    await db.close();
  }
}

/** `30d`, `12h`, `90` (days) → days; null when absent. */
export function parseDuration(s: string | undefined): number | null {
  if (s === undefined) return null;
  const m = /^(\d{1,6})([dhw]?)$/.exec(s.trim());
  if (!m) throw new Error(`"${s}" is not a duration like 30d, 2w or 12h`);
  const n = Number(m[1]);
  const days = m[2] === "h" ? n / 24 : m[2] === "w" ? n * 7 : n;
  if (days <= 0) throw new Error("the duration must be positive");
  return days;
}

export const print = (s: string) => process.stdout.write(`${s}\n`);
export const table = (rows: Record<string, unknown>[], cols: string[]) => {
  if (!rows.length) return print("(none)");
  const w = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? "").length)));
  print(cols.map((c, i) => c.toUpperCase().padEnd(w[i]!)).join("  "));
  for (const r of rows) print(cols.map((c, i) => String(r[c] ?? "").padEnd(w[i]!)).join("  "));
};
