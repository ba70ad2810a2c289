// Entry point of the checkpoint thread (src/db/checkpointer.ts). Its own connection copies the
// WAL into the database file on a timer, so the server's writer never pays for a checkpoint
// inside a request. PASSIVE: it never waits for, nor blocks, the writer.
import { Database } from "bun:sqlite";

interface Start {
  type: "start";
  path: string;
  intervalMs: number;
}

const scope = self as unknown as Pick<Worker, "postMessage" | "addEventListener">;
let db: Database | null = null;
let timer: Timer | undefined;

function checkpoint() {
  if (!db) return;
  try {
    const r = db
      .query<{ busy: number; log: number; checkpointed: number }, []>("PRAGMA wal_checkpoint(PASSIVE)")
      .get();
    scope.postMessage({ type: "checkpointed", frames: r?.checkpointed ?? 0 });
  } catch (e) {
    // SQLITE_BUSY and the like: the next tick tries again.
    scope.postMessage({ type: "failed", message: String((e as Error)?.message ?? e) });
  }
}

scope.addEventListener("message", (event: MessageEvent<Start | { type: "stop" }>) => {
  const m = event.data;
  if (m.type === "start") {
    db = new Database(m.path);
    db.exec("PRAGMA busy_timeout = 1000");
    timer = setInterval(checkpoint, m.intervalMs);
    scope.postMessage({ type: "started" });
  } else if (m.type === "stop") {
    clearInterval(timer);
    db?.close();
    db = null;
    scope.postMessage({ type: "stopped" });
  }
});
