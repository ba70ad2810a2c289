// WAL checkpoints on their own thread. SQLite's automatic checkpoint runs inside the commit that
// crosses 1,000 WAL pages, on the server's only writer: under sync load that was ~100 µs of the
// main thread per request, measured (docs/benchmarks.md). A timer on a second connection copies
// the WAL instead; pages rewritten many times between two ticks (the tails of the run indexes)
// are copied once. If the thread fails, the writer's automatic checkpoint comes back.
import type { Database } from "bun:sqlite";
import { closeSync, openSync } from "node:fs";
import type { Logger } from "../lib/log.ts";
import { writeGateOf } from "./write-gate.ts";

/**
 * Ticks while writes come. Each tick's copy runs on the server's core (a pinned or one-core
 * server): a long interval makes one long pause of every request in flight, a short one pays a
 * file sync per tick. Measure 1's p99 in alternating rounds on one core, median of 12 (docs/
 * benchmarks.md, tenth pass): 20.4 ms at 100 against 29.5 at 500; 17.0 at 100 against 10.3 at 25,
 * CPU per run +1.3 % (noise); 8.2 at 25 against 8.2 at 10, which costs 10 % more CPU per run.
 */
export const CHECKPOINT_INTERVAL_MS = 25;
/** While nothing is written the interval doubles up to this: an idle server wakes once a second. */
export const CHECKPOINT_IDLE_MAX_MS = 1000;
/**
 * WAL length (frames ≈ 4 KiB) past which a checkpoint also restarts the WAL: ~64 MiB of file. A
 * restart holds the group commit for the last frames' copy and sync (write-gate.ts; the pages
 * copied before are synced before the hold, checkpoint-worker.ts); at 4,000
 * frames that came ~2 times a second under the sync benchmark, at 16,000 a quarter as often
 * (p99 in alternating rounds 9.6 against 10.2 ms and 7.5 against 8.2 ms).
 */
export const RESTART_FRAMES = 16000;
const AUTO_CHECKPOINT_PAGES = 1000; // SQLite's default
/** Commits are held at most this long for a WAL restart, whatever the thread does. */
export const MAX_HOLD_MS = 200;

export interface Checkpointer {
  /** Checkpoints done so far (for tests and metrics). */
  count(): number;
  /** Of those, the ones that also started the WAL over (see checkpoint-worker.ts). */
  restarts(): number;
  /** Of those, the ones whose file was synced before the commits were held (checkpoint-worker.ts). */
  presyncedRestarts(): number;
  /**
   * Calls `fn` with SQLite's page count if the thread fails and the main connection checkpoints
   * in its commits again: another connection that commits (the writer thread) should too.
   */
  onFallback(fn: (pages: number) => void): void;
  /** The delay before the next tick: the interval while writes come, longer while none do. */
  delayMs(): number;
  /**
   * Ticks after which the next came at the interval (they found new frames), for tests: a count
   * cannot be missed the way a delay of 5 ms can, between two looks at it.
   */
  busyTicks(): number;
  stop(): Promise<void>;
  /**
   * Closes the thread's descriptor of the database file. Only once every connection to the file
   * in this process is closed: closing any descriptor of a file drops all of the process's POSIX
   * locks on it, SQLite's included (sqlite.org/howtocorrupt.html, 2.2).
   */
  closeFile(): void;
}

export async function startCheckpointer(
  db: Database,
  path: string,
  url: URL | string,
  log: Logger,
  // maxHoldMs: tests on a busy machine raise it, so that a restart slowed by the load still
  // holds the commits it should (what they check) instead of running out.
  {
    intervalMs = CHECKPOINT_INTERVAL_MS,
    idleMaxMs = CHECKPOINT_IDLE_MAX_MS,
    restartFrames = RESTART_FRAMES,
    maxHoldMs = MAX_HOLD_MS,
  } = {},
): Promise<Checkpointer> {
  let done = 0;
  let restarts = 0;
  let presynced = 0;
  let busy = 0;
  let nextMs = intervalMs;
  let fallback = false;
  // The thread syncs the database file before a restart (checkpoint-worker.ts). Opened here, and
  // closed by closeFile(), never by the thread: see closeFile. Without it (-1) it only syncs later.
  let fd = -1;
  try {
    fd = openSync(path, "r");
  } catch {
    // no file to sync yet: the RESTART syncs it
  }
  const worker = new Worker(url);
  // A restart holds the group commit (write-gate.ts). The message arrives between two turns, so
  // no transaction of this connection is open: the thread may go at once.
  const gate = writeGateOf(db);
  let holdTimer: Timer | undefined;
  const release = () => {
    clearTimeout(holdTimer);
    gate.release("checkpoint");
  };
  const hold = () => {
    // At once unless another thread of the process is writing (the shared lock, write-gate.ts).
    gate.hold("checkpoint", () => {
      holdTimer = setTimeout(release, maxHoldMs);
      worker.postMessage({ type: "restart-go" });
    });
  };
  const fallbackListeners: ((pages: number) => void)[] = [];
  const backToAuto = (why: string) => {
    if (fallback) return;
    fallback = true;
    db.exec(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    for (const fn of fallbackListeners) fn(AUTO_CHECKPOINT_PAGES);
    log.warn("checkpoint thread failed; the writer checkpoints again", { error: why });
  };
  const started = Promise.withResolvers<void>();
  const stopped = Promise.withResolvers<void>();
  worker.addEventListener(
    "message",
    (
      e: MessageEvent<{
        type: string;
        message?: string;
        restarted?: boolean;
        presynced?: boolean;
        nextMs?: number;
      }>,
    ) => {
      if (e.data.type === "started") started.resolve();
      else if (e.data.type === "restart-wanted") hold();
      else if (e.data.type === "checkpointed") {
        release();
        done++;
        if (e.data.restarted) restarts++;
        if (e.data.restarted && e.data.presynced) presynced++;
        if (e.data.nextMs !== undefined) {
          nextMs = e.data.nextMs;
          if (nextMs === intervalMs) busy++;
        }
      } else if (e.data.type === "stopped") stopped.resolve();
      else if (e.data.type === "failed") {
        release();
        log.debug("checkpoint skipped", { error: e.data.message });
      }
    },
  );
  worker.addEventListener("error", (e: ErrorEvent) => {
    release();
    backToAuto(e.message ?? "error");
    started.reject(new Error(e.message));
    stopped.resolve();
  });
  worker.postMessage({ type: "start", path, intervalMs, idleMaxMs, restartFrames, fd });
  try {
    await started.promise;
    db.exec("PRAGMA wal_autocheckpoint = 0");
  } catch {
    // backToAuto already logged; the writer keeps checkpointing itself
  }
  return {
    count: () => done,
    restarts: () => restarts,
    onFallback: (fn) => {
      if (fallback) fn(AUTO_CHECKPOINT_PAGES);
      else fallbackListeners.push(fn);
    },
    presyncedRestarts: () => presynced,
    delayMs: () => nextMs,
    busyTicks: () => busy,
    async stop() {
      if (!fallback) db.exec(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
      worker.postMessage({ type: "stop" });
      await Promise.race([stopped.promise, Bun.sleep(2000)]);
      worker.terminate();
      release();
    },
    closeFile() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
    },
  };
}
