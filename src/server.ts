// Start and stop one Assay server: open db → migrate → services → app → listen. Used by
// `assay serve` and by the tests (temp data dir, port 0).
import { createApp } from "./app.ts";
import { type Config, wantsWriterThread } from "./config.ts";
import { join } from "node:path";
import { type Checkpointer, startCheckpointer } from "./db/checkpointer.ts";
import { type WriterThread, startWriterThread } from "./db/writer.ts";
import { type DataDirLock, lockDataDir } from "./db/lock.ts";
import { DB_FILE, openDb, startProblem } from "./db/open.ts";
import { type SchemaHold, holdSchema } from "./db/schema-hold.ts";
import { createDeps } from "./deps.ts";
import { type TlsFiles, loadTls, tlsListenProblem } from "./http/tls.ts";
import { createLogger } from "./lib/log.ts";
import { Metrics, instrument } from "./metrics/index.ts";
import { createQueueSignal } from "./runs/queue-signal.ts";
import { createRetention } from "./runs/retention.ts";
import { internalError } from "./http/fallback.ts";
import { startSharedRateGc } from "./http/ratelimit-shared.ts";
import {
  type HttpThreads,
  type ThreadCounts,
  ThreadListenError,
  startHttpThreads,
} from "./http/threads/index.ts";
import { shareWithThreads } from "./http/threads/sharing.ts";
import { type PortLock, lockPort } from "./http/threads/port-lock.ts";
import { relayedPeer } from "./http/peer.ts";
import { newSetupCode } from "./setup/service.ts";
import { createSessionAuth } from "./web/sessions.ts";

export interface RunningServer {
  url: string;
  port: number;
  deps: ReturnType<typeof createDeps>;
  /** The Elysia app being served; tests read `app.routes` (the access matrix covers every route). */
  app: ReturnType<typeof createApp>;
  /** Purges submission content past its retention (also runs on a timer). */
  retention: ReturnType<typeof createRetention>;
  /**
   * The one-time code of the web app's setup form, when the instance had no user at start
   * (printed by `assay serve`); null otherwise.
   */
  setupCode: string | null;
  /** Requests per HTTP thread (ASSAY_HTTP_THREADS > 1; null with one thread). */
  threadCounts: ThreadCounts | null;
  /** Graceful: stop accepting, finish in-flight requests, checkpoint and close the database. */
  stop(): Promise<void>;
  /**
   * Settles (with the reason) when the server stopped itself because it must not go on serving:
   * another build migrated its PostgreSQL database to a schema this one cannot run on while the
   * schema hold's session was lost. `assay serve` then exits 1.
   */
  fatal: Promise<string>;
}

/**
 * After the grace period, how long requests still in flight get to finish (the sync waits
 * answered at its end write their run first) before their connections are closed.
 */
const STRAGGLER_MS = 5000;

/** Another process listens on the port: nothing was left running. */
export class PortInUseError extends Error {
  override name = "PortInUseError";
  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    super(`port ${port} on ${host} is in use by another process; stop it or choose another --port`);
  }
}

/**
 * The address could not be listened on for another reason than a process holding it: a host that
 * does not resolve or is not this machine's, a privileged port. Said with the address: the
 * system's words alone ("EINVAL: invalid argument, listen") name neither.
 */
export class ListenError extends Error {
  override name = "ListenError";
  constructor(host: string, port: number, cause: unknown) {
    const why = (cause as Error)?.message ?? String(cause);
    const code = (cause as { code?: string | null })?.code;
    const hint =
      code === "EINVAL" || code === "EADDRNOTAVAIL" || code === "ENOTFOUND"
        ? " (is --host a name or address of this machine?)"
        : code === "EACCES"
          ? " (a port below 1024 needs privileges)"
          : "";
    super(`cannot listen on ${host.includes(":") ? `[${host}]` : host}:${port}: ${why}${hint}`);
  }
}

/** A failure of a listen (the probe's, the app's, an HTTP thread's) as the error the CLI reports. */
function listenError(config: Config, e: unknown): unknown {
  // max_connections used up, a statement_timeout: said with what to change.
  const problem = startProblem(config, e);
  if (problem) return problem;
  const code = e instanceof ThreadListenError ? e.code : (e as { code?: string }).code;
  if (code === "EADDRINUSE") return new PortInUseError(config.host, config.port);
  // A host name the resolver does not know ("a b", "not..a..host") fails in getaddrinfo, not in
  // listen: its own words ("getaddrinfo ENOTFOUND a b") named neither the setting nor the port.
  const syscall = (e as { syscall?: string })?.syscall;
  if (e instanceof ThreadListenError || syscall === "listen" || syscall === "getaddrinfo")
    return new ListenError(config.host, config.port, e);
  return e;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const log = createLogger(config.log_level);
  // First, before anything is written: a second server on this data dir stops here
  // (DataDirLockedError, src/db/lock.ts). On PostgreSQL there is no data dir to hold.
  // A port another process holds is found before the data dir is created or migrated, so that
  // start leaves nothing behind (a mistyped --data-dir with a port in use left a new database).
  // The certificate and key too (HTTPS, src/http/tls.ts): unreadable, not PEM, or not a pair.
  const tls = loadTls(config);
  try {
    probePort(config.host, config.port, tls);
  } catch (e) {
    throw tlsListenProblem(e) ?? listenError(config, e);
  }
  const lock = config.database_url ? null : lockDataDir(config.data_dir);
  try {
    return await start(config, log, lock);
  } catch (e) {
    lock?.release();
    throw e;
  }
}

