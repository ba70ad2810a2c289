// Runs execution: the runs table is the queue; the executor takes the oldest queued runs while
// the pool has room, feeds them to workers and writes each final state. Runs whose client waits
// for a sync answer wait in memory instead and are written once (src/runs/direct.ts); when both
// queues hold runs the executor alternates, so neither starves. The main thread writes every state
// (on SQLite its final sync runs may be committed by the writer thread, src/db/writer.ts); it runs
// a validator itself only for jobs the inline lane vouches for.
import { audit } from "../audit/append.ts";
import type { Actor, Change } from "../audit/types.ts";
import { DatabaseUnavailable, type Program, RetryableConflict } from "../db/program.ts";
import type { Logger } from "../lib/log.ts";
import type { StepOutcome } from "../jobs/protocol.ts";
import type { InlineRunner } from "../jobs/inline.ts";
import type { SubmitOptions, SubmittedJob, WorkerPool } from "../jobs/pool.ts";
import type { WorkflowStore } from "../workflows/store.ts";
import type { WorkflowVersion } from "../workflows/types.ts";
import { checkInline } from "./inline-check.ts";
import { type FinalTx, createFinalCommit } from "./final-commit.ts";
import { type DirectRun, type FinalState, freshOf, runFromMemory } from "./direct.ts";
import { type FreshRun, buildJob } from "./job.ts";
import { createLeaseKeeper } from "./leases.ts";
import { sweepOrphanContent } from "./orphan-sweep.ts";
import { uuidv7NotBefore } from "../lib/uuid.ts";
import type { GivenUpRun, JobSource, RunStore } from "./store.ts";
import { applyOutcome, finalStatus, stepState, summarize } from "./summary.ts";
import type { Run, RunStatus, RunStep } from "./types.ts";

export type { AfterFinal, FinalEvent, FinalHook, FinalTx } from "./final-commit.ts";

interface Flight {
  /** The run's org: launches are fair across orgs (fill()). */
  org: number;
  job: SubmittedJob | null;
  steps: RunStep[];
  startedMs: number;
  startedAt: string;
  canceled: string | null;
  /** A step of it began on a worker: the attempt the claim counted was used. */
  began?: boolean;
  /** The cancel's audit entry: written with the final state if the run did end canceled. */
  cancelLog?: CancelLog;
}

/** Writes a cancel's audit entry inside the transaction of the run's final state. */
export type CancelLog = (final: RunStatus) => Program<unknown>;

/**
 * A cancel as data: who asks, and the audit entry it makes (its `after` is the final status it
 * caused). Data, so that it can travel to the node that executes the run (handOff).
 */
export interface CancelRequest {
  reason: string;
  actor: Actor;
  change: Change;
}

const logOf =
  (r: CancelRequest): CancelLog =>
  (final) =>
    audit(r.actor, { ...r.change, after: { status: final } });

/**
 * How long a cancel handed to the executing node is awaited at most: it acts within
 * milliseconds, so this bounds only a notification lost (its node's listening connection
 * reconnecting) or a node gone. Not cut short by the node's claim running out: its renewal is
 * timed by that node, and a busy node renews late (a CI run read a live claim as lapsed).
 */
const HAND_OFF_MS = 10_000;

/**
 * Content held in memory for launch (fresh runs and runs waiting in memory), at most this many
 * bytes; beyond it new runs are queued on disk and read back.
 */
const FRESH_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Larger submissions are written before they run even when the client waits: a direct run's
 * bytes are copied to the worker (kept for a late write), and next to validating megabytes the
 * extra commit is noise.
 */
export const DIRECT_MAX_BYTES = 1024 * 1024;

/** Direct runs looked at for a fair pick: a bound on the main thread's work per launch. */
const MEM_FAIR_SCAN = 64;

export interface ExecutorOptions {
  stepTimeoutMs: number;
  stepTimeoutMaxMs: number;
  maxAttempts: number;
  /** This server's name among the nodes sharing the database (claims carry it). */
  node: string;
  /** How long a claim on a running run lasts unless renewed (src/runs/leases.ts). */
  leaseMs: number;
  /**
   * Several nodes may share the database (PostgreSQL): at start only expired claims are
   * recovered (other nodes' runs are alive), and recovery and queue polling run periodically.
   */
  shared: boolean;
  /** Runs small, provably cheap jobs on this thread (src/jobs/inline.ts); null: all go to the pool. */
  inline?: InlineRunner | null;
}

