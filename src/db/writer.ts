// The writer thread, main thread's side (issue #26: every core for sync runs). On SQLite a commit
// is synchronous: while the main thread writes a group of final runs, it serves nobody. With more
// than one core, a second connection on a thread of its own commits those groups instead
// (writer-thread.ts), so the main thread goes on serving requests meanwhile. It is still one
// writer at a time: while a group is in flight the thread holds the write gate (write-gate.ts),
// and the main connection's own group commit (src/runs/batch.ts) waits for it; the main
// connection begins its transactions IMMEDIATE (src/db/sqlite.ts), so a transaction that read
// first never finds the other connection's commit in its way. A 201 still means committed: a run's
// promise settles on the thread's answer. If the thread dies, what it held fails over to the main
// connection (src/runs/final-rows.ts) and runs are written there from then on.
import type { Database } from "bun:sqlite";
import type { Logger } from "../lib/log.ts";
import { type WriteGate, writeGateOf } from "./write-gate.ts";
import type { FromWriter, RowStatement, ToWriter, WireRun } from "./writer-protocol.ts";

/** How long stop() waits for the thread to close its connection. */
const STOP_WAIT_MS = 5000;

export interface WriterThread {
  /** False once the thread failed or stopped: write on the main connection instead. */
  readonly alive: boolean;
  /** The main connection's write gate, held while a group is in flight. */
  readonly gate: WriteGate;
  /**
   * Commits one group in one transaction; resolves with the submission ids, in order. One group
   * at a time (the caller sends the next after this one settled). On rejection nothing of the
   * group was written.
   */
  commit(runs: WireRun[], rowStatements: RowStatement[]): Promise<number[]>;
  /** Sets the thread's `wal_autocheckpoint` (the checkpoint thread failed: src/db/checkpointer.ts). */
  autoCheckpoint(pages: number): void;
  stop(): Promise<void>;
}

export async function startWriterThread(
  db: Database,
  path: string,
  url: URL | string,
  log: Logger,
): Promise<WriterThread> {
  const gate = writeGateOf(db);
  const worker = new Worker(url);
  const post = (m: ToWriter) => worker.postMessage(m);
  let alive = true;
  let nextId = 0;
  let inFlight: { id: number; resolve(sids: number[]): void; reject(e: Error): void } | null = null;
  const opened = Promise.withResolvers<void>();
  const stopped = Promise.withResolvers<void>();

  const settle = (f: (p: NonNullable<typeof inFlight>) => void) => {
    const p = inFlight;
    inFlight = null;
    // The gate first: a commit of the main connection that waited goes now, before the next group.
    gate.release("writer");
    if (p) f(p);
  };
  const die = (why: string) => {
    if (!alive) return;
    alive = false;
    log.error("writer thread failed; runs are written on the main connection from now on", { error: why });
    settle((p) => p.reject(new Error(`the writer thread failed: ${why}`)));
  };

  worker.addEventListener("message", (e: MessageEvent<FromWriter>) => {
    const m = e.data;
    switch (m.t) {
      case "opened":
        return opened.resolve();
      case "openfailed":
        return opened.reject(new Error(m.message));
      case "committed":
        if (inFlight?.id === m.id) settle((p) => p.resolve(m.sids));
        return;
      case "failed":
        if (inFlight?.id === m.id) settle((p) => p.reject(new Error(m.message)));
        return;
      case "stopped":
        return stopped.resolve();
    }
  });
  worker.addEventListener("error", (e: ErrorEvent) => {
    die(e.message ?? "error");
    opened.reject(new Error(e.message ?? "error"));
    stopped.resolve();
  });
  // The thread's connection checkpoints as the main one does: not at all while the checkpoint
  // thread runs (it set the main connection's to 0), in its commits if that thread failed.
  const auto = db.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get();
  post({ t: "open", path, autoCheckpoint: auto?.wal_autocheckpoint ?? 1000 });
  try {
    await opened.promise;
  } catch (e) {
    alive = false;
    worker.terminate();
    throw e;
  }

  return {
    get alive() {
      return alive;
    },
    gate,
    commit(runs, rowStatements) {
      if (!alive) return Promise.reject(new Error("the writer thread is not running"));
      if (inFlight) return Promise.reject(new Error("a group is in flight already"));
      return new Promise<number[]>((resolve, reject) => {
        const id = ++nextId;
        inFlight = { id, resolve, reject };
        // At once unless another thread of the process holds the shared write lock (write-gate.ts).
        gate.hold("writer", () => post({ t: "group", id, runs, rowStatements }));
      });
    },
    autoCheckpoint(pages) {
      if (alive) post({ t: "autocheckpoint", pages });
    },
    async stop() {
      if (!alive) return;
      alive = false;
      post({ t: "stop" });
      let timer: Timer | undefined;
      await Promise.race([stopped.promise, new Promise((r) => (timer = setTimeout(r, STOP_WAIT_MS)))]);
      clearTimeout(timer);
      // A group still in flight here was not waited for by its caller: it fails over.
      settle((p) => p.reject(new Error("the writer thread stopped")));
      worker.terminate();
    },
  };
}
