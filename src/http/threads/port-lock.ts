// One server per port. With several HTTP threads every listener sets SO_REUSEPORT, and the kernel
// would then let a second process of the same user join the port and split the connections
// between two databases (issue #22 forbids it). So a server that listens with SO_REUSEPORT first
// takes a lock on the host and port: an OS file lock in the temp dir, held like the data dir's
// (src/db/lock.ts: SQLite's EXCLUSIVE lock on a file of its own, dropped by the kernel however
// the process ends). A server without SO_REUSEPORT needs none: the kernel refuses any second bind
// next to it, with or without the option.
import { unlinkSync } from "node:fs";
import { holdFileLock } from "../../db/lock.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PortLock {
  release(): void;
}

/** The lock file of a host and port (per user: SO_REUSEPORT joins only sockets of one user). */
export function portLockPath(host: string, port: number): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  const safeHost = host.replace(/[^A-Za-z0-9.-]/g, "_");
  return join(tmpdir(), `assay-port-${uid}-${safeHost}-${port}.lock`);
}

/** Takes the port's lock, or returns null at once when another server holds it. */
export function lockPort(host: string, port: number): PortLock | null {
  const db = holdFileLock(portLockPath(host, port));
  if (!db) return null;
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // The file stays: removing it while another server opens it would let two hold "the" lock.
      db.close();
    },
  };
}

/**
 * Removes a lock file no server holds, taking its lock first; false when one does (or the file is
 * gone). For tools that start servers on passing ports (the tests, the bench), which would
 * otherwise leave a file per port: a server never removes its own (see release above).
 */
export function removeStaleLockFile(path: string): boolean {
  try {
    const lock = holdFileLock(path);
    if (!lock) return false;
    unlinkSync(path);
    lock.close();
    return true;
  } catch {
    return false;
  }
}
