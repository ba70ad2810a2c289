// ASSAY_HTTP_THREADS = N > 1: the main thread's listener plus N − 1 HTTP threads on the same host
// and port (SO_REUSEPORT), each a Bun Worker with its own Bun.serve (worker.ts) relaying to the
// app on the main thread (relay.ts). One writer: only the main thread has a database connection.
import type { Config } from "../../config.ts";
import type { Logger } from "../../lib/log.ts";
import type { ThreadInit, ToMain } from "./protocol.ts";
import { type Handler, ThreadCounts, attachRelay } from "./relay.ts";

export { ThreadCounts };

export interface HttpThreads {
  /** Stop accepting; requests in flight on the threads finish first. */
  stop(): Promise<void>;
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

export async function startHttpThreads(
  config: Config,
  port: number,
  app: Handler,
  counts: ThreadCounts,
  log: Logger,
  workerUrl: URL,
): Promise<HttpThreads> {
  const threads: { worker: Worker; stopped: Promise<void>; failAll(): void }[] = [];
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
      threads.push({ worker, stopped, failAll: relay.failAll });
      const init: ThreadInit = {
        index,
        host: config.host,
        port,
        idleTimeout: config.idle_timeout_s,
        maxMetadataBytes: config.max_metadata_bytes,
        maxPayloadBytes: config.max_payload_bytes,
        stepTimeoutMs: config.step_timeout_ms,
        stepTimeoutMaxMs: config.step_timeout_max_ms,
        inline: config.inline_jobs,
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
  return { stop: stopAll };
}
