// Large run requests are read on a thread of their own (src/runs/intake/worker.ts). Reading a
// request is parsing it: a 24 MB envelope whose content is a JSON array held the HTTP thread
// 0.39 s (parse, then serialize the content), and every other request — /healthz included —
// waited (issue #19). Below OFFLOAD_MIN_BYTES the intake stays here: it costs microseconds, less
// than the round trip. The body is transferred to the thread and the stored bytes come back the
// same way, with their SHA-256; refusals come back as the same error object (400/415) they would
// be here.
import { scanBody } from "../../http/body-shape.ts";
import type { Logger } from "../../lib/log.ts";
import { type ThreadAnswer, threadCalls } from "../../lib/thread-calls.ts";
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

/** What the intake thread read: the Intake, its stored bytes moved back. */
interface IntakeRead {
  intake: Omit<Intake, "bytes">;
  bytes: ArrayBuffer;
  offset: number;
  length: number;
}
/** The intake thread's answer (src/lib/thread-calls.ts). */
export type FromIntake = ThreadAnswer<IntakeRead>;

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
  let offloaded = 0;
  const thread = opts.workerUrl
    ? threadCalls<Omit<ToIntake, "id">, IntakeRead, Intake>({
        url: opts.workerUrl,
        name: "intake thread",
        lostDetail: "The request could not be read; retry.",
        read: (m) => ({ ...m.intake, bytes: new Uint8Array(m.bytes, m.offset, m.length) }),
        log: opts.log,
      })
    : null;

  return {
    read(headers, body, limits) {
      if (!thread || (body.byteLength < minBytes && !manyValues(headers, body))) {
        try {
          return Promise.resolve(intake(headers, body, limits));
        } catch (e) {
          return Promise.reject(e);
        }
      }
      offloaded++;
      // Transferred, not copied: the body must own its whole buffer to be handed over.
      const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : body.slice();
      const buffer = owned.buffer as ArrayBuffer;
      return thread.call(
        {
          headers: INTAKE_HEADERS.flatMap((n) => {
            const v = headers.get(n);
            return v === null ? [] : [[n, v] as [string, string]];
          }),
          body: buffer,
          length: owned.byteLength,
          limits,
        },
        [buffer],
      );
    },
    get inFlight() {
      return thread?.inFlight ?? 0;
    },
    get offloaded() {
      return offloaded;
    },
    close() {
      thread?.close();
    },
  };
}
