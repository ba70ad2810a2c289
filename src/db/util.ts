// Helpers shared by the stores. Database errors are translated HERE, in the store layer: a raw
// engine error carries table and column names and must never reach a client (STYLE: traps). The
// drivers turn unique violations of either engine into UniqueViolation (src/db/program.ts).
import { conflict } from "../errors.ts";
import { type Program, UniqueViolation } from "./program.ts";

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

/** Runs a program, turning a UNIQUE violation into 409 conflict with the given message. */
export function* uniqueOr<T>(p: Program<T>, message: string, field?: string): Program<T> {
  try {
    return yield* p;
  } catch (e) {
    if (e instanceof UniqueViolation)
      throw conflict(message, field ? [{ field, code: "unique", message }] : []);
    throw e;
  }
}

/** The same for a promise (a transaction run by the driver). */
export async function uniqueOrAsync<T>(p: Promise<T>, message: string, field?: string): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof UniqueViolation)
      throw conflict(message, field ? [{ field, code: "unique", message }] : []);
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
