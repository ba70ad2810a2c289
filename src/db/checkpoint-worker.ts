// Entry point of the checkpoint thread (src/db/checkpointer.ts). Its own connection copies the
// WAL into the database file on a timer, so the server's writer never pays for a checkpoint
// inside a request. PASSIVE: it never waits for, nor blocks, the writer.
//
// PASSIVE alone never bounds the WAL under steady writes: SQLite starts the WAL over from its
// beginning only when a write begins while every frame is copied back, and with commits ~1 ms
// apart the copy never catches up. Measured: 550 MB of WAL after 10 s of the sync benchmark, each
// new frame extending the file (the kernel zeroes every new block: ~3 % of the server's CPU).
// So once the WAL holds more than `restartFrames`, a RESTART follows the PASSIVE: it holds new
// writes off while it copies the few frames PASSIVE left and syncs the file, and makes the next
// commit reuse the file from its start. A writer that began meanwhile would sleep in SQLite's busy
// handler (1 + 2 + 5 ms, and on): so the thread asks first ("restart-wanted"), the server holds its
// group commit (src/db/write-gate.ts) and answers "restart-go", and the RESTART finds no writer.
//
// SQLite syncs the database file only in a checkpoint that reaches the WAL's end: under steady
// writes, only the restart. Its sync then flushed every page the ticks had copied since the last
// restart, while the commits were held. So before asking, the thread syncs the file itself
// (a descriptor the server opened for it, see checkpointer.ts), copies what came meanwhile and
// syncs again: the hold pays for the last frames only.
import { Database } from "bun:sqlite";
import { fsyncSync } from "node:fs";

interface Start {
  type: "start";
  path: string;
  intervalMs: number;
  idleMaxMs: number;
  restartFrames: number;
  /** A read-only descriptor of the database file, or -1: see presync(). */
  fd: number;
}

const scope = self as unknown as Pick<Worker, "postMessage" | "addEventListener">;
let db: Database | null = null;
let timer: Timer | undefined;
let restartFrames = Number.POSITIVE_INFINITY;
let fd = -1;
// The pace, from the start message (src/db/checkpointer.ts holds the defaults).
let busyMs = 0;
let idleMaxMs = 0;
/** The next tick's delay: busyMs while writes come, doubling up to idleMaxMs while none do. */
let delayMs = 0;
/** The WAL's length at the last tick: unchanged and all copied means nothing was written since. */
let lastLog = -1;
/** A restart was asked for and not answered yet: ticks wait for the answer. */
let asked = false;
/** The restart asked for was preceded by presync(). */
let presynced = false;

type Result = { busy: number; log: number; checkpointed: number };

function checkpoint() {
  if (!db || asked) return;
  try {
    const r = db.query<Result, []>("PRAGMA wal_checkpoint(PASSIVE)").get();
    if (r && r.log > restartFrames) {
      presynced = presync();
      asked = true;
      scope.postMessage({ type: "restart-wanted" });
      return;
    }
    const idle = r !== null && r.log === lastLog && r.checkpointed === r.log;
    lastLog = r?.log ?? -1;
    delayMs = idle ? Math.min(delayMs * 2, idleMaxMs) : busyMs;
    scope.postMessage({
      type: "checkpointed",
      frames: r?.checkpointed ?? 0,
      restarted: false,
      nextMs: delayMs,
    });
  } catch (e) {
    // SQLITE_BUSY and the like: the next tick tries again.
    scope.postMessage({ type: "failed", message: String((e as Error)?.message ?? e) });
  }
}

/**
 * Flushes what the ticks copied into the database file, outside the hold (see the top). Twice: the
 * first sync is the long one, and the commits that came during it are copied and flushed by the
 * second. A failed sync costs nothing but time: the RESTART syncs anyway.
 */
function presync(): boolean {
  if (fd < 0) return false;
  try {
    fsyncSync(fd);
    db?.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    fsyncSync(fd);
    return true;
  } catch {
    return false; // the RESTART syncs the file itself
  }
}

/** One tick, then the next after delayMs (setTimeout: the delay changes with the load). */
function tick() {
  checkpoint();
  if (db) timer = setTimeout(tick, delayMs);
}

/** The server holds its commits now: copy the rest and start the WAL over. */
function restart() {
  asked = false;
  if (!db) {
    scope.postMessage({ type: "failed", message: "stopped" }); // the server stops holding at once
    return;
  }
  try {
    const x = db.query<Result, []>("PRAGMA wal_checkpoint(RESTART)").get();
    // Writes are coming (they filled the WAL): keep the busy pace.
    delayMs = busyMs;
    lastLog = -1;
    scope.postMessage({
      type: "checkpointed",
      frames: x?.checkpointed ?? 0,
      restarted: x?.busy === 0,
      presynced,
      nextMs: delayMs,
    });
  } catch (e) {
    scope.postMessage({ type: "failed", message: String((e as Error)?.message ?? e) });
  }
}

scope.addEventListener("message", (event: MessageEvent<Start | { type: "stop" | "restart-go" }>) => {
  const m = event.data;
  if (m.type === "start") {
    db = new Database(m.path);
    // No busy wait, ever: PASSIVE never waits anyway, and a RESTART that cannot have the write
    // lock or waits for a reader (a CLI holding a long read) would hold the server's writes off
    // meanwhile. Without a timeout it gives up at once, copies what it can, and the next tick
    // tries again.
    db.exec("PRAGMA busy_timeout = 0");
    restartFrames = m.restartFrames;
    fd = m.fd;
    busyMs = delayMs = m.intervalMs;
    idleMaxMs = Math.max(m.idleMaxMs, m.intervalMs);
    timer = setTimeout(tick, delayMs);
    scope.postMessage({ type: "started" });
  } else if (m.type === "restart-go") {
    restart();
  } else if (m.type === "stop") {
    clearTimeout(timer);
    db?.close();
    db = null;
    scope.postMessage({ type: "stopped" });
  }
});