/**
 * Listens on `host:port` for an instant, as the app will (without SO_REUSEPORT, so it cannot join a
 * running server's group): a port in use is PortInUseError, any other failure (an address not on
 * this machine, a privileged port, a host that does not resolve) the listen's own error, before
 * anything is written. The listen still decides: the port can be taken in between. Port 0 is
 * probed too (on a port the kernel picks): the host is what can be wrong with it.
 */
function probePort(host: string, port: number, tls: TlsFiles | null): void {
  let probe: { stop(closeActive?: boolean): void } | null = null;
  try {
    // Bun.serve, as the app's listen: the same failures with the same words.
    probe = Bun.serve({
      hostname: host,
      port,
      reusePort: false,
      ...(tls ? { tls } : {}),
      fetch: () => new Response(null, { status: 503 }),
    });
  } finally {
    probe?.stop(true);
  }
}

/**
 * Starts what `startOn` starts, and when any of it fails, undoes what had started (the listeners,
 * the threads and workers, the database), newest first: a failed start leaves nothing running in
 * the process that called it.
 */
async function start(
  config: Config,
  log: ReturnType<typeof createLogger>,
  lock: DataDirLock | null,
): Promise<RunningServer> {
  const undo: (() => unknown)[] = [];
  try {
    return await startOn(config, log, lock, undo);
  } catch (e) {
    for (const step of undo.reverse())
      try {
        await step();
      } catch (u) {
        log.warn("while undoing a failed start", { error: String(u) });
      }
    throw listenError(config, e);
  }
}

