// Runs execution: the runs table is the queue; the executor takes the oldest queued runs while
// the pool has room, feeds them to workers and writes each final state. The main thread is the
// only database writer and never runs a validator itself.
import type { Logger } from "../lib/log.ts";
import type { StepOutcome } from "../jobs/protocol.ts";
import type { SubmittedJob, WorkerPool } from "../jobs/pool.ts";
import { DEFAULT_MAX_FINDINGS } from "../validators/registry.ts";
import type { WorkflowStore } from "../workflows/store.ts";
import type { RunStore } from "./store.ts";
import { applyOutcome, finalStatus, summarize } from "./summary.ts";
import type { RunStatus, RunStep } from "./types.ts";

export interface FinalEvent {
  runId: string;
  orgId: number;
  workflowId: number;
  status: RunStatus;
}

interface Flight {
  job: SubmittedJob | null;
  steps: RunStep[];
  startedMs: number;
  canceled: string | null;
}

export interface ExecutorOptions {
  stepTimeoutMs: number;
  stepTimeoutMaxMs: number;
  maxAttempts: number;
}

export function createExecutor(
  store: RunStore,
  workflows: WorkflowStore,
  pool: WorkerPool,
  log: Logger,
  opts: ExecutorOptions,
) {
  const flights = new Map<string, Flight>();
  const waiters = new Map<string, Set<() => void>>();
  /** Called inside the transaction that writes a final status (webhook outbox). */
  const finalHooks: ((e: FinalEvent) => void)[] = [];
  /** Called after a final status is committed (metrics, live views). */
  const afterFinal: ((e: FinalEvent, durationMs: number, steps: RunStep[]) => void)[] = [];
  // One run per worker: a run is "running" only while a worker has it (no hidden pool queue).
  const capacity = pool.stats().size;
  let dispatching = false;
  let again = false;
  let closed = false;

  const wake = (id: string) => {
    const set = waiters.get(id);
    if (!set) return;
    waiters.delete(id);
    for (const fn of set) fn();
  };

  async function finish(
    id: string,
    orgId: number,
    workflowId: number,
    status: RunStatus,
    steps: RunStep[],
    error: string | null,
    startedMs: number,
    onlyIf?: RunStatus,
  ) {
    const durationMs = Math.round(performance.now() - startedMs);
    const summary = summarize(steps);
    const ev = { runId: id, orgId, workflowId, status };
    const wrote = await store.finish(
      id,
      { status, steps, summary, error, finishedAt: new Date().toISOString(), durationMs },
      () => {
        for (const h of finalHooks) h(ev);
      },
      onlyIf,
    );
    if (!wrote) return false;
    for (const h of afterFinal) h(ev, durationMs, steps);
    wake(id);
    return true;
  }

  async function launch(id: string) {
    const attempts = await store.markRunning(id);
    if (attempts === null) return; // canceled or taken meanwhile
    const src = await store.source(id);
    if (!src) return;
    const steps = JSON.parse(src.steps) as RunStep[];
    const flight: Flight = {
      job: null,
      steps: steps.map((s) => ({ ...s })),
      startedMs: performance.now(),
      canceled: null,
    };
    flights.set(id, flight);
    const orgId = src.org_id;
    const def = await workflows.version(src.workflow_id, src.workflow_version);
    if (!def || !src.content) {
      flights.delete(id);
      const why = !def
        ? "The workflow version this run was submitted against is missing."
        : "The submission content was purged before the run could execute.";
      await finish(
        id,
        orgId,
        src.workflow_id,
        "error",
        steps.map((s) => ({ ...s, status: "skipped" })),
        why,
        flight.startedMs,
      );
      return;
    }
    const byId = new Map(def.steps.map((s) => [s.id, s]));
    const jobSteps = steps.map((s) => {
      const cfg = byId.get(s.step_id)?.config ?? {};
      return {
        key: `${s.step_id}:${src.workflow_id}:${src.workflow_version}`,
        validator: s.validator,
        config: cfg,
        maxFindings: Number(cfg.max_findings ?? DEFAULT_MAX_FINDINGS),
      };
    });
    const timeouts = steps.map((s) =>
      Math.min(Number(byId.get(s.step_id)?.config.timeout_ms ?? opts.stepTimeoutMs), opts.stepTimeoutMaxMs),
    );
    // A copy the pool may take: the row's buffer may be shared with bun:sqlite.
    const bytes = src.content.slice().buffer as ArrayBuffer;
    const job = pool.submit(
      {
        jobId: id,
        bytes,
        charset: src.charset,
        fileType: src.file_type,
        filename: src.filename,
        failFast: def.fail_fast,
        steps: jobSteps,
      },
      {
        stepTimeoutsMs: timeouts,
        onStepStart: (i) => {
          flight.steps[i] = { ...flight.steps[i]!, status: "running" };
        },
        onStepEnd: (i, o: StepOutcome) => {
          flight.steps[i] = {
            ...flight.steps[i]!,
            status: o.status,
            duration_ms: o.durationMs,
            findings: o.findings,
            error: o.error ?? null,
          };
        },
      },
    );
    flight.job = job;
    const outcome = await job.done;
    flights.delete(id);
    if (outcome.status === "canceled" && outcome.error === "shutdown" && !flight.canceled) {
      await store.requeue(id); // graceful shutdown: the next start runs it
      return;
    }
    const final = applyOutcome(steps, outcome);
    const status = finalStatus(outcome.status, final);
    const error =
      status === "canceled"
        ? (flight.canceled ?? "Canceled.")
        : status === "timed_out" || status === "error"
          ? (outcome.error ?? final.find((s) => s.error)?.error ?? "The run could not finish.")
          : null;
    await finish(id, orgId, src.workflow_id, status, final, error, flight.startedMs);
  }

  async function dispatch() {
    if (dispatching) {
      again = true;
      return;
    }
    dispatching = true;
    try {
      do {
        again = false;
        while (!closed && flights.size < capacity) {
          const ids = (await store.queuedIds(capacity)).filter((id) => !flights.has(id));
          if (!ids.length) break;
          for (const id of ids.slice(0, capacity - flights.size)) {
            // Reserve the slot before the awaits in launch() so the loop cannot overfill.
            flights.set(id, { job: null, steps: [], startedMs: performance.now(), canceled: null });
            launch(id)
              .catch((e) =>
                log.error("run execution failed", { run: id, error: String((e as Error)?.stack ?? e) }),
              )
              .finally(() => {
                if (flights.get(id)?.job === null && !flights.get(id)?.steps.length) flights.delete(id);
                void dispatch();
              });
          }
        }
      } while (again && !closed);
    } finally {
      dispatching = false;
    }
  }

  return {
    finalHooks,
    afterFinal,
    async start() {
      const r = await store.recover(opts.maxAttempts);
      if (r.requeued || r.failed) log.info("recovered unfinished runs", r);
      void dispatch();
    },
    /** A new run was committed: start it if there is room. */
    notify: () => void dispatch(),
    /** Resolves true when the run is final within ms, false otherwise. */
    waitFinal(id: string, ms: number): Promise<boolean> {
      if (ms <= 0) return Promise.resolve(false);
      return new Promise((resolve) => {
        const set = waiters.get(id) ?? new Set();
        const done = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          set.delete(done);
          resolve(false);
        }, ms);
        set.add(done);
        waiters.set(id, set);
        // It may have finished before we started waiting.
        if (!flights.has(id))
          void store.source(id).then((src) => {
            if (src && !["queued", "running"].includes(src.status)) {
              set.delete(done);
              done();
            }
          });
      });
    },
    /** Live step states of a running run, for GET while it executes. */
    live: (id: string): RunStep[] | null => {
      const f = flights.get(id);
      return f?.steps.length ? f.steps : null;
    },
    /** Cancels a queued or running run; false if it is already final. */
    async cancel(id: string, orgId: number, workflowId: number, reason: string): Promise<boolean> {
      const f = flights.get(id);
      if (f) {
        f.canceled = reason;
        if (f.job) f.job.cancel(reason);
        else {
          // Still being prepared: wait for the job handle, then cancel it.
          const t = setInterval(() => {
            if (f.job) {
              clearInterval(t);
              f.job.cancel(reason);
            } else if (!flights.has(id)) clearInterval(t);
          }, 1);
        }
        return true;
      }
      const src = await store.source(id);
      if (src?.status !== "queued") return false;
      const steps = (JSON.parse(src.steps) as RunStep[]).map((s) => ({ ...s, status: "skipped" as const }));
      // Conditional: if the dispatcher took it meanwhile, cancel the flight instead.
      if (await finish(id, orgId, workflowId, "canceled", steps, reason, performance.now(), "queued"))
        return true;
      return flights.has(id) ? this.cancel(id, orgId, workflowId, reason) : false;
    },
    stats: () => ({ inFlight: flights.size, ...pool.stats() }),
    async close(deadlineMs: number) {
      closed = true;
      await pool.close(deadlineMs);
      // Let launch() continuations write their final states or requeue.
      const until = Date.now() + 2000;
      while (flights.size && Date.now() < until) await Bun.sleep(5);
    },
  };
}
export type Executor = ReturnType<typeof createExecutor>;
