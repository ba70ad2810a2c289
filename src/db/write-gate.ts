// Commits that can wait for the checkpoint thread. A WAL restart (src/db/checkpoint-worker.ts)
// holds the write lock while it copies the last frames and syncs the file: a writer that begins
// meanwhile gets SQLITE_BUSY and SQLite's busy handler puts the whole thread to sleep, 1 + 2 + 5
// (+ 10) ms. On the server's main thread that froze every request in flight, about once a second
// under the sync benchmark: most of its p99 (strace, docs/benchmarks.md). So the restart asks
// first: the group commit (src/runs/batch.ts) holds its next commit — requests go on being served,
// their writes gather — and the restart runs with no writer waiting. The writer thread
// (src/db/writer.ts) holds it too while a group of its own is in flight: the main connection's
// commits then wait their turn instead of meeting the thread's lock. With HTTP threads that
// write on connections of their own (src/http/threads/), the gate also follows the process's
// shared write lock (write-lock.ts): it is held while another thread holds that lock, and a
// holder here holds that lock too.
import type { Database } from "bun:sqlite";
import type { WriteLock } from "./write-lock.ts";

/** Who may hold the gate: each holds it at most once, and releasing twice is harmless. */
export type GateHolder = "checkpoint" | "writer";

export interface WriteGate {
  /**
   * True while anyone holds it (a WAL restart, the writer thread's group, another thread of the
   * process: the shared lock): a deferrable commit waits.
   */
  readonly held: boolean;
  /** Runs `fn` once the gate is open (at once if it is). */
  whenOpen(fn: () => void): void;
  /**
   * Holds it for `by`, then calls `then`: at once when the gate is open, else once it is. With a
   * shared lock, `by` holds that lock until release(by).
   */
  hold(by: GateHolder, then?: () => void): void;
  /** Lets go for `by`; once nobody holds the gate, runs what waited, in order. */
  release(by: GateHolder): void;
  /** The process's shared write lock, when other threads write to the file too. */
  readonly lock: WriteLock | null;
  /** Follows `lock` from now on (set once, before anything is written). */
  share(lock: WriteLock): void;
}

function createWriteGate(): WriteGate {
  const holders = new Set<GateHolder>();
  let waiting: (() => void)[] = [];
  let lock: WriteLock | null = null;
  const open = () => holders.size === 0 && !lock?.heldElsewhere;
  const gate: WriteGate = {
    get held() {
      return !open();
    },
    get lock() {
      return lock;
    },
    share(l) {
      lock = l;
    },
    whenOpen(fn) {
      if (holders.size > 0) waiting.push(fn);
      else if (lock?.heldElsewhere) lock.whenFree(() => gate.whenOpen(fn));
      else fn();
    },
    hold(by, then) {
      if (!lock) {
        holders.add(by);
        then?.();
        return;
      }
      // Taken only once it is free: the holder then owns the shared lock for its whole hold.
      gate.whenOpen(() => {
        if (holders.has(by) || !lock!.tryAcquire()) return gate.hold(by, then);
        holders.add(by);
        then?.();
      });
    },
    release(by) {
      if (!holders.delete(by)) return;
      lock?.release();
      if (holders.size > 0) return;
      const run = waiting;
      waiting = [];
      for (const fn of run) fn();
    },
  };
  return gate;
}

const gates = new WeakMap<Database, WriteGate>();

/** The gate of a connection: shared by its group commit and its checkpointer. */
export function writeGateOf(db: Database): WriteGate {
  let g = gates.get(db);
  if (!g) {
    g = createWriteGate();
    gates.set(db, g);
  }
  return g;
}