async function startOn(
  config: Config,
  log: ReturnType<typeof createLogger>,
  lock: DataDirLock | null,
  undo: (() => unknown)[],
): Promise<RunningServer> {
  // A node may start before its database: waited for, and said so (it was 30 s of silence).
  const waitS = 30;
  const db = await openDb(config, {
    waitMs: config.database_url ? waitS * 1000 : 0,
    onWaiting: (database, error) =>
      log.warn(`waiting for the database (up to ${waitS} s)`, { database, error }),
  });
  // The checkpoint thread's file is closed after every connection to it (see closeFile).
  let checkpointer: Checkpointer | null = null;
  undo.push(async () => {
    await db.close();
    checkpointer?.closeFile();
  });
  // PostgreSQL: held while this server runs, so that no newer build changes the schema under it in
  // a way it cannot run on (src/db/schema-hold.ts).
  let schemaHold: SchemaHold | null = null;
  let schemaTooNew: (e: Error) => void = () => {};
  let endFatally: (why: string) => void = () => {};
  const fatal = new Promise<string>((resolve) => {
    endFatally = resolve;
  });
  if (db.dialect === "postgres") {
    schemaHold = await holdSchema(config.database_url!, log, { onTooNew: (e) => schemaTooNew(e) });
    undo.push(() => schemaHold?.stop());
  }
  // SQLite only: WAL checkpoints on their own thread (PostgreSQL checkpoints itself).
  checkpointer =
    db.dialect === "sqlite"
      ? await startCheckpointer(
          db.raw,
          join(config.data_dir, DB_FILE),
          new URL("./db/checkpoint-worker.ts", import.meta.url),
          log,
        )
      : null;
  if (checkpointer) undo.push(() => checkpointer?.stop());
  // SQLite with more than one core: the final sync runs are committed on a thread of their own.
  let writer: WriterThread | null = null;
  if (db.dialect === "sqlite" && wantsWriterThread(config))
    try {
      writer = await startWriterThread(
        db.raw,
        join(config.data_dir, DB_FILE),
        new URL("./db/writer-thread.ts", import.meta.url),
        log,
      );
      db.beginImmediate();
      const w = writer;
      checkpointer?.onFallback((pages) => w.autoCheckpoint(pages));
    } catch (e) {
      log.warn("writer thread did not start; runs are written on the main connection", { error: String(e) });
    }
  // After every writer of final states: the thread's last group has settled.
  undo.push(() => writer?.stop());
  // Built here, next to main.ts: in the compiled binary a relative Worker path only resolves
  // from the project root, a URL from import.meta.url resolves everywhere (STYLE: traps).
  const deps = createDeps(config, db, log, {
    workerUrl: new URL("./jobs/worker.ts", import.meta.url),
    intakeWorkerUrl: new URL("./runs/intake/worker.ts", import.meta.url),
    checkWorkerUrl: new URL("./workflows/check-worker.ts", import.meta.url),
    writer,
  });
  undo.push(async () => {
    deps.intake.close();
    deps.draftChecker.close();
    await deps.executor.close(0);
    await deps.webhookDispatcher.stop(0);
    await deps.tokens.close();
  });
  let startTimer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    deps.pool!.ready(),
    new Promise((_, reject) => {
      startTimer = setTimeout(
        () => reject(new Error("validation workers did not start within 30 s")),
        30_000,
      );
    }),
  ]).finally(() => clearTimeout(startTimer));
  // Metrics first: recovery at start may end runs, and those count too.
  // Several nodes on one database: every series says which node it came from.
  const metrics = new Metrics(db.dialect === "postgres" ? (config.node_id ?? undefined) : undefined);
  // Several HTTP threads (src/http/threads/): what they share with this one, set up before they start.
  const threaded = config.http_threads > 1;
  const sharing = threaded ? shareWithThreads(config, db, () => deps.executor.queueDepth()) : null;
  undo.push(() => sharing?.stop());
  sharing?.reportTo(metrics);
  instrument(deps, metrics, sharing?.totals);
  await deps.executor.start();
  // One server per SQLite database: a key left in progress was this process's before it stopped.
  if (db.dialect === "sqlite") await deps.idempotency.releaseAbandoned();
  // Several nodes on one database (PostgreSQL): runs queued by one wake the others.
  const queueSignal = createQueueSignal(db, log);
  undo.push(() => queueSignal.stop());
  deps.runs.onQueued(() => queueSignal.announce());
  // A cancel of a run another node executes goes to that node, which holds its steps' results.
  deps.executor.useCancelChannel((payload) => queueSignal.requestCancel(payload));
  await queueSignal.start(
    (poll) => deps.executor.poke(poll),
    (payload) => deps.executor.cancelRequested(payload),
  );
  const retention = createRetention(
    db,
    log,
    config.retention_days,
    async () => (await deps.settings.get()).audit_retention_days,
  );
  retention.start();
  undo.push(() => retention.stop());
  const stopRateGc = startSharedRateGc(db, log);
  undo.push(stopRateGc);
  let draining = false;
  const setup = { code: (await deps.setup.needed()) ? newSetupCode() : null };
  // HTTP threads all listen with SO_REUSEPORT, so a lock on the port keeps any other server off it
  // (src/http/threads/port-lock.ts). Port 0: once it is known.
  const threadCounts = sharing?.counts ?? null;
  const app = createApp(deps, {
    setup,
    budgets: sharing?.budgets,
    isDraining: () => draining,
    metrics,
    sessions: createSessionAuth(db, deps.users, deps.config.base_url),
    // The relay's requests are counted by the relay.
    onRequest: threadCounts
      ? (request) => {
          if (!relayedPeer.has(request)) threadCounts.inc(0, "main");
        }
      : undefined,
  });
  let portLock: PortLock | null = null;
  let httpThreads: HttpThreads | null = null;
  if (threadCounts) {
    metrics.gauge(
      "assay_http_thread_requests_total",
      "HTTP requests by the thread that accepted them (0: the main thread) and how they were served.",
      () => threadCounts.series(),
      "counter",
    );
  }
  if (threaded && config.port !== 0) {
    portLock = lockPort(config.host, config.port);
    if (!portLock) throw new PortInUseError(config.host, config.port);
    undo.push(() => portLock?.release());
  }
  const tls = loadTls(config);
  app.listen({
    hostname: config.host,
    port: config.port,
    ...(tls ? { tls } : {}),
    // Elysia's Bun adapter asks for SO_REUSEPORT unless told otherwise: a second server on the
    // same port would then start "successfully" and the kernel would split requests between
    // two databases. Without it the second bind fails, as it should. With HTTP threads the
    // port lock above does that.
    reusePort: threaded,
    // Bun's own limit answers a bare-text 413; src/http/limits.ts enforces every body limit
    // with the JSON error instead (from Content-Length, or counted while reading).
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // Bun closes a connection that stays idle, or takes longer than this to deliver a request
    // body (data arriving does not extend it): a trickling client cannot hold it forever.
    idleTimeout: config.idle_timeout_s,
    // Never Bun's development error page (HTML with the stack and source lines), whatever
    // NODE_ENV says: whatever escapes the app's error handling answers as its 500.
    development: false,
    error: internalError,
  });
  undo.push(() => app.server?.stop(true));
  if (threaded) {
    const port = app.server!.port!;
    if (!portLock) {
      portLock = lockPort(config.host, port);
      if (!portLock) throw new PortInUseError(config.host, port);
      undo.push(() => portLock?.release());
    }
    httpThreads = await startHttpThreads(
      config,
      port,
      app,
      threadCounts!,
      log,
      new URL("./http/threads/worker.ts", import.meta.url),
      sharing!.runsInit(db.dialect === "sqlite" ? walAutoCheckpoint(db.raw) : 0),
      { onWebhooks: () => deps.webhookDispatcher.wake(), onReport: (r) => sharing!.onReport(r) },
    );
    undo.push(() => httpThreads?.stop());
    sharing!.started(httpThreads);
    const threads = httpThreads;
    checkpointer?.onFallback((pages) => threads.autoCheckpoint(pages));
  }
  const server = app.server!;
  const url = `${tls ? "https" : "http"}://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
  log.info("listening", {
    url,
    database: db.dialect,
    ...(db.dialect === "sqlite" ? { data_dir: config.data_dir, writer_thread: writer?.alive ?? false } : {}),
  });
  // The API, its Location headers and /api/docs follow a path in the public URL; the web app's
  // pages, assets and routes are absolute (/app/…, /assets/…), so it needs a host of its own.
  if (config.base_url && new URL(config.base_url).pathname.replace(/\/+$/, "") !== "")
    log.warn(
      "the web app is served at the root of a host only: under the path of ASSAY_BASE_URL the API and /api/docs work, the web app does not (docs/deploy.md)",
      {
        base_url: config.base_url,
      },
    );
  if (config.test_gates_dir)
    log.warn("test_hold validator enabled (ASSAY_TEST_GATES_DIR): for test servers only", {
      gates: config.test_gates_dir,
    });
  // After the executor: run URLs in webhook bodies need the public origin, known once listening.
  await deps.webhookDispatcher.start(config.base_url ?? url);
  let stopped: Promise<void> | null = null;
  const running: RunningServer = {
    fatal,
    url,
    port: server.port!,
    setupCode: setup.code,
    threadCounts,
    deps,
    app,
    retention,
    stop() {
      stopped ??= (async () => {
        // One grace period from the signal on, for everything: a client waiting for a run
        // (Prefer: wait) held the HTTP drain for up to 60 s before the grace even began.
        const graceEnd = Date.now() + config.shutdown_grace_ms;
        draining = true;
        // From now on no run starts: jobs not started go back to the queue at once, clients
        // waiting for them are answered (202), running steps get the grace period.
        const executorClosed = deps.executor.close(config.shutdown_grace_ms);
        const endWaits = setTimeout(() => deps.executor.endWaits(), config.shutdown_grace_ms);
        await queueSignal.stop();
        retention.stop();
        stopRateGc();
        // The HTTP threads' requests in flight are answered here: the app stays up meanwhile.
        // Waits for a running run end at the grace's end at the latest (endWaits); whatever
        // else is still in flight STRAGGLER_MS later (a slow upload, say) is cut off.
        let straggler: ReturnType<typeof setTimeout> | undefined;
        const cutOff = new Promise<void>((resolve) => {
          straggler = setTimeout(
            () => {
              log.warn("requests still in flight after the grace period: closing their connections");
              void server.stop(true).then(resolve, resolve);
            },
            Math.max(graceEnd - Date.now(), 0) + STRAGGLER_MS,
          );
        });
        await Promise.all([httpThreads?.stop(), Promise.race([server.stop(false), cutOff])]);
        clearTimeout(endWaits);
        clearTimeout(straggler);
        portLock?.release();
        sharing?.stop();
        deps.intake.close();
        deps.draftChecker.close();
        await executorClosed;
        // After the executor, whose last final states may still add deliveries (kept for the next start).
        await deps.webhookDispatcher.stop(config.shutdown_grace_ms);
        await deps.tokens.close();
        // After every writer of final states: the thread's last group has settled.
        await writer?.stop();
        await checkpointer?.stop();
        try {
          await db.close();
        } finally {
          // Whatever the close said: the hold, the file and the data dir are this process's to free.
          await schemaHold?.stop();
          checkpointer?.closeFile(); // after every connection to the file (see closeFile)
          lock?.release();
        }
        log.info("stopped");
      })();
      return stopped;
    },
  };
  // The schema changed under this server into one it cannot run on: not ready, then stopped.
  schemaTooNew = (e) => {
    draining = true;
    void running.stop().then(() => endFatally(e.message));
  };
  return running;
}

/** A connection's wal_autocheckpoint: 0 while the checkpoint thread copies the WAL (checkpointer.ts). */
function walAutoCheckpoint(raw: import("bun:sqlite").Database): number {
  return (
    raw.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()?.wal_autocheckpoint ??
    1000
  );
}
