// Helpers shared by the stores. Database errors are translated HERE, in the store layer: a raw
// SQLite error carries table and column names and must never reach a client (STYLE: traps).
import { SQLiteError } from "bun:sqlite";
import { conflict } from "../errors.ts";

// Several timestamps are taken per run within the same millisecond (created, started, finished):
// the ISO string is formatted once per millisecond.
let lastMs = Number.NaN;
let lastIso = "";
/** The current time as an ISO 8601 string (UTC, milliseconds). */
export function now(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

/** Run fn, turning a UNIQUE violation into 409 conflict with the given message. */
export function uniqueOr<T>(fn: () => T, message: string, field?: string): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SQLiteError && /UNIQUE|PRIMARY KEY/.test(e.message)) {
      throw conflict(message, field ? [{ field, code: "unique", message }] : []);
    }
    throw e;
  }
}

export const bool = (v: number | boolean | null | undefined) => v === 1 || v === true;
export const parseJson = <T>(s: string | null | undefined, fallback: T): T => {
  if (s == null) return fallback;
  try {
    return JSON.parse(s) as T;
  } catch {
    return fallback;
  }
};
