// ASSAY_HTTP_THREADS = N > 1: the main thread's listener plus N − 1 HTTP threads on the same host
// and port (SO_REUSEPORT), each a Bun Worker with its own Bun.serve (worker.ts). A thread serves
// the sync runs the inline lane finishes itself, with a database connection of its own
// (thread-runs.ts); it relays every other request to the app on the main thread (relay.ts).
import type { Config } from "../../config.ts";
import type { Logger } from "../../lib/log.ts";
import type { ThreadInit, ToMain } from "./protocol.ts";
import { loadTls } from "../tls.ts";
import { type Handler, ThreadCounts, attachRelay } from "./relay.ts";
import type { ThreadReport, ThreadRunsInit } from "./thread-runs.ts";

export { ThreadCounts };

export interface HttpThreads {
  /** Stop accepting; requests in flight on the threads finish first, then their connections close. */
  stop(): Promise<void>;
  /**
   * Asks every thread for what it did since its last report (for /metrics) and resolves once each
   * answered, each report given to `onReport`; a thread that does not answer in time is not waited
   * for (its report still counts when it comes).
   */
  collect(): Promise<void>;
  /** The checkpoint thread failed: every thread's connection checkpoints in its commits again. */
  autoCheckpoint(pages: number): void;
}

/** A thread could not listen: `code` is the bind's error code (EADDRINUSE…). */
export class ThreadListenError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

const START_TIMEOUT_MS = 30_000;
/** A scrape waits this long for a thread's report at most (a thread busy with a long request). */
const REPORT_TIMEOUT_MS = 2_000;

export async function startHttpThreads(
  config: Config,
  port: number,
  app: Handler,
  counts: ThreadCounts,
  log: Logger,
  workerUrl: URL,
  runs: ThreadRunsInit,
  hooks: {
    /** A run a thread served wrote webhook deliveries: the dispatcher sends them. */
    onWebhooks(): void;
    onReport(r: ThreadReport): void;
  },
): Promise<HttpThreads> {
  const threads: { worker: Worker; stopped: Promise<void> }[] = [];
  let nextReport = 0;
  const waitingReports = new Map<number, () => void>();
  const stopAll = async () => {
    for (const t of threads) t.worker.postMessage({ t: "stop" });
    await Promise.all(threads.map((t) => t.stopped));
  };
  try {
    for (let index = 1; index < config.http_threads; index++) {
      const worker = new Worker(workerUrl);
      let listening!: (ok: ToMain) => void;
      const started = new Promise<ToMain>((r) => {
        listening = r;
      });
      let onStopped!: () => void;
      const stopped = new Promise<void>((r) => {
        onStopped = r;
      });
      const relay = attachRelay(worker, index, app, counts, log);
      worker.onmessage = (e: MessageEvent<ToMain>) => {
        const m = e.data;
        if (m.t === "listening" || m.t === "failed") listening(m);
        else if (m.t === "stopped") {
          relay.failAll();
          worker.terminate();
        } else if (m.t === "webhooks") hooks.onWebhooks();
        else if (m.t === "report") {
          if (m.report) hooks.onReport(m.report);
          waitingReports.get(m.id)?.();
          waitingReports.delete(m.id);
        } else relay.onMessage(m);
      };
      worker.addEventListener("close", () => {
        relay.failAll();
        listening({ t: "failed", code: null, message: "the HTTP thread exited" });
        onStopped();
      });
      worker.addEventListener("error", (e) => {
        log.error("HTTP thread failed", { thread: index, error: String((e as ErrorEvent).message ?? e) });
      });
      threads.push({ worker, stopped });
      const init: ThreadInit = {
        index,
        host: config.host,
        port,
        idleTimeout: config.idle_timeout_s,
        tls: loadTls(config),
        maxPayloadBytes: config.max_payload_bytes,
        inline: config.inline_jobs,
        runs,
      };
      worker.postMessage(init);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const m = await Promise.race([
        started,
        new Promise<ToMain>((r) => {
          timer = setTimeout(
            () => r({ t: "failed", code: null, message: "an HTTP thread did not start within 30 s" }),
            START_TIMEOUT_MS,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      if (m.t === "failed") throw new ThreadListenError(m.message, m.code);
    }
  } catch (e) {
    await stopAll();
    throw e;
  }
  const report = (worker: Worker) =>
    new Promise<void>((resolve) => {
      const id = ++nextReport;
      const timer = setTimeout(() => {
        waitingReports.delete(id);
        resolve();
      }, REPORT_TIMEOUT_MS);
      waitingReports.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      worker.postMessage({ t: "report", id });
    });
  return {
    stop: stopAll,
    async collect() {
      await Promise.all(threads.map((t) => report(t.worker)));
    },
    autoCheckpoint(pages) {
      for (const t of threads) t.worker.postMessage({ t: "autocheckpoint", pages });
    },
  };
}
