// One server per data dir. Two servers on one database would each believe their in-memory state
// (queues, caches, runs executing from memory) is the truth. The lock is an OS file lock, held
// through SQLite on a file of its own (`server.lock`, EXCLUSIVE locking mode, a transaction that
// stays open): the kernel drops it when the process ends, however it ends, so a crash never leaves
// a stale lock behind and no PID can be mistaken for a live holder. `server.pid` next to it names
// the holder for the message. The admin CLI opens only assay.db and keeps working beside a server.
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createOwnerOnly, dataDirError } from "./dir-access.ts";
import { ensureDataDir } from "./dir-access.ts";

export const LOCK_FILE = "server.lock";
export const PID_FILE = "server.pid";

export class DataDirLockedError extends Error {
  override name = "DataDirLockedError";
  constructor(
    readonly dir: string,
    readonly pid: number | null,
  ) {
    super(
      `the data directory ${dir} is in use by another Assay server${pid ? ` (PID ${pid})` : ""}; stop it or choose another --data-dir`,
    );
  }
}

export interface DataDirLock {
  release(): void;
}

function holderPid(dir: string): number | null {
  try {
    const n = Number(readFileSync(join(dir, PID_FILE), "utf8").trim());
    return Number.isSafeInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/**
 * An OS lock on `path` (SQLite's EXCLUSIVE lock in a transaction left open), or null at once
 * when another process holds it. Close the handle to let go; the kernel does when we exit.
 */
export function holdFileLock(path: string): Database | null {
  createOwnerOnly(path);
  const db = new Database(path, { create: true });
  try {
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    return db;
  } catch (e) {
    db.close();
    if (String((e as { code?: string }).code).startsWith("SQLITE_BUSY")) return null;
    throw e;
  }
}

/** Takes the data dir's lock or throws DataDirLockedError at once (no waiting). */
export function lockDataDir(dir: string): DataDirLock {
  ensureDataDir(dir);
  let got: Database | null = null;
  try {
    got = holdFileLock(join(dir, LOCK_FILE));
    if (got) writeFileSync(join(dir, PID_FILE), `${process.pid}\n`, { mode: 0o600 });
  } catch (e) {
    got?.close();
    throw dataDirError(dir, LOCK_FILE, e);
  }
  if (!got) throw new DataDirLockedError(dir, holderPid(dir));
  const db = got;
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // Only our own PID file: after a crash of ours, a newer server may have written its own.
      if (holderPid(dir) === process.pid) rmSync(join(dir, PID_FILE), { force: true });
      db.close();
    },
  };
}

/**
 * For the CLI, which works beside a running server but must not upgrade the schema under one:
 * `running` when a server holds `dir` now (its PID when known); otherwise a hold that keeps any
 * server from starting on `dir` until released (a server starting meanwhile is told the dir is in
 * use), so none can start between this check and the upgrade. Read-only: a shared lock on
 * server.lock (the server's is exclusive), which needs no write access to the file and which
 * several CLI commands can hold at once.
 */
export function holdOffServers(dir: string): { running: { pid: number | null } } | { release(): void } {
  const none = { release() {} };
  const path = join(dir, LOCK_FILE);
  if (!existsSync(path)) return none;
  let db: Database;
  try {
    db = new Database(path, { readonly: true });
  } catch {
    return none;
  }
  try {
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("BEGIN");
    db.query("SELECT count(*) FROM sqlite_schema").get();
  } catch (e) {
    db.close();
    if (String((e as { code?: string }).code).startsWith("SQLITE_BUSY"))
      return { running: { pid: holderPid(dir) } };
    return none;
  }
  return {
    release() {
      db.close();
    },
  };
}
