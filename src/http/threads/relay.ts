// The main thread's end of one HTTP thread: every request the thread accepted is rebuilt here and
// answered by the app itself (`app.handle`), so the answer is the one the main thread's own
// listener gives — same routes, hooks, limits, errors, headers. The peer address goes with the
// request (src/http/peer.ts), a client that goes away aborts it, and bodies stream both ways a
// chunk per pull (protocol.ts). The sync runs a thread finishes itself never come here
// (thread-runs.ts); they are counted from shared memory (board.ts).
import type { Logger } from "../../lib/log.ts";
import { internalErrorFor } from "../fallback.ts";
import { relayedPeer } from "../peer.ts";
import { loggedPath, requestId } from "../request-log.ts";
import type { ThreadBoard } from "./board.ts";
import { laned } from "./lane.ts";
import { type ToMain, type ToThread, decodeHeaders, encodeHeaders } from "./protocol.ts";

/** A response body up to this size is sent whole (the client gets a Content-Length, as from the main listener). */
const WHOLE_MAX_BYTES = 1024 * 1024;

export interface Handler {
  handle(request: Request): Promise<Response>;
}

interface Pending {
  ac: AbortController;
  onChunk: ((data: ArrayBuffer | null, failed: boolean) => void) | null;
  reader: ReadableStreamDefaultReader<Uint8Array> | null;
  buffered: Uint8Array[];
  readFailed: boolean;
  aborted: boolean;
}

/**
 * How a request was served: on the main thread's own listener (`main`); by the HTTP thread that
 * accepted it, itself (`local`, thread-runs.ts); relayed to the main thread and answered there by
 * the sync-run lane (`lane`, lane.ts) or by the framework (`relay`).
 */
export type ThreadPath = "main" | "local" | "lane" | "relay";

/** Requests served per thread and path, for the metric assay_http_thread_requests_total. */
export class ThreadCounts {
  readonly #counts = new Map<string, number>();
  readonly #inFlight = new Map<number, number>();
  /** Where the HTTP threads count the requests they served themselves (board.ts). */
  #board: ThreadBoard | null = null;
  /** Reads the threads' own counts from `board` (threads 1…threads−1). */
  constructor(readonly threads = 1) {}
  attachBoard(board: ThreadBoard) {
    this.#board = board;
  }
  /** Requests an HTTP thread relayed that the app has not answered yet. */
  inFlight(thread: number): number {
    return this.#inFlight.get(thread) ?? 0;
  }
  /** Requests served so far by a thread and path. */
  get(thread: number, path: ThreadPath): number {
    if (path === "local") return this.#board?.served(thread) ?? 0;
    return this.#counts.get(`${thread}\n${path}`) ?? 0;
  }
  began(thread: number, by: 1 | -1) {
    this.#inFlight.set(thread, this.inFlight(thread) + by);
  }
  inc(thread: number, path: ThreadPath) {
    const k = `${thread}\n${path}`;
    this.#counts.set(k, (this.#counts.get(k) ?? 0) + 1);
  }
  series(): Array<[Record<string, string>, number]> {
    const out: Array<[Record<string, string>, number]> = [...this.#counts].map(([k, v]) => {
      const [thread, path] = k.split("\n") as [string, string];
      return [{ thread, path }, v];
    });
    for (let i = 1; i < this.threads; i++) {
      const n = this.get(i, "local");
      if (n) out.push([{ thread: String(i), path: "local" }, n]);
    }
    return out;
  }
}

