// The one writer connection. Pragmas are set once here (STYLE: PocketBase): WAL so readers and
// the CLI never block the server; synchronous=NORMAL on purpose — in WAL a crash loses nothing
// committed, a power loss can lose the last commits; foreign keys on; a busy timeout so the CLI
// and the server can share the file.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { migrate } from "./migrate.ts";

export const DB_FILE = "assay.db";

export function openDatabase(dataDir: string, opts: { readonly?: boolean } = {}): Database {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = new Database(join(dataDir, DB_FILE), { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA temp_store = MEMORY");
  // 2 MB page cache (SQLite's default), set on purpose: 32 MB grew RSS to ~288 MiB under load
  // and 8 MB kept 6–8 MiB more after a 10 MiB submission, neither with a throughput gain (paired
  // runs, docs/benchmarks.md); the OS page cache holds the rest.
  db.exec("PRAGMA cache_size = -2000");
  if (!opts.readonly) migrate(db);
  return db;
}

/** Checkpoint the WAL into the main file and close: used on graceful shutdown. */
export function closeDatabase(db: Database): void {
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}
