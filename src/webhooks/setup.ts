// Builds the webhook feature for one instance: stores, the API service and the dispatcher, and
// (for the server, which has an executor) the outbox writer in the run executor.
import { JOBS, runExclusive } from "../db/exclusive.ts";
import type { AnyDb } from "../db/open.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/log.ts";
import type { Executor } from "../runs/executor.ts";
import type { RunStore } from "../runs/store.ts";
import type { WorkflowStore } from "../workflows/store.ts";
import { createWebhookDispatcher, parseRetryDelays } from "./dispatcher.ts";
import { attachWebhookOutbox } from "./outbox.ts";
import { createOutboxStore } from "./outbox-store.ts";
import { createWebhookService } from "./service.ts";
import { createWebhookStore } from "./store.ts";

/** Finished deliveries are kept this long in the log. */
const RETENTION_DAYS = 30;

export function createWebhooks(
  config: Config,
  db: AnyDb,
  log: Logger,
  deps: { runs: RunStore; workflows: WorkflowStore; executor: Executor | null },
) {
  const outbox = createOutboxStore(db);
  const dispatcher = createWebhookDispatcher(outbox, deps.runs, log, {
    timeoutMs: config.webhook_timeout_ms,
    retryDelaysMs: parseRetryDelays(config.webhook_retry_delays_ms),
    allowPrivate: config.webhook_allow_private,
    disableAfterFailures: config.webhook_disable_after_failures,
    disableAfterDays: config.webhook_disable_after_days,
    retentionDays: RETENTION_DAYS,
    node: config.node_id ?? "node",
    exclusive: (fn) => runExclusive(db, JOBS.webhookPrune, fn),
    // Several nodes: a delivery another node enqueued (and could not send) is due here too.
    idleRecheckMs: db.dialect === "postgres" ? 5_000 : undefined,
  });
  if (deps.executor) attachWebhookOutbox(deps.executor, outbox, dispatcher);
  const service = createWebhookService({
    store: createWebhookStore(db),
    outbox,
    workflows: deps.workflows,
    allowPrivate: config.webhook_allow_private,
    wake: () => dispatcher.wake(),
  });
  return { service, dispatcher };
}
