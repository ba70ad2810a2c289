// Messages between an HTTP thread (src/http/threads/worker.ts) and the main thread
// (src/http/threads/relay.ts). A request's id is the HTTP thread's own. Bodies travel in chunks
// in both directions, each asked for by the reader (`pull`, `rpull`): a large upload or download
// is never held whole by either side, and the app's body limits still count it while reading.
import type { Handed } from "./handoff.ts";
import type { WorkflowVersion } from "../../workflows/types.ts";

/**
 * Versions the main thread remembers having sent to a thread (then it forgets them all); the
 * thread keeps twice as many, so a version the main thread did not resend is always there.
 */
export const SENT_DEFS_MAX = 512;

/** What an HTTP thread needs of the configuration. */
export interface ThreadInit {
  index: number;
  host: string;
  port: number;
  idleTimeout: number;
  maxMetadataBytes: number;
  maxPayloadBytes: number;
  stepTimeoutMs: number;
  stepTimeoutMaxMs: number;
  /** The inline lane is on (config inline_jobs): otherwise no fast path. */
  inline: boolean;
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
      /** The whole body, when the thread has read it (a fast-path candidate): nothing to pull. */
      body?: ArrayBuffer;
      /** The thread can read and check the body itself (handoff.ts): the URL's path and query. */
      fast: string | null;
      /**
       * Checked already against the version this URL ran last time (`key`): the submission, or
       * null when the thread cannot finish it. Used when that is still the version that runs.
       */
      pre?: { key: string; handed: WireHanded | null };
    }
  /** A chunk of the request body (null: its end), answering `pull`. */
  | { t: "chunk"; id: number; data: ArrayBuffer | null }
  /** The request body could not be read (the client went away). */
  | { t: "bodyerr"; id: number }
  /** The client went away: the app's request is aborted. */
  | { t: "abort"; id: number }
  /** Answer to `admit`: the submission checked inline, or null (the body is then pulled). */
  | { t: "admitted"; id: number; handed: WireHanded | null }
  /** The client wants the next chunk of the response body. */
  | { t: "rpull"; id: number }
  /** The client stopped reading the response. */
  | { t: "rcancel"; id: number }
  | { t: "stopped" };

export type ToThread =
  | { t: "pull"; id: number }
  | {
      t: "admit";
      id: number;
      /** Cache key of the version (workflow id and number: versions never change). */
      key: string;
      /** The version, unless this thread was sent it before. */
      def: WorkflowVersion | null;
      /** The run URL (path and query) it is the version of, for the next request's check. */
      path: string | null;
    }
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

/**
 * What a thread read and checked, as it crosses: JSON text and the bytes. Structured cloning of
 * nested objects costs the main thread several times what JSON.parse of the same data does.
 */
export interface WireHanded {
  json: string;
  bytes: ArrayBuffer;
}

export function toWire(h: Omit<Handed, "id" | "createdAt">): WireHanded {
  const { bytes, ...sub } = h.sub;
  return { json: JSON.stringify({ sub, final: h.final }), bytes: bytes.slice().buffer as ArrayBuffer };
}

export function fromWire(w: WireHanded): Omit<Handed, "id" | "createdAt"> {
  const o = JSON.parse(w.json) as Omit<Handed, "id" | "createdAt">;
  o.sub.bytes = new Uint8Array(w.bytes);
  return o;
}

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
