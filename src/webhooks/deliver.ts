// One HTTP attempt of a delivery: resolve and check the target (DNS can change after creation),
// connect to the checked address itself, POST, read at most a short excerpt of the answer.
// Redirects are not followed (CONTRACT §7): a 3xx is a failed attempt. A compressed reply is not
// inflated: the excerpt is its first bytes as sent.
import { isIP } from "node:net";
import type { Attempt, ReceiverHints } from "./types.ts";
import { resolveTarget } from "./ssrf.ts";

/** Bytes of the response body read and kept: enough to see an error message, no more. */
export const EXCERPT_BYTES = 1024;
/** A receiver's Retry-After is honoured up to this (a day): a larger one is read as this. */
export const MAX_RETRY_AFTER_MS = 86_400_000;

/**
 * Retry-After (RFC 9110 §10.2.3): seconds, or an HTTP date; ms from now, or null when absent or
 * unreadable. Honoured on any answer that is not a 2xx: Standard Webhooks says a retry-after
 * "should be taken into consideration" on whatever response carries one (503 is its example; it
 * asks to throttle on 429, 502 and 504 too). Until 2026-11-29 only 429 and 503 were read.
 */
export function retryAfterMs(status: number, header: string | null, nowMs = Date.now()): number | null {
  if ((status >= 200 && status < 300) || !header) return null;
  const v = header.trim();
  // Any number of digits (eleven were read as a date, none, and the retry came at once); so many
  // that the number is Infinity, a day.
  const ms = /^\d+$/.test(v) ? Math.min(Number(v) * 1000, MAX_RETRY_AFTER_MS) : Date.parse(v) - nowMs;
  if (!Number.isFinite(ms)) return null;
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

export interface AttemptOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Aborted on shutdown: the attempt then resolves null and is not logged. */
  shutdown: AbortSignal;
  /** The target's resolution and check (tests give a host name two addresses). */
  resolve?: typeof resolveTarget;
}

/**
 * Errors that mean no connection was made, so nothing was sent: the attempt goes on to the host's
 * next checked address, as browsers and curl do (a dual-stack receiver whose IPv6 route is
 * broken). Any other failure ends the attempt: the request may have reached the receiver.
 */
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "ConnectionRefused",
]);
const notConnected = (e: unknown) => NOT_CONNECTED.has((e as { code?: string })?.code ?? "");

/**
 * The URL to fetch and the TLS server name: the host replaced by the checked address, so the
 * connection goes where the check looked. Host header and SNI keep the original name.
 */
function pinned(url: URL, address: string): { target: string; host: string; serverName?: string } {
  const host = url.host;
  if (isIP(url.hostname.replace(/^\[|\]$/g, ""))) return { target: url.href, host };
  const u = new URL(url.href);
  u.hostname = address.includes(":") ? `[${address}]` : address;
  return { target: u.href, host, serverName: url.protocol === "https:" ? url.hostname : undefined };
}

async function readExcerpt(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  try {
    while (n < EXCERPT_BYTES) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      n += value.byteLength;
    }
  } finally {
    void reader.cancel().catch(() => {});
  }
  const bytes = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES);
  // U+0000 is not text to PostgreSQL: an excerpt holding one failed the attempt's insert, and the
  // delivery was sent again at every lease's end, for ever.
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes).replaceAll("\u0000", "\uFFFD");
}

const describe = (e: unknown, timeoutMs: number): string => {
  if ((e as Error)?.name === "TimeoutError") return `timed out after ${timeoutMs} ms`;
  const code = (e as { code?: unknown })?.code;
  return typeof code === "string" ? `connection failed (${code})` : "connection failed";
};

/** Sends one attempt; null when cut short by shutdown. Never throws. */
export async function attempt(
  url: string,
  headers: Record<string, string>,
  body: string,
  o: AttemptOptions,
): Promise<(Attempt & ReceiverHints) | null> {
  const attemptedAt = new Date().toISOString();
  const started = performance.now();
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = AbortSignal.any([timeout, o.shutdown]);
  const done = (
    http_status: number | null,
    error: string | null,
    response_excerpt: string | null,
    retryAfter: number | null = null,
  ) => ({
    attempted_at: attemptedAt,
    http_status,
    duration_ms: Math.round(performance.now() - started),
    error,
    response_excerpt,
    retryAfterMs: retryAfter,
  });
  try {
    const u = new URL(url);
    const r = await (o.resolve ?? resolveTarget)(u, o.allowPrivate, signal);
    if (!r.ok) return done(null, `refused: ${r.message}`, null);
    const send = (address: string) => {
      const p = pinned(u, address);
      return fetch(p.target, {
        method: "POST",
        // Never inflated: fetch would inflate far ahead of the excerpt (211 bytes of brotli are
        // 256 MiB; eight such replies at once took the server to 600 MB). Nor asked for.
        headers: { ...headers, host: p.host, "accept-encoding": "identity" },
        body,
        redirect: "manual",
        decompress: false,
        signal,
        ...(p.serverName ? { tls: { serverName: p.serverName } } : {}),
      });
    };
    let res: Response | undefined;
    for (let i = 0; res === undefined; i++) {
      try {
        res = await send(r.addresses[i]!);
      } catch (e) {
        if (i + 1 >= r.addresses.length || !notConnected(e) || signal.aborted) throw e;
      }
    }
    // The status decides; a body that trickles past the time limit only shortens the excerpt.
    const excerpt = await readExcerpt(res).catch(() => null);
    if (o.shutdown.aborted) return null;
    const ok = res.status >= 200 && res.status < 300;
    return done(
      res.status,
      ok ? null : `HTTP ${res.status}`,
      excerpt,
      retryAfterMs(res.status, res.headers.get("retry-after")),
    );
  } catch (e) {
    if (o.shutdown.aborted) return null;
    return done(null, describe(e, o.timeoutMs), null);
  }
}
