// One server per data dir. Two servers on one database would each believe their in-memory state
// (queues, caches, runs executing from memory) is the truth. The lock is an OS file lock, held
// through SQLite on a file of its own (`server.lock`, EXCLUSIVE locking mode, a transaction that
// stays open): the kernel drops it when the process ends, however it ends, so a crash never leaves
// a stale lock behind and no PID can be mistaken for a live holder. `server.pid` next to it names
// the holder for the message. The admin CLI opens only assay.db and keeps working beside a server.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { dataDirError } from "./dir-access.ts";

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
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let got: Database | null = null;
  try {
    got = holdFileLock(join(dir, LOCK_FILE));
    if (got) writeFileSync(join(dir, PID_FILE), `${process.pid}\n`);
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

/** The files a server start writes into an empty data dir; nothing else is ever removed. */
const START_FILES = ["assay.db", "assay.db-wal", "assay.db-shm", "assay.db-journal", LOCK_FILE, PID_FILE];

/**
 * Called before a start: the topmost directory of `dir` that does not exist yet (the one
 * `mkdir -p` creates first), or null when `dir` exists.
 */
export function firstMissingDir(dir: string): string | null {
  let d = resolve(dir);
  let missing: string | null = null;
  while (!existsSync(d)) {
    missing = d;
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  return missing;
}

/**
 * After a start that failed (a port in use, a bad setting found late): the directories that
 * start created are removed again, so a mistyped `--data-dir` leaves nothing behind. Only the
 * files a start writes are deleted and only empty directories removed; anything else found there
 * (written by someone else meanwhile) keeps the directory.
 */
export function removeCreatedDataDir(dir: string, created: string | null): void {
  if (!created) return;
  const leaf = resolve(dir);
  for (const f of START_FILES) rmSync(join(leaf, f), { force: true });
  for (let d = leaf; ; d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return;
    }
    if (d === created || dirname(d) === d) return;
  }
}
