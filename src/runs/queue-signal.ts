// Waking the other nodes when runs are queued (PostgreSQL). A node that commits queued runs sends
// a NOTIFY (at most one per turn of the event loop, whatever the number of runs); every node
// LISTENs and claims on the signal. Notifications are not durable — one sent while a node's
// listening connection reconnects is lost — so each node also looks at the queue every
// POLL_MS and recounts it for backpressure. On SQLite there is one node: nothing to signal.
import type { AnyDb } from "../db/open.ts";
import type { Logger } from "../lib/log.ts";

export const CHANNEL = "assay_queue";
export const POLL_MS = 1000;

export interface QueueSignal {
  /** Runs were queued here: tell the others (debounced). */
  announce(): void;
  /** `poll` true: the periodic look (also a moment to recount the queue), false: a signal. */
  start(onSignal: (poll: boolean) => void): Promise<void>;
  stop(): Promise<void>;
}

export function createQueueSignal(db: AnyDb, log: Logger): QueueSignal {
  if (db.dialect !== "postgres") return { announce() {}, async start() {}, async stop() {} };
  let pending = false;
  let unlisten: (() => Promise<void>) | null = null;
  let poll: Timer | null = null;
  return {
    announce() {
      if (pending) return;
      pending = true;
      setImmediate(() => {
        pending = false;
        db.sql.notify(CHANNEL, "").catch((e) => log.debug("queue notify failed", { error: String(e) }));
      });
    },
    async start(onSignal) {
      const sub = await db.sql.listen(
        CHANNEL,
        () => onSignal(false),
        () => onSignal(false),
      );
      unlisten = () => sub.unlisten();
      poll = setInterval(() => onSignal(true), POLL_MS);
      poll.unref?.();
    },
    async stop() {
      if (poll) clearInterval(poll);
      await unlisten?.().catch(() => {});
    },
  };
}
