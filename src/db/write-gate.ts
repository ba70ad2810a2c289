// Commits that can wait for the checkpoint thread. A WAL restart (src/db/checkpoint-worker.ts)
// holds the write lock while it copies the last frames and syncs the file: a writer that begins
// meanwhile gets SQLITE_BUSY and SQLite's busy handler puts the whole thread to sleep, 1 + 2 + 5
// (+ 10) ms. On the server's main thread that froze every request in flight, about once a second
// under the sync benchmark: most of its p99 (strace, docs/benchmarks.md). So the restart asks
// first: the group commit (src/runs/batch.ts) holds its next commit — requests go on being served,
// their writes gather — and the restart runs with no writer waiting.
import type { Database } from "bun:sqlite";

export interface WriteGate {
  /** True while the checkpoint thread restarts the WAL: a deferrable commit waits. */
  readonly held: boolean;
  /** Runs `fn` once the gate is open (at once if it is). */
  whenOpen(fn: () => void): void;
  hold(): void;
  /** Opens the gate and runs what waited, in order. */
  release(): void;
}

function createWriteGate(): WriteGate {
  let held = false;
  let waiting: (() => void)[] = [];
  return {
    get held() {
      return held;
    },
    whenOpen(fn) {
      if (held) waiting.push(fn);
      else fn();
    },
    hold() {
      held = true;
    },
    release() {
      if (!held) return;
      held = false;
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
