// An HTTP thread (ASSAY_HTTP_THREADS > 1): its own Bun.serve on the main listener's host and port
// (SO_REUSEPORT: the kernel spreads connections over the threads). It serves the sync runs the
// inline lane finishes itself, start to end (thread-runs.ts); every other request goes to the
// main thread (relay.ts), which answers it.
import { hasAuthority, hostRequired, internalError } from "../fallback.ts";
import { fastCandidate } from "./fast-path.ts";
import {
  type ThreadInit,
  type ToMain,
  type ToThread,
  decodeHeaders,
  encodeHeaders,
  ownBuffer,
} from "./protocol.ts";
import { type ThreadRuns, createThreadRuns } from "./thread-runs.ts";

declare const self: Worker;

interface Pending {
  req: Request;
  resolve(r: Response): void;
  /** The body as read for the thread's own lane (served from here when the main thread pulls it). */
  bytes: Uint8Array | null;
  reader: ReadableStreamDefaultReader<Uint8Array> | null;
  bodyFailed: boolean;
  onRChunk: ((m: Extract<ToThread, { t: "rchunk" }>) => void) | null;
}

let init: ThreadInit | null = null;
let server: ReturnType<typeof Bun.serve> | null = null;
let runs: ThreadRuns | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();
const post = (m: ToMain, transfer?: Transferable[]) => self.postMessage(m, transfer ?? []);

async function start(i: ThreadInit) {
  init = i;
  try {
    if (i.inline) runs = await createThreadRuns(i.index, i.runs, () => post({ t: "webhooks" }));
    server = Bun.serve({
      hostname: i.host,
      port: i.port,
      reusePort: true,
      // As on the main listener (src/server.ts): the app enforces every body limit itself.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      idleTimeout: i.idleTimeout,
      ...(i.tls ? { tls: i.tls } : {}),
      // Never Bun's development error page (it shows the stack): a bug here answers as the app's 500.
      development: false,
      error: internalError,
      fetch: accept,
    });
    post({ t: "listening" });
  } catch (e) {
    await runs?.close().catch(() => {});
    post({ t: "failed", code: (e as { code?: string }).code ?? null, message: String(e) });
  }
}

async function accept(
  req: Request,
  srv: { requestIP(r: Request): { address: string } | null },
): Promise<Response> {
  // As on the main listener (src/app.ts): the main thread could not rebuild a bare path.
  if (!hasAuthority(req)) return hostRequired(req);
  const p: Pending = { req, resolve: () => {}, bytes: null, reader: null, bodyFailed: false, onRChunk: null };
  let ip: string | null | undefined;
  if (runs && fastCandidate(req, init!.maxPayloadBytes)) {
    // The peer before the body: once a client that goes away mid-body is gone, Bun knows none.
    ip = srv.requestIP(req)?.address ?? null;
    try {
      p.bytes = await req.bytes();
    } catch {
      p.bodyFailed = true;
    }
    if (p.bytes) {
      const res = await runs.serve(req, p.bytes, srv);
      if (res) return res;
    }
  }
  return relay(req, ip === undefined ? (srv.requestIP(req)?.address ?? null) : ip, p);
}

function relay(req: Request, ip: string | null, p: Pending) {
  const id = ++nextId;
  return new Promise<Response>((resolve) => {
    p.resolve = resolve;
    pending.set(id, p);
    req.signal.addEventListener(
      "abort",
      () => {
        if (pending.has(id)) post({ t: "abort", id });
      },
      { once: true },
    );
    post({
      t: "req",
      id,
      method: req.method,
      url: req.url,
      headers: encodeHeaders(req.headers),
      ip,
      // As the main listener has it: none without Content-Length or Transfer-Encoding, whatever
      // the method (an empty stream made a body-less DELETE with a JSON Content-Type a 400).
      hasBody: req.body !== null,
      // Read already: sent along whole (a copy: the lane may have kept a view of it).
      body: p.bytes && !p.bodyFailed ? (p.bytes.slice().buffer as ArrayBuffer) : undefined,
    });
  });
}

function pullBody(id: number, p: Pending) {
  if (p.bodyFailed) return post({ t: "bodyerr", id });
  if (p.bytes) {
    const data = p.bytes.byteLength ? ownBuffer(p.bytes) : null;
    p.bytes = new Uint8Array(0);
    return data ? post({ t: "chunk", id, data }, [data]) : post({ t: "chunk", id, data: null });
  }
  if (!p.reader) {
    if (!p.req.body) return post({ t: "chunk", id, data: null });
    p.reader = p.req.body.getReader();
  }
  p.reader.read().then(
    (r) => {
      if (r.done) return post({ t: "chunk", id, data: null });
      const data = ownBuffer(r.value);
      post({ t: "chunk", id, data }, [data]);
    },
    () => {
      p.bodyFailed = true;
      post({ t: "bodyerr", id });
    },
  );
}

function onHead(m: Extract<ToThread, { t: "head" }>, p: Pending) {
  const init = { status: m.status, headers: decodeHeaders(m.headers) };
  if (!m.streamed) {
    pending.delete(m.id);
    return p.resolve(new Response(m.body, init));
  }
  const stream = new ReadableStream<Uint8Array>(
    {
      pull: (c) =>
        new Promise<void>((resolve) => {
          p.onRChunk = (r) => {
            p.onRChunk = null;
            if (r.failed) c.error(new Error("The response broke off."));
            else if (r.data === null) c.close();
            else c.enqueue(new Uint8Array(r.data));
            if (r.data === null) pending.delete(m.id);
            resolve();
          };
          post({ t: "rpull", id: m.id });
        }),
      cancel: () => {
        pending.delete(m.id);
        post({ t: "rcancel", id: m.id });
      },
    },
    { highWaterMark: 0 },
  );
  p.resolve(new Response(stream, init));
}

self.onmessage = (e: MessageEvent<ThreadInit | ToThread>) => {
  const m = e.data;
  if (!("t" in m)) return void start(m);
  switch (m.t) {
    case "stop":
      void (async () => {
        // In-flight requests finish (the relayed ones are answered by the main thread); new ones
        // are refused. Then the thread's own writes are over: its connection closes.
        await server?.stop(false);
        await runs?.close().catch(() => {});
        post({ t: "stopped" });
      })();
      return;
    case "report":
      return post({ t: "report", id: m.id, report: runs?.report() ?? null });
    case "autocheckpoint":
      return runs?.autoCheckpoint(m.pages);
  }
  const p = pending.get(m.id);
  if (!p) return;
  switch (m.t) {
    case "pull":
      return pullBody(m.id, p);
    case "head":
      return onHead(m, p);
    case "rchunk":
      return p.onRChunk?.(m);
  }
};
