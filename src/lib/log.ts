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
 * What the runtime's own modules write with console.warn and console.error (bun:sql's "LISTEN …
 * failed, retrying" while PostgreSQL is away) becomes a log line like ours, so that stderr stays
 * one JSON object a line. For `assay serve` and its HTTP threads only: the CLI's other commands
 * write plain messages.
 */
export function routeConsole(log: Logger): void {
  console.warn = (...args: unknown[]) => log.warn(format(...args));
  console.error = (...args: unknown[]) => log.error(format(...args));
}
