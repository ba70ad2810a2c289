// GET /metrics (Prometheus text). Public when ASSAY_METRICS_ENABLED=true (scrapers on a trusted
// network); otherwise it needs an instance administrator's token.
import { Elysia } from "elysia";
import { DatabaseUnavailable, count } from "../db/program.ts";
import type { Deps } from "../deps.ts";
import type { authPlugin } from "../http/auth.ts";
import { requireInstanceAdmin } from "../orgs/access.ts";
import { type OperationDetail, describe, errorRefs } from "../http/openapi/components.ts";
import type { ThreadTotals } from "../http/threads/sharing.ts";
import type { AfterFinal } from "../runs/final-commit.ts";
import type { Metrics } from "./registry.ts";

const TEXT = { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" };

export function metricsRoutes(deps: Deps, metrics: Metrics, auth: ReturnType<typeof authPlugin>) {
  const detail: OperationDetail = {
    tags: ["Health"],
    operationId: "getMetrics",
    summary: "Prometheus metrics (public if metrics_enabled, else instance admin)",
    responses: {
      200: {
        description: "The Prometheus text exposition format",
        content: { "text/plain": { schema: { type: "string" } } },
      },
    },
  };
  if (deps.config.metrics_enabled)
    return new Elysia().get(
      "/metrics",
      async () => new Response(await metrics.renderAsync(), { headers: TEXT }),
      { detail: describe({ ...detail, security: [] }) },
    );
  return new Elysia().use(auth).get(
    "/metrics",
    async ({ principal }) => {
      requireInstanceAdmin(principal);
      return new Response(await metrics.renderAsync(), { headers: TEXT });
    },
    {
      auth: true,
      detail: describe({ ...detail, responses: { ...detail.responses, ...errorRefs(401, 403, 429) } }),
    },
  );
}

/**
 * Wires the gauges and counters to the executor and the queue. `threads`: what the HTTP threads
 * did themselves (ASSAY_HTTP_THREADS > 1, src/http/threads/sharing.ts), counted with this thread's.
 */
export function instrument(deps: Deps, metrics: Metrics, threads?: ThreadTotals) {
  // Refreshed before each render (src/metrics/routes.ts renders after refresh()). While the
  // database is away the three gauges are left out of the scrape (null), not the whole answer: the
  // rest (the 503s counted meanwhile) is what an operator reads then.
  let onDisk: { queued: number; running: number; deliveries: number } | null = null;
  metrics.beforeRender(async () => {
    try {
      onDisk = await deps.db.exec(
        (function* () {
          return {
            queued: yield* count("SELECT count(*) AS n FROM runs WHERE status = 'queued'"),
            running: yield* count("SELECT count(*) AS n FROM runs WHERE status = 'running'"),
            deliveries: yield* count("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'"),
          };
        })(),
      );
    } catch (e) {
      if (!(e instanceof DatabaseUnavailable)) throw e;
      onDisk = null;
    }
  });
  metrics.gauge("assay_runs_queued", "Runs waiting for a worker (the queue depth).", () =>
    onDisk ? [[{}, onDisk.queued + deps.executor.stats().memoryQueued]] : [],
  );
  metrics.gauge("assay_runs_running", "Runs being executed.", () =>
    onDisk ? [[{}, onDisk.running + deps.executor.stats().memoryRunning]] : [],
  );
  metrics.gauge(
    "assay_webhook_deliveries_pending",
    "Webhook deliveries not yet finished (due, waiting for a retry, or being attempted), every node's.",
    () => (onDisk ? [[{}, onDisk.deliveries]] : []),
  );
  metrics.gauge(
    "assay_webhook_attempts_in_flight",
    "Webhook delivery attempts this server has under way.",
    () => [[{}, deps.webhookDispatcher.stats().inFlight]],
  );
  metrics.gauge(
    "assay_webhook_attempts_total",
    "Webhook delivery attempts this server made since start, by result (failed: any answer but 2xx, a timeout, a refused address).",
    () => {
      const a = deps.webhookDispatcher.stats().attempts;
      return [
        [{ result: "succeeded" }, a.succeeded],
        [{ result: "failed" }, a.failed],
      ];
    },
    "counter",
  );
  metrics.gauge(
    "assay_webhook_deliveries_total",
    "Webhook deliveries this server finished since start, by final status (failed: retries exhausted or 410 Gone).",
    () => {
      const d = deps.webhookDispatcher.stats().deliveries;
      return [
        [{ status: "succeeded" }, d.succeeded],
        [{ status: "failed" }, d.failed],
      ];
    },
    "counter",
  );
  metrics.gauge(
    "assay_db_statements_total",
    "Database statements this server ran (on PostgreSQL each is a round trip).",
    () => [[{}, deps.db.stats.statements + (threads?.statements ?? 0)]],
    "counter",
  );
  metrics.gauge(
    "assay_db_transactions_total",
    "Database transactions this server ran (group commits count once).",
    () => [[{}, deps.db.stats.transactions + (threads?.transactions ?? 0)]],
    "counter",
  );
  metrics.gauge("assay_workers", "Validation workers, by state.", () => {
    const s = deps.executor.stats();
    return [
      [{ state: "busy" }, s.busy],
      [{ state: "idle" }, s.size - s.busy],
    ];
  });
  metrics.gauge(
    "assay_jobs_inline_total",
    "Validation jobs run inline on an HTTP thread (small JSON, linear-time steps) since start.",
    () => [[{}, deps.executor.stats().inlineJobs + (threads?.inlineJobs ?? 0)]],
    "counter",
  );
  deps.executor.afterFinal.push(countFinals(metrics));
}

/** Counts a final run and its steps' durations (an after-final hook: the main thread's and an HTTP thread's). */
export function countFinals(metrics: Metrics): AfterFinal {
  return (e, _ms, steps) => {
    metrics.runsFinished.inc({ status: e.status });
    for (const st of steps)
      if (st.duration_ms != null)
        metrics.stepDuration.observe({ validator: st.validator, status: st.status }, st.duration_ms / 1000);
  };
}
