// A run's final state, written with what must go in its transaction (the final hooks: the webhook
// outbox) and followed by what must follow its commit (the after-final hooks: metrics, the
// dispatcher's wake-up). The executor (executor.ts) writes every final state through it, and so
// does an HTTP thread for the sync runs it serves itself (src/http/threads/thread-runs.ts).
import type { Program } from "../db/program.ts";
import type { Read } from "../db/writer-protocol.ts";
import type { Logger } from "../lib/log.ts";
import { type DirectRun, type FinalState, runFromMemory } from "./direct.ts";
import type { RunStore } from "./store.ts";
import type { Run, RunStatus, RunStep } from "./types.ts";

/**
 * A program run inside the transaction of every run's final state (the webhook outbox). `quiet`,
 * when given: the reads under which it writes nothing for this event (made now, outside any
 * transaction), or null when it would write or cannot tell — what lets the writer thread take the
 * run (src/db/writer.ts), which repeats those reads inside its transaction.
 */
export type FinalHook = ((e: FinalEvent) => Program<void>) & {
  quiet?: (e: FinalEvent) => Read[] | null;
  /**
   * Called inside the final transaction, synchronously: true when the hook would write nothing
   * for this event, as of what that transaction has read already; false when it cannot tell
   * (then the hook runs). Spares a group commit's later runs the hook's program (~2 µs a run).
   */
  idle?: (e: FinalEvent) => boolean;
};
/** All final hooks of one event, and (`quiet`, `idle`) whether none of them writes. */
export type FinalTx = (() => Program<void>) & { quiet?: () => Read[] | null; idle?: () => boolean };
/** Called after a final status is committed (metrics, live views, the webhook dispatcher). */
export type AfterFinal = (e: FinalEvent, durationMs: number, steps: RunStep[]) => void;

export interface FinalEvent {
  runId: string;
  orgId: number;
  workflowId: number;
  status: RunStatus;
  /** The run's finished_at as written: the webhook events' `timestamp` (docs/webhooks.md). */
  finishedAt: string;
}

export function createFinalCommit(store: RunStore, log: Logger) {
  const finalHooks: FinalHook[] = [];
  const afterFinal: AfterFinal[] = [];
  const inFinalTx = (ev: FinalEvent): FinalTx => {
    const tx: FinalTx = function* (): Program<void> {
      for (const h of finalHooks) yield* h(ev);
    };
    tx.quiet = () => {
      const reads: Read[] = [];
      for (const h of finalHooks) {
        const r = h.quiet?.(ev) ?? null;
        if (!r) return null;
        for (const x of r) reads.push(x);
      }
      return reads;
    };
    tx.idle = () => {
      for (const h of finalHooks) if (!h.idle?.(ev)) return false;
      return true;
    };
    return tx;
  };
  return {
    finalHooks,
    afterFinal,
    inFinalTx,
    /** An inline run's one write, in its final state, then the after-final hooks; null if the write fails. */
    async commitFinal(
      record: DirectRun["record"],
      f: FinalState,
    ): Promise<{ run: Run } | { run: null; checked: boolean }> {
      const ev = {
        runId: record.id,
        orgId: record.orgId,
        workflowId: record.workflowId,
        status: f.status,
        finishedAt: f.finishedAt,
      };
      let sid: number;
      try {
        sid = await store.createFinal(record, f, inFinalTx(ev));
      } catch (e) {
        log.warn("inline run not written; it runs again as a direct run", {
          run: record.id,
          error: String(e),
        });
        return { run: null, checked: false };
      }
      for (const h of afterFinal) h(ev, f.durationMs, f.steps);
      return { run: runFromMemory(record, sid, f) };
    },
  };
}
