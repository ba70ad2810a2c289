// The sync runs an HTTP thread serves itself (ASSAY_HTTP_THREADS > 1): a run start the inline
// lane finishes — a bearer token, a plain run URL, a small JSON document whose steps check in
// linear time and pass — is answered on the thread that accepted it, start to end, with the app's
// own pieces: the sync-run lane (lane.ts), authentication, the limits' hooks, the route's handler
// and the run service, over a database connection of the thread's own and caches of its own
// (checked against the cache generation, as the nodes sharing one PostgreSQL do). The main thread
// is not involved: no message per request, whose wake-ups cost more than the route (docs/
// benchmarks.md, eighteenth pass). What is shared is shared through memory: the rate-limit budgets
// (ratelimit-memory.ts), the queue's depth and the request counts (board.ts), and on SQLite one
// writer at a time (src/db/write-lock.ts). Everything else goes to the main thread (relay.ts).
//
// Nothing shared changes before the thread knows it can finish: when a request passes
// authentication, and before the limits count it, the thread looks up what the route will (org,
// workflow, version) and checks the document as the inline lane would. A run it cannot finish
// (a failing document needs a worker for its findings; another file type, Prefer: wait=0…) is
// relayed to the main thread untouched, which answers it as if it had accepted it. A request the
// route will refuse (401, 403, 404, 409, 400, 415, 429, 503) is answered here, as the main thread
// would: the same code.
import { type Config, queuePerOrg } from "../../config.ts";
import { openDb } from "../../db/open.ts";
import { writeGateOf } from "../../db/write-gate.ts";
import { WriteLock, type WriteLockInit } from "../../db/write-lock.ts";
import { now } from "../../db/util.ts";
import { serviceUnavailable } from "../../errors.ts";
import { INLINE_MAX_BYTES, InlineRunner } from "../../jobs/inline.ts";
import { createLogger, routeConsole } from "../../lib/log.ts";
import { uuidv7 } from "../../lib/uuid.ts";
import { countFinals } from "../../metrics/routes.ts";
import { Metrics, type MetricsDelta } from "../../metrics/registry.ts";
import { requireOrgRole } from "../../orgs/access.ts";
import { createOrgStore } from "../../orgs/store.ts";
import type { DirectRun, FinalState } from "../../runs/direct.ts";
import { createFinalCommit } from "../../runs/final-commit.ts";
import { createIdempotencyStore } from "../../runs/idempotency.ts";
import { checkInline } from "../../runs/inline-check.ts";
import { intake } from "../../runs/intake/modes.ts";
import { createIntakeRunner } from "../../runs/intake/offload.ts";
import { parsePrefer } from "../../runs/prefer.ts";
import { MAX_FILENAME_LENGTH, bodiesRead, checkFileType, createRunService } from "../../runs/service.ts";
import { startRunHandler } from "../../runs/start-handler.ts";
import { createRunStore } from "../../runs/store.ts";
import { pendingSteps } from "../../runs/summary.ts";
import { createSettingsService } from "../../settings/service.ts";
import { createSettingsStore } from "../../settings/store.ts";
import { createTokenService } from "../../tokens/service.ts";
import { createTokenStore } from "../../tokens/store.ts";
import { createUserStore } from "../../users/store.ts";
import { createTestHold } from "../../validators/test-hold/index.ts";
import { attachWebhookOutbox } from "../../webhooks/outbox.ts";
import { createOutboxStore } from "../../webhooks/outbox-store.ts";
import { createWorkflowStore } from "../../workflows/store.ts";
import type { WorkflowVersion } from "../../workflows/types.ts";
import { type Principal, createAuthenticate } from "../auth.ts";
import { createCors } from "../cors.ts";
import { createSharedLimiter } from "../ratelimit-shared.ts";
import { createLimits } from "../limits.ts";
import { MemoryBudgets, type MemoryBudgetsInit } from "../ratelimit-memory.ts";
import { type BoardInit, ThreadBoard } from "./board.ts";
import { type Handed, offers } from "./handoff.ts";
import { Relay, createRunLane } from "./lane.ts";
import { createAccessLog } from "../request-log.ts";

/** What an HTTP thread needs to serve sync runs itself, from the main thread. */
export interface ThreadRunsInit {
  config: Config;
  /** SQLite: the process's write lock, and the main connection's wal_autocheckpoint (0 while the checkpoint thread runs). */
  lock: WriteLockInit | null;
  autoCheckpoint: number;
  /** SQLite: the rate-limit budgets in shared memory (PostgreSQL keeps them in the database). */
  budgets: MemoryBudgetsInit | null;
  board: BoardInit;
}

/** What the thread did since its last report, for the main thread's /metrics. */
export interface ThreadReport {
  delta: MetricsDelta;
  inlineJobs: number;
  statements: number;
  transactions: number;
}

