// Commits that can wait for the checkpoint thread. A WAL restart (src/db/checkpoint-worker.ts)
// holds the write lock while it copies the last frames and syncs the file: a writer that begins
// meanwhile gets SQLITE_BUSY and SQLite's busy handler puts the whole thread to sleep, 1 + 2 + 5
// (+ 10) ms. On the server's main thread that froze every request in flight, about once a second
// under the sync benchmark: most of its p99 (strace, docs/benchmarks.md). So the restart asks
// first: the group commit (src/runs/batch.ts) holds its next commit — requests go on being served,
// their writes gather — and the restart runs with no writer waiting. The writer thread
// (src/db/writer.ts) holds it too while a group of its own is in flight: the main connection's
// commits then wait their turn instead of meeting the thread's lock.
import type { Database } from "bun:sqlite";

/** Who may hold the gate: each holds it at most once, and releasing twice is harmless. */
export type GateHolder = "checkpoint" | "writer";

export interface WriteGate {
  /** True while anyone holds it (a WAL restart, the writer thread's group): a deferrable commit waits. */
  readonly held: boolean;
  /** Runs `fn` once the gate is open (at once if it is). */
  whenOpen(fn: () => void): void;
  hold(by: GateHolder): void;
  /** Lets go for `by`; once nobody holds the gate, runs what waited, in order. */
  release(by: GateHolder): void;
}

function createWriteGate(): WriteGate {
  const holders = new Set<GateHolder>();
  let waiting: (() => void)[] = [];
  return {
    get held() {
      return holders.size > 0;
    },
    whenOpen(fn) {
      if (holders.size > 0) waiting.push(fn);
      else fn();
    },
    hold(by) {
      holders.add(by);
    },
    release(by) {
      if (!holders.delete(by) || holders.size > 0) return;
      const run = waiting;
      waiting = [];
      for (const fn of run) fn();
    },
  };
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
