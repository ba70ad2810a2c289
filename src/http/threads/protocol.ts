// Messages between an HTTP thread (src/http/threads/worker.ts) and the main thread
// (src/http/threads/relay.ts). A request's id is the HTTP thread's own. Bodies travel in chunks
// in both directions, each asked for by the reader (`pull`, `rpull`): a large upload or download
// is never held whole by either side, and the app's body limits still count it while reading.
import type { ThreadReport, ThreadRunsInit } from "./thread-runs.ts";

/** What an HTTP thread needs of the configuration. */
export interface ThreadInit {
  index: number;
  host: string;
  port: number;
  idleTimeout: number;
  /** HTTPS: the main listener's certificate and key (src/http/tls.ts), or null. */
  tls: { cert: string; key: string } | null;
  maxPayloadBytes: number;
  /** The inline lane is on (config inline_jobs): otherwise the thread serves no run itself. */
  inline: boolean;
  /** What the thread needs to serve sync runs itself (thread-runs.ts). */
  runs: ThreadRunsInit;
}

export type ToMain =
  | { t: "listening" }
  | { t: "failed"; code: string | null; message: string }
  | {
      t: "req";
      id: number;
      method: string;
      url: string;
      /** encodeHeaders(): one string clones far faster than an array of pairs. */
      headers: string;
      /** The socket peer's address (Bun's requestIP), for the audit log and the rate limiter. */
      ip: string | null;
      hasBody: boolean;
      /** The whole body, when the thread has read it (a small run request): nothing to pull. */
      body?: ArrayBuffer;
    }
  /** A chunk of the request body (null: its end), answering `pull`. */
  | { t: "chunk"; id: number; data: ArrayBuffer | null }
  /** The request body could not be read (the client went away). */
  | { t: "bodyerr"; id: number }
  /** The client went away: the app's request is aborted. */
  | { t: "abort"; id: number }
  /** The client wants the next chunk of the response body. */
  | { t: "rpull"; id: number }
  /** The client stopped reading the response. */
  | { t: "rcancel"; id: number }
  /** A run the thread served wrote webhook deliveries: the main thread's dispatcher sends them. */
  | { t: "webhooks" }
  /** Answer to `report`: what the thread did since its last report (thread-runs.ts). */
  | { t: "report"; id: number; report: ThreadReport | null }
  | { t: "stopped" };

export type ToThread =
  | { t: "pull"; id: number }
  /** For /metrics: the thread's counts since its last report. */
  | { t: "report"; id: number }
  /** The checkpoint thread failed: the thread's connection checkpoints in its commits again. */
  | { t: "autocheckpoint"; pages: number }
  | {
      t: "head";
      id: number;
      status: number;
      headers: string;
      /** The whole body (null: none), or `streamed`: the thread pulls it with `rpull`. */
      body: ArrayBuffer | string | null;
      streamed: boolean;
    }
  /** A chunk of the response body; null: its end, `failed`: the app's body broke (so does the connection). */
  | { t: "rchunk"; id: number; data: ArrayBuffer | null; failed?: true }
  | { t: "stop" };

/** Headers as one string: "name\nvalue\n" each (a field value never holds a line break). */
export function encodeHeaders(h: Headers): string {
  let out = "";
  h.forEach((v, k) => {
    if (k !== "set-cookie") out += `${k}\n${v}\n`;
  });
  for (const c of h.getSetCookie()) out += `set-cookie\n${c}\n`;
  return out;
}

export function decodeHeaders(s: string): Headers {
  const h = new Headers();
  const parts = s.split("\n");
  for (let i = 0; i + 1 < parts.length; i += 2) h.append(parts[i]!, parts[i + 1]!);
  return h;
}

/** An ArrayBuffer holding exactly these bytes, transferable (copied only when it is a view). */
export function ownBuffer(u: Uint8Array): ArrayBuffer {
  return u.byteOffset === 0 && u.byteLength === u.buffer.byteLength && u.buffer instanceof ArrayBuffer
    ? u.buffer
    : (u.slice().buffer as ArrayBuffer);
}
