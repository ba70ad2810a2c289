// Waking the other nodes when runs are queued (PostgreSQL). A node that commits queued runs sends
// a NOTIFY (at most one per turn of the event loop, whatever the number of runs); every node
// LISTENs and claims on the signal. Notifications are not durable — one sent while a node's
// listening connection reconnects is lost — so each node also looks at the queue every
// POLL_MS and recounts it for backpressure. On SQLite there is one node: nothing to signal.
import type { AnyDb } from "../db/open.ts";
import type { Logger } from "../lib/log.ts";

export const CHANNEL = "assay_queue";
/** A cancel for the node that executes the run (executor.ts, handOff): its payload is the request. */
export const CANCEL_CHANNEL = "assay_cancel";
export const POLL_MS = 1000;

export interface QueueSignal {
  /** Runs were queued here: tell the others (debounced). */
  announce(): void;
  /** Asks every node to cancel a run it executes (the payload names it); false when not sent. */
  requestCancel(payload: string): Promise<boolean>;
  /**
   * `poll` true: the periodic look (also a moment to recount the queue), false: a signal.
   * `onCancel`: a cancel request another node sent.
   */
  start(onSignal: (poll: boolean) => void, onCancel?: (payload: string) => void): Promise<void>;
  stop(): Promise<void>;
}

export function createQueueSignal(db: AnyDb, log: Logger): QueueSignal {
  if (db.dialect !== "postgres")
    return { announce() {}, requestCancel: async () => false, async start() {}, async stop() {} };
  let pending = false;
  const unlisten: (() => Promise<void>)[] = [];
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
    async requestCancel(payload) {
      try {
        await db.sql.notify(CANCEL_CHANNEL, payload);
        return true;
      } catch (e) {
        log.debug("cancel notify failed", { error: String(e) });
        return false;
      }
    },
    async start(onSignal, onCancel) {
      const sub = await db.sql.listen(
        CHANNEL,
        () => onSignal(false),
        () => onSignal(false),
      );
      unlisten.push(() => sub.unlisten());
      if (onCancel) {
        const cancels = await db.sql.listen(CANCEL_CHANNEL, (payload: string) => onCancel(payload));
        unlisten.push(() => cancels.unlisten());
      }
      poll = setInterval(() => onSignal(true), POLL_MS);
      poll.unref?.();
    },
    async stop() {
      if (poll) clearInterval(poll);
      for (const u of unlisten.splice(0)) await u().catch(() => {});
    },
  };
}
