// An HTTP thread (ASSAY_HTTP_THREADS > 1): its own Bun.serve on the main listener's host and port
// (SO_REUSEPORT: the kernel spreads connections over the threads). It has no database and no
// app: every request goes to the main thread (relay.ts), which answers it. The one thing it does
// itself is the costly middle of a sync run the inline lane can take (handoff.ts): read the body,
// intake, file type, the inline check and the hash — after the main thread admitted the request
// and before it writes the run.
import { InlineRunner } from "../../jobs/inline.ts";
import { Lru } from "../../jobs/lru.ts";
import { checkInline } from "../../runs/inline-check.ts";
import { intake } from "../../runs/intake/modes.ts";
import { MAX_FILENAME_LENGTH, checkFileType } from "../../runs/service.ts";
import { pendingSteps } from "../../runs/summary.ts";
import type { WorkflowVersion } from "../../workflows/types.ts";
import { hasAuthority, hostRequired, internalError } from "../fallback.ts";
import { fastCandidate } from "./fast-path.ts";
import type { Handed } from "./handoff.ts";
import {
  SENT_DEFS_MAX,
  type ThreadInit,
  type ToMain,
  type ToThread,
  encodeHeaders,
  decodeHeaders,
  ownBuffer,
  toWire,
} from "./protocol.ts";

declare const self: Worker;

interface Pending {
  req: Request;
  resolve(r: Response): void;
  /** The body as read for the fast path (served from here if the main thread pulls it after all). */
  bytes: Uint8Array | null;
  reader: ReadableStreamDefaultReader<Uint8Array> | null;
  bodyFailed: boolean;
  onRChunk: ((m: Extract<ToThread, { t: "rchunk" }>) => void) | null;
}

let init: ThreadInit | null = null;
let server: ReturnType<typeof Bun.serve> | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();
/** Versions by "workflow id:version" (immutable): twice what the main thread assumes we keep. */
const defs = new Lru<string, WorkflowVersion>(SENT_DEFS_MAX * 2);
/** The version key each run URL (path and query) was last admitted with. */
const pathDefs = new Lru<string, string>(SENT_DEFS_MAX * 2);
const inline = new InlineRunner();
const post = (m: ToMain, transfer?: Transferable[]) => self.postMessage(m, transfer ?? []);

function start(i: ThreadInit) {
  init = i;
  try {
    server = Bun.serve({
      hostname: i.host,
      port: i.port,
      reusePort: true,
      // As on the main listener (src/server.ts): the app enforces every body limit itself.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      idleTimeout: i.idleTimeout,
      // Never Bun's development error page (it shows the stack): a bug here answers as the app's 500.
      development: false,
      error: internalError,
      fetch: accept,
    });
    post({ t: "listening" });
  } catch (e) {
    post({ t: "failed", code: (e as { code?: string }).code ?? null, message: String(e) });
  }
}

async function accept(
  req: Request,
  srv: { requestIP(r: Request): { address: string } | null },
): Promise<Response> {
  // As on the main listener (src/app.ts): the main thread could not rebuild a bare path.
  if (!hasAuthority(req)) return hostRequired();
  const id = ++nextId;
  const headers = encodeHeaders(req.headers);
  const fast = init!.inline && fastCandidate(req, init!.maxPayloadBytes);
  const p: Pending = { req, resolve: () => {}, bytes: null, reader: null, bodyFailed: false, onRChunk: null };
  // The version this URL ran last time: checked now, before asking, so that the main thread needs
  // no round trip to admit it when it is still the one that runs (it says so by its key).
  let pre: Extract<ToMain, { t: "req" }>["pre"];
  const pathKey = fast ? req.url.slice(req.url.indexOf("/", req.url.indexOf("//") + 2)) : "";
  const key = fast ? pathDefs.get(pathKey) : undefined;
  const def = key === undefined ? undefined : defs.get(key);
  if (key !== undefined && def) {
    try {
      p.bytes = await req.bytes();
      const handed = await check(def, req.headers, p.bytes);
      pre = { key, handed: handed && toWire(handed) };
    } catch {
      p.bodyFailed = true;
    }
  }
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
      headers,
      ip: srv.requestIP(req)?.address ?? null,
      hasBody: req.method !== "GET" && req.method !== "HEAD",
      // Read already (the check above): sent along, a copy (an admit may still check it here).
      body: p.bytes && !p.bodyFailed ? (p.bytes.slice().buffer as ArrayBuffer) : undefined,
      fast: fast ? pathKey : null,
      pre,
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

async function admit(m: Extract<ToThread, { t: "admit" }>, p: Pending) {
  if (m.def) defs.set(m.key, m.def);
  const def = m.def ?? defs.get(m.key);
  if (m.path !== null) pathDefs.set(m.path, m.key);
  if (p.bodyFailed) return post({ t: "admitted", id: m.id, handed: null });
  try {
    p.bytes ??= await p.req.bytes();
  } catch {
    p.bodyFailed = true;
    return post({ t: "admitted", id: m.id, handed: null });
  }
  const handed = def ? await check(def, p.req.headers, p.bytes) : null;
  if (!handed) return post({ t: "admitted", id: m.id, handed: null });
  post({ t: "admitted", id: m.id, handed: toWire(handed) });
}

/** What runService.start would do with the body, up to the write; null: let it do so. */
async function check(
  def: WorkflowVersion,
  headers: Headers,
  body: Uint8Array,
): Promise<Omit<Handed, "id" | "createdAt"> | null> {
  const i = init!;
  try {
    const sub = intake(headers, body, {
      maxMetadataBytes: i.maxMetadataBytes,
      maxFilenameLength: MAX_FILENAME_LENGTH,
    });
    checkFileType(def, sub.fileType);
    const active = def.steps.filter((s) => s.is_active);
    if (!active.length) return null;
    const record = {
      id: "",
      orgId: 0,
      workflowId: def.workflow_id,
      workflowVersion: def.version,
      steps: pendingSteps(active),
      user: { id: 0, username: "" },
      submission: { ...sub, sha256: "" },
      createdAt: "",
      workflowSlug: def.slug,
    };
    const { final } = checkInline(inline, record, def, i);
    if (!final) return null;
    const sha256 = new Bun.CryptoHasher("sha256").update(sub.bytes).digest("hex");
    return { sub: { ...sub, sha256 }, final };
  } catch {
    // Whatever is wrong with it, the main thread says so, in its own words.
    return null;
  }
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
  if (!("t" in m)) return start(m);
  if (m.t === "stop") {
    void (async () => {
      // In-flight requests finish (the main thread still answers them); new ones are refused.
      await server?.stop(false);
      post({ t: "stopped" });
    })();
    return;
  }
  const p = pending.get(m.id);
  if (!p) return;
  switch (m.t) {
    case "pull":
      return pullBody(m.id, p);
    case "admit":
      return void admit(m, p);
    case "head":
      return onHead(m, p);
    case "rchunk":
      return p.onRChunk?.(m);
  }
};
