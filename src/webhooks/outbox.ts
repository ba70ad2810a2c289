// Wires the outbox to the executor: event rows are written INSIDE the transaction that writes a
// run's final status (so a final run without its events, or events of a run that did not finish,
// cannot exist), and the dispatcher is woken once that transaction has committed.
import type { Executor, FinalEvent } from "../runs/executor.ts";
import type { WebhookDispatcher } from "./dispatcher.ts";
import type { OutboxStore } from "./outbox-store.ts";
import { eventsForStatus } from "./payload.ts";

/**
 * `executor`: whatever writes final states (the executor, or an HTTP thread's own sync runs,
 * src/http/threads/thread-runs.ts, whose `wake` tells the main thread's dispatcher).
 */
export function attachWebhookOutbox(
  executor: Pick<Executor, "finalHooks" | "afterFinal">,
  outbox: OutboxStore,
  dispatcher: Pick<WebhookDispatcher, "wake">,
) {
  // Most runs have no webhook: wake the dispatcher only when rows were written.
  let enqueued = false;
  executor.finalHooks.push(
    Object.assign(
      function* (e: FinalEvent) {
        if (
          yield* outbox.enqueueRunEvents(
            e.orgId,
            e.workflowId,
            e.runId,
            eventsForStatus(e.status),
            e.finishedAt,
          )
        )
          enqueued = true;
      },
      // An org without webhooks gets no outbox rows: the writer thread may take its runs.
      // Inside the transaction, once a run of the group has read the org's webhooks: none, skip.
      { quiet: (e: FinalEvent) => outbox.quiet(e.orgId), idle: (e: FinalEvent) => outbox.idle(e.orgId) },
    ),
  );
  executor.afterFinal.push(() => {
    if (!enqueued) return;
    enqueued = false;
    dispatcher.wake();
  });
}
