// Runs execution: the runs table is the queue; the executor takes the oldest queued runs while
// the pool has room, feeds them to workers and writes each final state. The main thread is the
// only database writer and never runs a validator itself.
import type { Logger } from "../lib/log.ts";
import type { StepOutcome } from "../jobs/protocol.ts";
import type { SubmittedJob, WorkerPool } from "../jobs/pool.ts";
import { DEFAULT_MAX_FINDINGS } from "../validators/registry.ts";
import type { WorkflowStore } from "../workflows/store.ts";
import type { JobSource, RunStore } from "./store.ts";
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

/** A run this process just committed: launched from memory instead of read back (content included). */
export type FreshRun = Omit<JobSource, "status" | "attempts" | "steps" | "created_at"> & { steps: RunStep[] };

/** Fresh runs kept for launch, at most this many bytes of content; the rest are read back. */
const FRESH_MAX_BYTES = 64 * 1024 * 1024;

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
  /** Every launch() in progress, so close() can wait for their last writes. */
  const launches = new Set<Promise<void>>();
  const fresh = new Map<string, FreshRun>();
  let freshBytes = 0;
  const takeFresh = (id: string) => {
    const f = fresh.get(id);
    if (f) {
      fresh.delete(id);
      freshBytes -= f.content?.byteLength ?? 0;
    }
    return f;
  };
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
    const kept = takeFresh(id);
    if (attempts === null) return; // canceled or taken meanwhile
    if (closed) {
      await store.requeue(id); // shutdown began during the write: the next start runs it
      return;
    }
    const src = kept ?? (await store.source(id));
    if (!src) return;
    const steps = typeof src.steps === "string" ? (JSON.parse(src.steps) as RunStep[]) : src.steps;
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
    // The pool takes (transfers) the buffer. A fresh run's content was read from its request for
    // this run alone: handed over whole, no copy (10 MiB less for a 10 MiB document). A row's
    // buffer, or a view into a larger one, is copied first.
    const c = src.content;
    const whole =
      c.byteOffset === 0 && c.byteLength === c.buffer.byteLength && c.buffer instanceof ArrayBuffer;
    const bytes = (kept && whole ? c.buffer : c.slice().buffer) as ArrayBuffer;
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
    // The worker is free: start the next run now, so its queued → running shares a commit with
    // this run's final state.
    void dispatch();
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
          // The store counts queued runs exactly (every status write goes through it): an empty
          // queue costs no query.
          if (!(await store.queuedCount())) break;
          const ids = (await store.queuedIds(capacity)).filter((id) => !flights.has(id));
          if (!ids.length) break;
          for (const id of ids.slice(0, capacity - flights.size)) {
            // Reserve the slot before the awaits in launch() so the loop cannot overfill.
            flights.set(id, { job: null, steps: [], startedMs: performance.now(), canceled: null });
            const p = launch(id)
              .catch((e) =>
                log.error("run execution failed", { run: id, error: String((e as Error)?.stack ?? e) }),
              )
              .finally(() => {
                launches.delete(p);
                if (flights.get(id)?.job === null && !flights.get(id)?.steps.length) flights.delete(id);
                void dispatch();
              });
            launches.add(p);
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
      // Runs given up end in error like any other: webhooks (outbox, same transaction) and metrics.
      const events = (runs: { id: string; org_id: number; workflow_id: number }[]) =>
        runs.map((r) => ({
          runId: r.id,
          orgId: r.org_id,
          workflowId: r.workflow_id,
          status: "error" as const,
        }));
      const r = await store.recover(opts.maxAttempts, (failed) => {
        for (const e of events(failed)) for (const h of finalHooks) h(e);
      });
      for (const e of events(r.failed)) for (const h of afterFinal) h(e, 0, []);
      if (r.requeued || r.failed.length)
        log.info("recovered unfinished runs", { requeued: r.requeued, failed: r.failed.length });
      void dispatch();
    },
    /** A new run was committed: start it if there is room. `run` saves reading it back. */
    notify(run?: FreshRun) {
      if (run && !closed && freshBytes + (run.content?.byteLength ?? 0) <= FRESH_MAX_BYTES) {
        fresh.set(run.id, run);
        freshBytes += run.content?.byteLength ?? 0;
      }
      void dispatch();
    },
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
          if (!set.size && waiters.get(id) === set) waiters.delete(id);
          resolve(false);
        }, ms);
        set.add(done);
        waiters.set(id, set);
        // It may have finished before we started waiting (not if it is still in flight or fresh:
        // those are certainly not final yet).
        if (!flights.has(id) && !fresh.has(id))
          void store.status(id).then((status) => {
            if (status && status !== "queued" && status !== "running") {
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
      if (await finish(id, orgId, workflowId, "canceled", steps, reason, performance.now(), "queued")) {
        takeFresh(id);
        return true;
      }
      return flights.has(id) ? this.cancel(id, orgId, workflowId, reason) : false;
    },
    stats: () => ({ inFlight: flights.size, ...pool.stats() }),
    async close(deadlineMs: number) {
      closed = true;
      fresh.clear();
      freshBytes = 0;
      await pool.close(deadlineMs);
      // Let launch() continuations commit their final states or requeues before the database
      // closes (their writes are grouped, so they settle a tick later).
      await Promise.race([Promise.allSettled([...launches]), Bun.sleep(2000)]);
    },
  };
}
export type Executor = ReturnType<typeof createExecutor>;