export function attachRelay(
  worker: Worker,
  index: number,
  app: Handler,
  counts: ThreadCounts,
  log: Logger,
): { onMessage(m: ToMain): void; failAll(): void } {
  const pending = new Map<number, Pending>();
  const post = (m: ToThread, transfer?: Transferable[]) => worker.postMessage(m, transfer ?? []);

  async function serve(m: Extract<ToMain, { t: "req" }>) {
    const p: Pending = {
      ac: new AbortController(),
      onChunk: null,
      reader: null,
      buffered: [],
      readFailed: false,
      aborted: false,
    };
    pending.set(m.id, p);
    // highWaterMark 0: nothing is pulled before the app reads. A small run request's body comes
    // whole: the thread read it to see whether it could serve the run itself.
    const body = m.body
      ? new Uint8Array(m.body)
      : m.hasBody
        ? new ReadableStream<Uint8Array>(
            {
              pull: (c) =>
                new Promise<void>((resolve) => {
                  p.onChunk = (data, failed) => {
                    p.onChunk = null;
                    if (failed) c.error(new Error("The client went away."));
                    else if (data === null) c.close();
                    else c.enqueue(new Uint8Array(data));
                    resolve();
                  };
                  post({ t: "pull", id: m.id });
                }),
            },
            { highWaterMark: 0 },
          )
        : null;
    const request = new Request(m.url, {
      method: m.method,
      headers: decodeHeaders(m.headers),
      body,
      signal: p.ac.signal,
      // @ts-expect-error Bun and the fetch standard: a streamed request body is half-duplex
      duplex: "half",
    });
    relayedPeer.set(request, m.ip);
    let res: Response;
    counts.began(index, 1);
    try {
      res = await app.handle(request);
    } catch (e) {
      // The app answers its own errors; this is a bug of ours, said as the app would say it. The
      // line names the request's id (the app's, or the client's own) and the 500 carries it, so
      // a client that reports the id leads to this line.
      log.error("relayed request failed", {
        request_id: requestId(request),
        method: request.method,
        path: loggedPath(new URL(request.url).pathname),
        error: String(e),
      });
      res = internalErrorFor(request);
    } finally {
      counts.began(index, -1);
    }
    counts.inc(index, laned.has(request) ? "lane" : "relay");
    await answer(m.id, p, res);
  }

  async function answer(id: number, p: Pending, res: Response) {
    const headers = encodeHeaders(res.headers);
    if (!res.body || p.aborted) {
      // Nobody reads an abandoned answer; the thread still needs one to let go of the request.
      pending.delete(id);
      res.body?.cancel().catch(() => {});
      post({ t: "head", id, status: res.status, headers, body: null, streamed: false });
      return;
    }
    if (res.headers.get("content-type") === "application/json") {
      // API answers are built whole in memory (a serialized object): read in one call, not a
      // stream of chunks, and sent as text (JSON text is valid UTF-8: the same bytes arrive).
      let body: string | null = null;
      try {
        body = await res.text();
      } catch {}
      if (body && !p.aborted) {
        pending.delete(id);
        post({ t: "head", id, status: res.status, headers, body, streamed: false });
        return;
      }
      pending.delete(id);
      post({ t: "head", id, status: res.status, headers, body: null, streamed: false });
      return;
    }
    const reader = res.body.getReader();
    let total = 0;
    let done = false;
    try {
      while (total <= WHOLE_MAX_BYTES && !p.aborted) {
        const r = await reader.read();
        if (r.done) {
          done = true;
          break;
        }
        p.buffered.push(r.value);
        total += r.value.byteLength;
      }
    } catch {
      p.readFailed = true;
    }
    if (done) {
      pending.delete(id);
      const whole = concat(p.buffered, total);
      post({ t: "head", id, status: res.status, headers, body: whole, streamed: false }, [whole]);
      return;
    }
    if (p.aborted) {
      pending.delete(id);
      reader.cancel().catch(() => {});
      post({ t: "head", id, status: res.status, headers, body: null, streamed: false });
      return;
    }
    p.reader = reader;
    post({ t: "head", id, status: res.status, headers, body: null, streamed: true });
  }

  function pullResponse(id: number, p: Pending) {
    const next = p.buffered.shift();
    if (next) {
      // A copy: the app's body may be a buffer it keeps (a cached row); a transfer would detach it.
      const data = next.slice().buffer as ArrayBuffer;
      return post({ t: "rchunk", id, data }, [data]);
    }
    if (p.readFailed || !p.reader) return close(id, p, true);
    p.reader.read().then(
      (r) => {
        if (r.done) return close(id, p);
        p.buffered.push(r.value);
        pullResponse(id, p);
      },
      () => close(id, p, true),
    );
  }

  /** The response is over (or the client is gone): an error breaks the client's connection. */
  function close(id: number, p: Pending, failed = false) {
    pending.delete(id);
    p.reader?.cancel().catch(() => {});
    p.reader = null;
    post({ t: "rchunk", id, data: null, ...(failed ? { failed: true } : {}) });
  }

  return {
    onMessage(m: ToMain) {
      if (m.t === "req") {
        void serve(m);
        return;
      }
      if (!("id" in m)) return;
      const p = pending.get(m.id);
      if (!p) return;
      switch (m.t) {
        case "chunk":
          p.onChunk?.(m.data, false);
          break;
        case "bodyerr":
          p.onChunk?.(null, true);
          break;
        case "abort":
          // Long waits (Prefer: wait=60) and reads stop with the client.
          p.aborted = true;
          p.ac.abort();
          break;
        case "rpull":
          pullResponse(m.id, p);
          break;
        case "rcancel":
          pending.delete(m.id);
          p.reader?.cancel().catch(() => {});
          break;
      }
    },
    /** The thread is gone: whatever waits on it ends now. */
    failAll() {
      for (const p of pending.values()) {
        p.aborted = true;
        p.ac.abort();
        p.onChunk?.(null, true);
        p.reader?.cancel().catch(() => {});
      }
      pending.clear();
    },
  };
}

/** One buffer of its own (never the app's: see pullResponse). */
function concat(chunks: Uint8Array[], total: number): ArrayBuffer {
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out.buffer;
}