/** The run's error text for its final status (null when it succeeded or failed on findings). */
function runError(
  status: RunStatus,
  outcome: { error?: string | null },
  steps: RunStep[],
  canceled: string | null,
): string | null {
  if (status === "canceled") return canceled ?? "Canceled.";
  if (status === "timed_out" || status === "error")
    return outcome.error ?? steps.find((s) => s.error)?.error ?? "The run could not finish.";
  return null;
}

/** The final-state hooks, then a program of the caller's, in one transaction. */
/** `extra` may write: the combination says nothing about whether it is quiet. */
const withExtra = (base: FinalTx, extra?: () => Program<unknown>): FinalTx =>
  extra
    ? function* (): Program<void> {
        yield* base();
        yield* extra();
      }
    : base;

export function createExecutor(
  store: RunStore,
  workflows: WorkflowStore,
  pool: WorkerPool,
  log: Logger,
  opts: ExecutorOptions,
) {
  const flights = new Map<string, Flight>();
  /** Runs on disk as running that this node holds a claim on (renewed by the lease keeper). */
  const held = new Set<string>();
  let sendCancel: ((payload: string) => Promise<boolean>) | null = null;

  /** Cancels a run this node executes (its job, with the steps' results so far); false if none. */
  function cancelHere(id: string, request: CancelRequest): boolean {
    const f = flights.get(id);
    if (!f) return false;
    f.canceled = request.reason;
    f.cancelLog = logOf(request);
    // Still being prepared: execute() cancels the job as soon as it is submitted.
    f.job?.cancel(request.reason);
    return true;
  }

  /** Asks the other nodes to cancel `id`; true once the run is final (written by its node). */
  async function handOff(id: string, request: CancelRequest): Promise<boolean> {
    // JSON.stringify reads the actor's address now (actorOf may defer it).
    if (!(await sendCancel!(JSON.stringify({ id, request })))) return false;
    const deadline = Date.now() + HAND_OFF_MS;
    while (Date.now() < deadline) {
      await Bun.sleep(25);
      const now = await store.state(id);
      if (now?.status !== "running") return true;
    }
    return false;
  }
  const leases = createLeaseKeeper(
    store,
    log,
    { node: opts.node, leaseMs: opts.leaseMs, recover: opts.shared },
    {
      held: () => [...held],
      lost(ids) {
        for (const id of ids) {
          held.delete(id);
          flights.get(id)?.job?.cancel("Another node took this run over (this node's claim ran out).");
        }
      },
      recover: () => recoverExpired(),
    },
  );
  const waiters = new Map<string, Set<() => void>>();
  /** How each sync wait in progress ends early ("ran out"), by run id: shutdown answers them. */
  const giveUps = new Map<() => void, string>();
  // The final hooks (webhook outbox, in the transaction) and the after-final ones (metrics, live
  // views), shared with the HTTP threads' own sync runs (final-commit.ts).
  const { finalHooks, afterFinal, inFinalTx, commitFinal } = createFinalCommit(store, log);
  // A run is "running" while the pool has it: as many as the pool takes without queueing its own
  // queue — one per worker, plus one small job already handed to each busy worker
  // (src/jobs/pool.ts) — and, beyond, up to one per worker of orgs with nothing in flight (fill()).
  const capacity = pool.capacity;
  const workers = pool.stats().size;
  /** Runs executing from memory, by id, until written and answered (src/runs/direct.ts). */
  const directs = new Map<string, DirectRun>();
  /** Direct runs waiting for a worker, oldest first. */
  const memQueue = new Set<string>();
  let memBytes = 0;
  /** Alternation between the two queues when both hold runs. */
  let memoryTurn = true;
  /** Every launch() in progress, so close() can wait for their last writes. */
  const launches = new Set<Promise<void>>();
  /**
   * The runs of those launches, until their final write is done: never claimed again meanwhile
   * (store.claim), though a run's claim may be gone (this node stopped past its lease).
   */
  const launching = new Set<string>();
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
  /** Closed (shutdown began): no run starts here, and writes are no longer retried. */
  let closed = false;
  /** The start's sweep of slices left without a run, once started (src/runs/orphan-sweep.ts). */
  let orphanSweep: Promise<number> = Promise.resolve(0);

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
    /** null: it never started (a queued run canceled), so it has no duration. */
    startedMs: number | null,
    onlyIf?: RunStatus,
    extra?: () => Program<unknown>,
    /** Whoever holds the run (a cancel of a run another node executes). */
    anyNode = false,
  ) {
    const durationMs = startedMs === null ? null : Math.round(performance.now() - startedMs);
    const summary = summarize(steps);
    const finishedAt = new Date().toISOString();
    const ev = { runId: id, orgId, workflowId, status, finishedAt };
    // The outcome exists only in memory: kept until the database takes it (an outage of
    // PostgreSQL, or a locked SQLite file, passes; a shutdown leaves the run for recovery).
    let wrote: boolean;
    try {
      wrote = await untilStored(() =>
        store.finish(
          id,
          { status, steps, summary, error, finishedAt, durationMs },
          withExtra(inFinalTx(ev), extra),
          onlyIf,
          anyNode ? undefined : opts.node,
        ),
      );
    } finally {
      // Written, refused, or failed for good: the claim is no longer renewed. After a failure
      // the run is still `running` under this node, and a recovery pass puts it back in the
      // queue once the lease runs out (renewed, it stayed running for as long as this node lived).
      held.delete(id);
    }
    if (!wrote) return false;
    for (const h of afterFinal) h(ev, durationMs ?? 0, steps);
    wake(id);
    return true;
  }

  /** The end of a direct run: one insert, already final, unless it was written meanwhile. */
  async function finishDirect(
    d: DirectRun,
    f: FinalState,
    startedMs: number,
    extra?: () => Program<unknown>,
  ) {
    const r = d.record;
    d.ended = true;
    if (d.written) {
      await finish(r.id, r.orgId, r.workflowId, f.status, f.steps, f.error, startedMs, undefined, extra);
      if (d.settled) directs.delete(r.id);
      return;
    }
    const ev = {
      runId: r.id,
      orgId: r.orgId,
      workflowId: r.workflowId,
      status: f.status,
      finishedAt: f.finishedAt,
    };
    d.written = store.createFinal(r, f, withExtra(inFinalTx(ev), extra));
    try {
      d.submissionId = await d.written;
    } catch (e) {
      // Not on disk: the route's settle() writes it queued, so it runs again rather than vanish.
      d.written = null;
      d.ended = false;
      wake(r.id);
      throw e;
    }
    d.result = runFromMemory(r, d.submissionId, f);
    for (const h of afterFinal) h(ev, f.durationMs, f.steps);
    wake(r.id);
  }

  /**
   * Direct runs being written queued by persistQueued, until the write settles: out of `directs`
   * already, not yet readable on disk. settle() waits for the write (a client whose wait ran out
   * while a stop wrote its run read no run at all: 500 instead of 202).
   */
  const persisting = new Map<string, Promise<unknown>>();

  /** Writes a direct run still in memory as an ordinary queued run, launched from memory. */
  function persistQueued(d: DirectRun): Promise<number> {
    const r = d.record;
    if (memQueue.delete(r.id)) memBytes -= r.submission.bytes.byteLength;
    directs.delete(r.id);
    d.written = store.create(r);
    const settled = d.written.then(
      () => {},
      () => {},
    );
    persisting.set(r.id, settled);
    void settled.then(() => {
      if (persisting.get(r.id) === settled) persisting.delete(r.id);
    });
    fresh.set(r.id, freshOf(r));
    freshBytes += r.submission.bytes.byteLength;
    void d.written.then(
      () => dispatch(),
      () => takeFresh(r.id),
    );
    return d.written;
  }

  /**
   * Retries a write the database could not take (it is down, restarting, or locked), with
   * growing delays, until it succeeds or the executor closes; other errors stand.
   */
  async function untilStored<T>(write: () => Promise<T>): Promise<T> {
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        return await write();
      } catch (e) {
        if (closed || !(e instanceof DatabaseUnavailable || e instanceof RetryableConflict)) throw e;
        log.warn("database unavailable; the run's write is retried", { delay_ms: delay });
        await Bun.sleep(delay);
      }
    }
  }

  /** Executes a run this node has just claimed (queued → running is committed). */
  async function launchClaimed(id: string) {
    const kept = takeFresh(id);
    if (closed) {
      held.delete(id);
      await store.requeue(id, opts.node, true); // shutdown began during the write: the next start runs it
      return;
    }
    // Marked running: from here the run must not be dropped by a database outage.
    const src = kept ?? (await untilStored(() => store.source(id)));
    if (!src) return;
    await execute(src, kept !== undefined, null);
  }

  async function launchDirect(d: DirectRun) {
    memBytes -= d.record.submission.bytes.byteLength;
    // Not owned: the bytes are copied to the worker, so the record can still be written (with
    // its content) if the client stops waiting. Direct runs are small (DIRECT_MAX_BYTES).
    await execute(freshOf(d.record), false, d);
  }

  /** Runs one launched run on the pool and writes its end. `d` is set for a direct run. */
  async function execute(src: FreshRun | JobSource, owned: boolean, d: DirectRun | null) {
    const id = src.id;
    // A stored row's steps are pending, each with a findings_count of 0: only their identity is
    // kept, so nothing of the row outlives what this attempt reports (stepState).
    const steps =
      typeof src.steps === "string"
        ? (JSON.parse(src.steps) as RunStep[]).map((s) => stepState(s))
        : src.steps;
    // The slot reserved by track(): the same object, so a cancel that came in meanwhile (it set
    // `canceled` on it) is not lost.
    const flight: Flight = flights.get(id) ?? {
      org: src.org_id,
      job: null,
      steps: [],
      startedMs: 0,
      startedAt: "",
      canceled: null,
    };
    flight.steps = steps.map((s) => ({ ...s }));
    flight.startedMs = performance.now();
    flight.startedAt = new Date().toISOString();
    flights.set(id, flight);
    const orgId = src.org_id;
    const end = async (status: RunStatus, final: RunStep[], error: string | null) => {
      // A cancel is logged with the final state it caused; one that came too late changed nothing.
      const log = flight.cancelLog;
      const extra = log && status === "canceled" ? () => log(status) : undefined;
      if (!d)
        return finish(id, orgId, src.workflow_id, status, final, error, flight.startedMs, undefined, extra);
      const finishedAt = new Date().toISOString();
      const durationMs = Math.round(performance.now() - flight.startedMs);
      await finishDirect(
        d,
        {
          status,
          steps: final,
          summary: summarize(final),
          error,
          startedAt: flight.startedAt,
          finishedAt,
          durationMs,
        },
        flight.startedMs,
        extra,
      );
    };
    const def = await untilStored(() => workflows.version(src.workflow_id, src.workflow_version));
    if (!def || !src.content) {
      flights.delete(id);
      const why = !def
        ? "The workflow version this run was submitted against is missing."
        : "The submission content was purged before the run could execute.";
      await end(
        "error",
        steps.map((s) => ({ ...s, status: "skipped" })),
        why,
      );
      return;
    }
    const { job: spec, timeouts } = buildJob(src, src.content, steps, def, owned, opts);
    const callbacks: SubmitOptions = {
      org: orgId,
      stepTimeoutsMs: timeouts,
      onStepStart: (i) => {
        flight.began = true;
        flight.steps[i] = stepState(flight.steps[i]!, { status: "running" });
      },
      onStepEnd: (i, o: StepOutcome) => {
        flight.steps[i] = stepState(flight.steps[i]!, {
          status: o.status,
          duration_ms: o.durationMs,
          findings: o.findings,
          error: o.error ?? null,
          truncated: o.truncated,
        });
      },
    };
    // Graceful shutdown: the next start runs it. A direct run not yet on disk is written queued
    // (its content went to the worker, so it is taken from the request again).
    const handBack = async () => {
      if (d && !d.written) {
        d.written = store.create(d.record);
        d.ended = true;
        await d.written;
        wake(id);
      } else {
        held.delete(id);
        // Never begun (it waited behind another job, or in the pool): its attempt is given back,
        // or every restart would count one against a run that never ran (max_attempts).
        await store.requeue(id, opts.node, !flight.began);
      }
    };
    if (closed) {
      // Shutdown began while the run was being prepared: it does not start (the pool may be
      // closed already); a cancel that came meanwhile ends it, as it would have on the worker.
      flights.delete(id);
      if (!flight.canceled) await handBack();
      else
        await end(
          "canceled",
          steps.map((s) => ({ ...s, status: "skipped" })),
          flight.canceled,
        );
      return;
    }
    // A small document that passes cheap steps ends here; anything else goes to a worker.
    const job = (d?.skipInline ? null : opts.inline?.submit(spec, callbacks)) ?? pool.submit(spec, callbacks);
    flight.job = job;
    if (flight.canceled) job.cancel(flight.canceled); // canceled while being prepared
    const outcome = await job.done;
    flights.delete(id);
    // The worker is free: start the next run now, so its queued → running shares a commit with
    // this run's final state.
    void dispatch();
    if (outcome.status === "canceled" && outcome.error === "shutdown" && !flight.canceled) {
      await handBack();
      return;
    }
    const final = applyOutcome(steps, outcome);
    const status = finalStatus(outcome.status, final);
    await end(status, final, runError(status, outcome, final, flight.canceled));
  }

  /** After a database outage the queue is tried again later, not in a tight loop. */
  let backoff: Timer | null = null;
  const dispatchLater = () => {
    if (backoff) return;
    backoff = setTimeout(() => {
      backoff = null;
      void dispatch();
    }, 500);
  };

  /** Reserves the run's slot before launch's awaits (so the loop cannot overfill) and tracks it. */
  function track(id: string, org: number, run: () => Promise<void>) {
    launching.add(id);
    flights.set(id, {
      org,
      job: null,
      steps: [],
      startedMs: performance.now(),
      startedAt: "",
      canceled: null,
    });
    let unavailable = false;
    const p = run()
      .catch((e) => {
        unavailable = e instanceof DatabaseUnavailable || e instanceof RetryableConflict;
        if (unavailable) log.warn("database unavailable; the run stays queued", { run: id });
        else log.error("run execution failed", { run: id, error: String((e as Error)?.stack ?? e) });
      })
      .finally(() => {
        launches.delete(p);
        launching.delete(id);
        if (flights.get(id)?.job === null && !flights.get(id)?.steps.length) flights.delete(id);
        if (unavailable) dispatchLater();
        else void dispatch();
      });
    launches.add(p);
  }

  async function dispatch() {
    if (dispatching) {
      again = true;
      return;
    }
    dispatching = true;
    try {
      await fill();
    } catch (e) {
      if (e instanceof DatabaseUnavailable || e instanceof RetryableConflict) dispatchLater();
      else log.error("dispatch failed", { error: String((e as Error)?.stack ?? e) });
    } finally {
      dispatching = false;
    }
  }

  /** This node's runs in flight, by org. */
  function busyOrgs(): Map<number, number> {
    const busy = new Map<number, number>();
    for (const f of flights.values()) busy.set(f.org, (busy.get(f.org) ?? 0) + 1);
    return busy;
  }

  /**
   * The direct run to launch next: the oldest of an org with the fewest runs in flight (only of
   * an org with none when `idleOnly`). Looks at the first MEM_FAIR_SCAN only: past them, oldest.
   */
  function nextDirect(busy: Map<number, number>, idleOnly: boolean): string | undefined {
    let best: string | undefined;
    let bestLoad = Number.POSITIVE_INFINITY;
    let seen = 0;
    for (const id of memQueue) {
      const load = busy.get(directs.get(id)!.record.orgId) ?? 0;
      if (load < bestLoad && (!idleOnly || load === 0)) {
        best = id;
        bestLoad = load;
        if (load === 0) break;
      }
      if (++seen >= MEM_FAIR_SCAN) break;
    }
    return best;
  }

  /**
   * Starts runs while the pool has room, alternating between the two queues, fair across orgs.
   * When it has none, a run of an org with nothing in flight still goes to the pool (up to one
   * per worker beyond its capacity), which starts it before another org's next job: otherwise
   * runs pipelined from a busy org would hold every worker's next turn (docs/execution.md).
   */
  async function fill() {
    do {
      again = false;
      while (!closed && flights.size < capacity + workers) {
        const idleOnly = flights.size >= capacity;
        const busy = busyOrgs();
        // The store counts queued runs exactly (every status write goes through it): an empty
        // queue costs no query.
        const onDisk = await store.claimable();
        const direct = memQueue.size ? nextDirect(busy, idleOnly) : undefined;
        if (direct !== undefined && (memoryTurn || !onDisk)) {
          memQueue.delete(direct);
          memoryTurn = false;
          const d = directs.get(direct)!;
          track(direct, d.record.orgId, () => launchDirect(d));
          continue;
        }
        // Beyond capacity only an idle org's run goes: the turn passes only if one did.
        if (!idleOnly) memoryTurn = true;
        if (!onDisk) break;
        const room = idleOnly ? 1 : capacity - flights.size;
        const claimed = await store.claim(room, leases.claim(), busy, idleOnly, [...launching]);
        if (!claimed.length) {
          if (direct === undefined) break;
          memoryTurn = true; // nothing on disk to take: memory's turn
          continue;
        }
        memoryTurn = true;
        for (const c of claimed) {
          held.add(c.id);
          track(c.id, c.org_id, () => launchClaimed(c.id));
        }
      }
    } while (again && !closed);
  }

  // Runs given up end in error like any other: webhooks (outbox, same transaction) and metrics.
  type Ended = GivenUpRun;
  const events = (runs: Ended[]) =>
    runs.map((r) => ({
      runId: r.id,
      orgId: r.org_id,
      workflowId: r.workflow_id,
      status: "error" as const,
      finishedAt: r.finished_at,
    }));
  function* givenUp(failed: Ended[]): Program<void> {
    for (const e of events(failed)) yield* inFinalTx(e)();
  }
  const afterGivenUp = (failed: Ended[]) => {
    for (const e of events(failed)) for (const h of afterFinal) h(e, 0, []);
  };
  /** Runs of a node that stopped renewing its claims: back to the queue (or ended). */
  async function recoverExpired() {
    const r = await store.recoverExpired(opts.maxAttempts, givenUp);
    afterGivenUp(r.failed);
    if (r.requeued) void dispatch();
    return { requeued: r.requeued, failed: r.failed.length };
  }

  return {
    finalHooks,
    afterFinal,
    /** The final hooks of one event as one program (what createFinal runs in its transaction). */
    inFinalTx,
    async start() {
      // One node (SQLite): every run left running was this process's, before it stopped. Several
      // nodes (PostgreSQL): only runs whose claim ran out; the others' runs are alive.
      // Before anything of this process can create a run: the orphan sweep's bound (SQLite).
      const startedAt = Date.now();
      // The runs this process creates from now on sort at or after it, whatever the clock does.
      uuidv7NotBefore(startedAt);
      const r = opts.shared
        ? await store.recoverExpired(opts.maxAttempts, givenUp, opts.node)
        : await store.recover(opts.maxAttempts, givenUp);
      if (opts.shared) await store.refresh();
      // Not awaited: the server listens meanwhile (src/runs/orphan-sweep.ts). On one SQLite server
      // every run created before this start is done writing; with several nodes, another may be
      // writing one now: an hour is far longer than any submission takes to write its slices.
      orphanSweep = sweepOrphanContent(
        store,
        log,
        opts.shared ? startedAt - 3_600_000 : startedAt,
        () => closed,
      );
      afterGivenUp(r.failed);
      if (r.requeued || r.failed.length)
        log.info("recovered unfinished runs", { requeued: r.requeued, failed: r.failed.length });
      leases.start();
      void dispatch();
    },
    /**
     * Another node may have queued runs (its signal, or the periodic poll, which also recounts
     * the queue for backpressure): look at the queue.
     */
    poke(recount = false) {
      if (closed) return;
      if (!recount) {
        store.maybeQueued();
        void dispatch();
        return;
      }
      void store.refresh().then(
        () => dispatch(),
        () => {}, // the database is away: the next poll tries again
      );
    },
    /** A new run was committed: start it if there is room. `run` saves reading it back. */
    notify(run?: FreshRun) {
      if (run && !closed && freshBytes + (run.content?.byteLength ?? 0) <= FRESH_MAX_BYTES) {
        fresh.set(run.id, run);
        freshBytes += run.content?.byteLength ?? 0;
      }
      void dispatch();
    },
    /** Whether a new run of this size can run from memory (a client waits for it). */
    acceptsDirect(bytes: number): boolean {
      return !closed && bytes <= DIRECT_MAX_BYTES && freshBytes + memBytes + bytes <= FRESH_MAX_BYTES;
    },
    /**
     * The inline lane without the queue (src/jobs/inline.ts): a run the client waits for whose job
     * the inline runner vouches for is checked now, written once in its final state and handed
     * back. It takes no worker's slot, so it never waits behind large jobs, and skips the launch
     * machinery (~20 µs a run). Null when the runner declines it or the write fails: the caller
     * submits it as a direct run (`skipInline` when the check itself failed: a worker builds the
     * findings).
     */
    runInline(
      record: DirectRun["record"],
      def: WorkflowVersion,
    ): Promise<{ run: Run } | { run: null; checked: boolean }> {
      // Not async: the commit's promise is handed back as it is (an async function's return of a
      // promise costs turns of its own on every sync run).
      try {
        if (!opts.inline || closed) return Promise.resolve({ run: null, checked: false });
        const c = checkInline(opts.inline, record, def, opts);
        return c.final ? commitFinal(record, c.final) : Promise.resolve({ run: null, checked: c.checked });
      } catch (e) {
        return Promise.reject(e);
      }
    },
    /** Starts a run from memory, unwritten (src/runs/direct.ts); the caller must settle() it. */
    submitDirect(record: DirectRun["record"], skipInline = false) {
      directs.set(record.id, {
        record,
        written: null,
        submissionId: null,
        result: null,
        ended: false,
        settled: false,
        skipInline,
      });
      memQueue.add(record.id);
      memBytes += record.submission.bytes.byteLength;
      void dispatch();
    },
    /** Runs waiting for a worker, on disk and in memory (the backpressure bound); counted in memory. */
    queueDepth(): number {
      return store.queuedCount() + memQueue.size;
    },
    /** One org's runs waiting in memory (direct runs no worker took yet): its share of memQueue. */
    queuedInMemory(orgId: number): number {
      let n = 0;
      for (const id of memQueue) if (directs.get(id)?.record.orgId === orgId) n++;
      return n;
    },
    /**
     * After the wait: a direct run that ended is handed over as written (no read back); one still
     * queued or running is written now, before the answer says it exists. Null for other runs,
     * or when the run must be read from the database.
     */
    async settle(id: string): Promise<Run | null> {
      const d = directs.get(id);
      if (!d) {
        // Being written queued (a stop began): on disk once that write commits.
        await persisting.get(id);
        return null;
      }
      d.settled = true;
      if (!d.written) {
        // Waiting in memory, or ended without a write (it failed): on disk as queued, to run.
        if (memQueue.has(id) || !flights.has(id)) await persistQueued(d);
        else {
          const f = flights.get(id);
          d.written = store.create(d.record, {
            status: "running",
            startedAt: f?.startedAt || new Date().toISOString(),
            ...leases.claim(),
          });
          held.add(id);
        }
      }
      await d.written;
      if (d.ended || d.result) directs.delete(id);
      return d.result;
    },
    /** Resolves true when the run is final within ms, false otherwise. */
    waitFinal(id: string, ms: number, signal?: AbortSignal): Promise<boolean> {
      if (directs.get(id)?.result) return Promise.resolve(true);
      // Shutting down, and the run is not executing: it will not start here, nothing to wait for.
      if (ms <= 0 || signal?.aborted || (closed && !flights.has(id))) return Promise.resolve(false);
      return new Promise((resolve) => {
        const set = waiters.get(id) ?? new Set();
        let poll: ReturnType<typeof setTimeout> | undefined;
        let ended = false;
        const done = () => {
          ended = true;
          clearTimeout(timer);
          clearTimeout(poll);
          signal?.removeEventListener("abort", giveUp);
          giveUps.delete(giveUp);
          resolve(true);
        };
        const giveUp = () => {
          ended = true;
          clearTimeout(timer);
          clearTimeout(poll);
          signal?.removeEventListener("abort", giveUp);
          giveUps.delete(giveUp);
          set.delete(done);
          if (!set.size && waiters.get(id) === set) waiters.delete(id);
          resolve(false);
        };
        const timer = setTimeout(giveUp, ms);
        // The client went away (`signal`): the wait ends as if it ran out, nobody reads the answer.
        signal?.addEventListener("abort", giveUp);
        giveUps.set(giveUp, id);
        set.add(done);
        waiters.set(id, set);
        // It may have finished before we started waiting (not if it is still in flight or fresh:
        // those are certainly not final yet).
        if (!flights.has(id) && !fresh.has(id) && !directs.has(id))
          void store.status(id).then((status) => {
            if (status && status !== "queued" && status !== "running") {
              set.delete(done);
              done();
            }
          });
        // Several nodes: a queued run (over 1 MiB, written before it runs) may be claimed and
        // finished by another node, whose end wakes nobody here. While it is not executing here,
        // its status is read now and then (one indexed read), so the wait ends when it does.
        if (opts.shared) {
          let every = 100;
          const look = () => {
            poll = setTimeout(async () => {
              if (ended) return;
              if (!flights.has(id) && !directs.has(id)) {
                const status = await store.status(id).catch(() => null);
                if (ended) return;
                if (status && status !== "queued" && status !== "running") {
                  set.delete(done);
                  return done();
                }
              }
              every = Math.min(every * 2, 1000);
              look();
            }, every);
          };
          look();
        }
      });
    },
    /** Live step states of a running run, for GET while it executes. */
    live: (id: string): RunStep[] | null => {
      const f = flights.get(id);
      return f?.steps.length ? f.steps : null;
    },
    /**
     * Cancels a queued or running run; false if it is already final. The request's audit entry
     * is written in the transaction that writes the run's canceled state, by whichever node
     * writes it.
     */
    async cancel(id: string, orgId: number, workflowId: number, request: CancelRequest): Promise<boolean> {
      const { reason } = request;
      const log = logOf(request);
      if (cancelHere(id, request)) return true;
      const src = await store.state(id);
      // Another node executes it: that node holds the steps' results, so it is asked to cancel
      // and write the run itself, as a cancel there would; written here (below) only if it has
      // not (the request lost, the node gone: handOff).
      const handed = src?.status === "running" && opts.shared && sendCancel !== null;
      if (handed && (await handOff(id, request))) return true;
      const latest = handed ? await store.state(id) : src;
      const steps = latest
        ? (JSON.parse(latest.steps) as RunStep[]).map((s) => stepState(s, { status: "skipped" }))
        : [];
      const logged = () => log("canceled");
      if (latest?.status === "running" && opts.shared) {
        // Another node executes it (several nodes): its canceled state is written here, with the
        // run still running. That node's claim then finds the run no longer its own at its next
        // renewal and stops the job; its final write is refused (the run is not running any more).
        // Its duration counts from its start there (clocks of nodes agree closely enough for this).
        const ranMs = latest.started_at ? Math.max(0, Date.now() - Date.parse(latest.started_at)) : 0;
        const startedMs = performance.now() - ranMs;
        return finish(id, orgId, workflowId, "canceled", steps, reason, startedMs, "running", logged, true);
      }
      if (latest?.status !== "queued") return false;
      // Conditional: if the dispatcher took it meanwhile, cancel the flight instead; if another
      // node did (several nodes), follow it there (handed over, or written running, above).
      if (await finish(id, orgId, workflowId, "canceled", steps, reason, null, "queued", logged)) {
        takeFresh(id);
        return true;
      }
      if (flights.has(id)) return this.cancel(id, orgId, workflowId, request);
      return opts.shared && (await store.state(id))?.status === "running"
        ? this.cancel(id, orgId, workflowId, request)
        : false;
    },
    /** Where cancels for other nodes go (queue-signal.ts, PostgreSQL); none: written here. */
    useCancelChannel(send: (payload: string) => Promise<boolean>) {
      sendCancel = send;
    },
    /** A cancel another node sent: acted on if this node executes the run, else ignored. */
    cancelRequested(payload: string) {
      let r: { id?: unknown; request?: CancelRequest };
      try {
        r = JSON.parse(payload);
      } catch {
        return;
      }
      if (typeof r.id === "string" && r.request) cancelHere(r.id, r.request);
    },
    stats: () => {
      let memoryRunning = 0;
      for (const [id, d] of directs) if (!d.written && flights.has(id)) memoryRunning++;
      return {
        inFlight: flights.size,
        memoryQueued: memQueue.size,
        memoryRunning,
        inlineJobs: opts.inline?.ran ?? 0,
        ...pool.stats(),
      };
    },
    /** Shutdown, at the end of the grace period: every sync wait still in progress is answered (202). */
    endWaits() {
      for (const giveUp of [...giveUps.keys()]) giveUp();
    },
    /**
     * Shutdown, begun when the signal comes (the HTTP drain goes on meanwhile): from now on no
     * run starts on this node. Jobs not started yet go back to the queue at once and running
     * steps get `deadlineMs`. A client waiting for a run that is not executing is answered now,
     * as when its wait runs out (202 with the run's URL); one waiting for a running run keeps
     * waiting, so a run that finishes within the grace period is answered 201.
     */
    async close(deadlineMs: number) {
      closed = true;
      // Runs queued on disk: answered now. Runs waiting in memory: once written queued (below).
      for (const [giveUp, id] of giveUps) if (!flights.has(id) && !memQueue.has(id)) giveUp();
      leases.stop();
      // The pool closes now, not after the writes below: a job handed to a worker behind its
      // running one is dropped before that one can end. Closed later (the writes took long on a
      // loaded PostgreSQL), a worker that had just finished could start the next job while the
      // pool, not yet told of the end, dropped it as never begun: the run was requeued and its
      // client answered 202 queued, yet it had started after the stop began (seen once in CI,
      // test/http-threads-ops.test.ts).
      const poolClosed = pool.close(deadlineMs);
      // Runs still waiting in memory are written queued for the next start; their clients, if
      // still there, are answered then (wake).
      await Promise.allSettled(
        [...memQueue].map((id) => {
          const d = directs.get(id)!;
          d.ended = true;
          return persistQueued(d).then(() => wake(id));
        }),
      );
      fresh.clear();
      freshBytes = 0;
      await poolClosed;
      // Let launch() continuations commit their final states or requeues before the database
      // closes (their writes are grouped, so they settle a tick later).
      await Promise.race([Promise.allSettled([...launches]), Bun.sleep(2000)]);
      // It stops after its current range, before the database closes.
      await orphanSweep;
    },
    /** The start's sweep of slices without a run (tests await it); 0 before start. */
    orphanSweep: () => orphanSweep,
  };
}
export type Executor = ReturnType<typeof createExecutor>;
