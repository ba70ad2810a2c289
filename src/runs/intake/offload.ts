// Large run requests are read on a thread of their own (src/runs/intake/worker.ts). Reading a
// request is parsing it: a 24 MB envelope whose content is a JSON array held the HTTP thread
// 0.39 s (parse, then serialize the content), and every other request — /healthz included —
// waited (issue #19). Below OFFLOAD_MIN_BYTES the intake stays here: it costs microseconds, less
// than the round trip. The body is transferred to the thread and the stored bytes come back the
// same way, with their SHA-256; refusals come back as the same error object (400/415) they would
// be here.
import { fromWire, serviceUnavailable, type WireError } from "../../errors.ts";
import { scanBody } from "../../http/body-shape.ts";
import type { Logger } from "../../lib/log.ts";
import { type HeaderSource, INTAKE_HEADERS, type Intake, type IntakeLimits, intake } from "./modes.ts";

/** Bodies from this size up are read off the HTTP thread (the size a sync run is written first, too). */
export const OFFLOAD_MIN_BYTES = 1024 * 1024;
/**
 * JSON bodies with this many structural characters (`{ [ , :`) are read there too, whatever their
 * size: parsing costs ~1–2 µs per object member, so a 1 MB envelope of 120,000 metadata or
 * content members held the HTTP thread ~0.15 s (four at once: /healthz 0.5 s). 4096 costs ≤ ~5 ms.
 */
export const OFFLOAD_MIN_TOKENS = 4096;

export interface ToIntake {
  id: number;
  headers: [string, string][];
  body: ArrayBuffer;
  length: number;
  limits: IntakeLimits;
}

export type FromIntake =
  | {
      id: number;
      ok: true;
      intake: Omit<Intake, "bytes">;
      bytes: ArrayBuffer;
      offset: number;
      length: number;
    }
  | { id: number; ok: false; error: WireError }
  /** Not a refusal: the intake itself threw (a bug). The route answers 500 and it is logged. */
  | { id: number; ok: false; failure: string };

/**
 * A body the intake may parse as JSON (an envelope or a candidate; text/plain re-inspected as
 * JSON, also as a multipart file) holding many values.
 */
function manyValues(headers: HeaderSource, body: Uint8Array): boolean {
  if (body.byteLength < OFFLOAD_MIN_TOKENS) return false;
  const type = headers.get("content-type") ?? "";
  if (!/json|text\/plain|multipart/i.test(type)) return false;
  return scanBody(body, Number.POSITIVE_INFINITY, OFFLOAD_MIN_TOKENS, true) === "too_many_values";
}

interface Waiting {
  resolve(i: Intake): void;
  reject(e: unknown): void;
}

export interface IntakeRunner {
  /** The request's Intake, or throws its 400/415 (503 when the thread died meanwhile). */
  read(headers: HeaderSource, body: Uint8Array, limits: IntakeLimits): Promise<Intake>;
  /** Requests being read off the HTTP thread now, and since the start. */
  readonly inFlight: number;
  readonly offloaded: number;
  close(): void;
}

export function createIntakeRunner(
  opts: { workerUrl?: URL | string | null; minBytes?: number; log?: Logger } = {},
): IntakeRunner {
  const minBytes = opts.minBytes ?? OFFLOAD_MIN_BYTES;
  let worker: Worker | null = null;
  const waiting = new Map<number, Waiting>();
  let nextId = 1;
  let offloaded = 0;

  const failAll = (why: string) => {
    for (const w of waiting.values()) w.reject(serviceUnavailable(why, 1));
    waiting.clear();
  };

  function spawn(url: URL | string): Worker {
    const w = new Worker(url);
    w.onmessage = (e: MessageEvent<FromIntake>) => {
      const m = e.data;
      const p = waiting.get(m.id);
      if (!p) return;
      waiting.delete(m.id);
      if (m.ok) p.resolve({ ...m.intake, bytes: new Uint8Array(m.bytes, m.offset, m.length) });
      else if ("error" in m) p.reject(fromWire(m.error));
      else p.reject(new Error(`intake thread: ${m.failure}`));
    };
    const lost = (why: string) => {
      if (worker !== w) return;
      worker = null;
      opts.log?.error("intake thread lost; requests in it get 503", { why });
      failAll("The request could not be read; retry.");
    };
    w.addEventListener("error", (e) => lost(String((e as ErrorEvent).message ?? e)));
    w.addEventListener("close", () => lost("exited"));
    return w;
  }

  return {
    read(headers, body, limits) {
      if (!opts.workerUrl || (body.byteLength < minBytes && !manyValues(headers, body))) {
        try {
          return Promise.resolve(intake(headers, body, limits));
        } catch (e) {
          return Promise.reject(e);
        }
      }
      worker ??= spawn(opts.workerUrl);
      offloaded++;
      const id = nextId++;
      // Transferred, not copied: the body must own its whole buffer to be handed over.
      const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : body.slice();
      const message: ToIntake = {
        id,
        headers: INTAKE_HEADERS.flatMap((n) => {
          const v = headers.get(n);
          return v === null ? [] : [[n, v] as [string, string]];
        }),
        body: owned.buffer as ArrayBuffer,
        length: owned.byteLength,
        limits,
      };
      const w = worker;
      return new Promise<Intake>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        try {
          w.postMessage(message, [message.body]);
        } catch {
          w.postMessage(message); // a buffer that cannot be transferred is copied
        }
      });
    },
    get inFlight() {
      return waiting.size;
    },
    get offloaded() {
      return offloaded;
    },
    close() {
      const w = worker;
      worker = null;
      failAll("The server is shutting down.");
      w?.terminate();
    },
  };
}