/** A request of the lane's: a plain run URL (no query, nothing encoded). */
const PLAIN = /^\/api\/v1\/orgs\/([^/?#%]+)\/workflows\/([^/?#%]+)\/runs\/$/;
/** PostgreSQL: connections of each HTTP thread's own pool (the main thread's is ASSAY_DATABASE_POOL_SIZE). */
const PG_POOL = 4;

type Server = { requestIP(r: Request): { address: string } | null };

export async function createThreadRuns(index: number, init: ThreadRunsInit, wakeWebhooks: () => void) {
  const { config } = init;
  const log = createLogger(config.log_level);
  routeConsole(log); // this Worker's console: the runtime's warnings as JSON lines (src/lib/log.ts)
  const db = await openDb(
    { ...config, database_pool_size: Math.min(PG_POOL, config.database_pool_size) },
    { migrate: false },
  );
  if (db.dialect === "sqlite") {
    db.raw.exec(`PRAGMA wal_autocheckpoint = ${init.autoCheckpoint}`);
    if (init.lock) writeGateOf(db.raw).share(WriteLock.attach(init.lock, index + 1));
    // The main connection writes too: a transaction takes the write lock at BEGIN (sqlite.ts).
    db.beginImmediate();
  }
  const users = createUserStore(db);
  const orgs = createOrgStore(db);
  const settings = createSettingsService(createSettingsStore(db));
  const tokens = createTokenService(createTokenStore(db), users, settings);
  const workflowStore = createWorkflowStore(db);
  const runs = createRunStore(db, null, config.commit_window_us / 1000);
  const idempotency = createIdempotencyStore(db);
  const board = ThreadBoard.attach(init.board);
  const metrics = new Metrics();
  // As the main thread's instance (deps.ts): test servers add the test_hold validator.
  const extra = config.test_gates_dir ? [createTestHold(config.test_gates_dir)] : [];
  const inline = config.inline_jobs ? new InlineRunner() : null;
  const stepLimits = { stepTimeoutMs: config.step_timeout_ms, stepTimeoutMaxMs: config.step_timeout_max_ms };
  const finals = createFinalCommit(runs, log);
  finals.afterFinal.push(countFinals(metrics));
  // Deliveries are written in the run's transaction, here; the main thread's dispatcher sends them.
  attachWebhookOutbox(finals, createOutboxStore(db), { wake: wakeWebhooks });
  let closed = false;
  // A run this thread cannot finish after all: the write failed, or its version changed between
  // the check and the route (a workflow saved within the same turn). Nothing was stored.
  const retry = () => serviceUnavailable("The run could not be completed; retry.", 1);
  const executor = {
    // Every run that reaches the service here executes from memory (its body is at most 16 KiB,
    // its client waits: admit): never written as queued on this thread.
    acceptsDirect: (bytes: number) => bytes <= INLINE_MAX_BYTES,
    queueDepth: () => board.queueDepth,
    // The main thread's memory queue is not visible here; the database count is (most of) it.
    queuedInMemory: () => 0,
    async runInline(record: DirectRun["record"], def: WorkflowVersion) {
      if (!inline || closed) return { run: null, checked: false } as const;
      const c = checkInline(inline, record, def, stepLimits);
      return c.final ? finals.commitFinal(record, c.final) : ({ run: null, checked: c.checked } as const);
    },
    commitInline: (record: DirectRun["record"], f: FinalState) => finals.commitFinal(record, f),
    submitDirect(): never {
      throw retry();
    },
    notify(): never {
      throw retry();
    },
    // Never reached: a run of this thread's is final when the service returns it.
    waitFinal: async () => true,
    settle: async () => null,
    live: () => null,
  };
  const runService = createRunService({
    runs,
    workflows: workflowStore,
    idempotency,
    executor,
    intake: createIntakeRunner({ workerUrl: null, log }),
    limits: {
      maxPayloadBytes: config.max_payload_bytes,
      maxMetadataBytes: config.max_metadata_bytes,
      maxQueue: config.max_queue,
      maxQueuePerOrg: queuePerOrg(config),
    },
    extraValidators: extra,
  });
  const limits = createLimits(
    config,
    () => "none",
    db.dialect === "postgres" ? createSharedLimiter(db) : init.budgets && MemoryBudgets.attach(init.budgets),
  );

  /** The run each admitted request was checked as: its version's key, and what the route writes. */
  const checked = new WeakMap<Request, { key: string; handed: Handed }>();
  const offer = (request: Request) => ({
    admit: async (def: WorkflowVersion, version: number) => {
      const c = checked.get(request);
      return c && c.key === `${def.workflow_id}:${version}` ? c.handed : null;
    },
  });

  /**
   * Whether this thread finishes the request (true), before anything shared is counted: what the
   * route will look up, looked up; the document checked as the inline lane will. An error on the
   * way is the route's to answer, here.
   */
  async function admit(p: Principal, request: Request, org: string, workflow: string): Promise<boolean> {
    const body = bodiesRead.get(request);
    if (!body || !inline) return false;
    try {
      const { org: o } = await requireOrgRole(orgs, p, org, "executor");
      const wf = await workflowStore.find(o.id, workflow, p.generation);
      if (wf?.status !== "active") return true;
      const def = await workflowStore.version(wf.id, wf.version);
      const active = def?.steps.filter((s) => s.is_active) ?? [];
      if (!def || !active.length) return true;
      // Only a client that waits gets its run executed from memory (start-handler.ts).
      const prefer = parsePrefer(request.headers.get("prefer"));
      if (prefer.respondAsync || prefer.waitSeconds === 0 || config.sync_wait_ms <= 0) return false;
      const sub = intake(request.headers, body, {
        maxMetadataBytes: config.max_metadata_bytes,
        maxFilenameLength: MAX_FILENAME_LENGTH,
      });
      checkFileType(def, sub.fileType, extra);
      const record = {
        id: uuidv7(),
        createdAt: now(),
        orgId: o.id,
        workflowId: wf.id,
        workflowVersion: wf.version,
        steps: pendingSteps(active),
        user: { id: p.user.id, username: p.user.username },
        submission: { ...sub, sha256: "" },
        workflowSlug: wf.slug,
      };
      const { final } = checkInline(inline, record, def, stepLimits);
      if (!final) return false;
      const sha256 = new Bun.CryptoHasher("sha256").update(sub.bytes).digest("hex");
      checked.set(request, {
        key: `${wf.id}:${wf.version}`,
        handed: { id: record.id, createdAt: record.createdAt, sub: { ...sub, sha256 }, final },
      });
      offers.set(request, offer(request));
      return true;
    } catch {
      return true;
    }
  }

  const authenticate = createAuthenticate({
    tokens,
    afterAuth: (p, request, set) =>
      admit(p, request, ...orgAndWorkflow(request)).then((mine) => {
        if (!mine) throw new Relay();
        return limits.afterAuth(p, request, set);
      }),
    onAuthFailure: limits.onAuthFailure,
    trustProxy: config.trust_proxy,
  });
  const lane = createRunLane({
    log,
    metrics,
    accessLog: config.access_log ? createAccessLog(log, config.trust_proxy) : undefined,
    cors: createCors(config).enabled,
    enterRun: limits.enterRun,
    authenticate,
    startRun: startRunHandler(
      { orgs, config, runs, runService, tokens, workflowStore, idempotency, executor },
      { beforeRun: limits.beforeRun },
    ),
  });
  let inlineReported = 0;
  const reported = { statements: 0, transactions: 0 };

  return {
    /**
     * The answer to a request whose small body was read (`body`), or null: the main thread
     * answers it (relay.ts) — not a run start of the lane's, or one this thread cannot finish.
     */
    async serve(request: Request, body: Uint8Array, server: Server): Promise<Response | null> {
      if (closed) return null;
      const url = request.url;
      bodiesRead.set(request, body);
      const answer = lane(request, url.slice(url.indexOf("/", url.indexOf("//") + 2)), server);
      if (!answer) return null;
      try {
        const res = await answer;
        board.countServed(index);
        return res;
      } catch (e) {
        if (e instanceof Relay) return null;
        throw e;
      }
    },
    /** What happened since the last report (main thread: /metrics). */
    report(): ThreadReport {
      const ran = inline?.ran ?? 0;
      const r: ThreadReport = {
        delta: metrics.drain(),
        inlineJobs: ran - inlineReported,
        statements: db.stats.statements - reported.statements,
        transactions: db.stats.transactions - reported.transactions,
      };
      inlineReported = ran;
      reported.statements = db.stats.statements;
      reported.transactions = db.stats.transactions;
      return r;
    },
    /** The checkpoint thread failed: the commits checkpoint again (src/db/checkpointer.ts). */
    autoCheckpoint(pages: number) {
      if (db.dialect === "sqlite") db.raw.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
    },
    /** After the thread's listener stopped (its requests answered): last uses written, connection closed. */
    async close() {
      closed = true;
      await tokens.close();
      if (db.dialect === "sqlite") db.raw.close();
      else await db.close();
    },
  };
}
export type ThreadRuns = Awaited<ReturnType<typeof createThreadRuns>>;

/** The org and workflow of a run URL the lane took (it matched PLAIN already). */
function orgAndWorkflow(request: Request): [string, string] {
  const url = request.url;
  const m = PLAIN.exec(url.slice(url.indexOf("/", url.indexOf("//") + 2)));
  return m ? [m[1]!, m[2]!] : ["", ""];
}
