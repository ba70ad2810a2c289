// Structured one-line JSON logs to stderr. Levels: debug < info < warn < error < silent.
import { format } from "node:util";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type Level = keyof typeof LEVELS;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: string): Logger {
  const min = LEVELS[(level as Level) in LEVELS ? (level as Level) : "info"];
  const at = (l: Exclude<Level, "silent">) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[l] < min) return;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: l, msg, ...fields })}\n`);
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/**
 * Lets one line of each kind through per window and counts the others: while PostgreSQL is away
 * every request, dispatcher pass and retry said so (a line a request, two a second from bun:sql),
 * thousands of lines an hour. The next line of a kind that gets through carries how many were left
 * out (`repeated`). Kinds are fixed messages; at most MAX_KINDS are remembered.
 */
export function throttle(windowMs = 60_000, now: () => number = Date.now) {
  const seen = new Map<string, { at: number; skipped: number }>();
  return (kind: string, write: (repeated: { repeated?: number }) => void): void => {
    const t = now();
    const s = seen.get(kind);
    if (s && t - s.at < windowMs) {
      s.skipped++;
      return;
    }
    if (!s && seen.size >= MAX_KINDS) seen.clear();
    write(s?.skipped ? { repeated: s.skipped } : {});
    seen.set(kind, { at: t, skipped: 0 });
  };
}
const MAX_KINDS = 1000;

/**
 * What the runtime's own modules write with console.warn and console.error (bun:sql's "LISTEN …
 * failed, retrying" while PostgreSQL is away) becomes a log line like ours, so that stderr stays
 * one JSON object a line. For `assay serve` and its HTTP threads only: the CLI's other commands
 * write plain messages.
 */
export function routeConsole(log: Logger): void {
  // Throttled by text: bun:sql repeats its LISTEN retry warning about once a second per channel.
  const once = throttle();
  console.warn = (...args: unknown[]) => {
    const text = format(...args);
    once(`warn ${text}`, (r) => log.warn(text, r));
  };
  console.error = (...args: unknown[]) => {
    const text = format(...args);
    once(`error ${text}`, (r) => log.error(text, r));
  };
}
