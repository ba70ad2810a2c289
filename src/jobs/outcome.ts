// Step outcomes built outside a validator: skipped steps, and steps ended by an error, a time
// limit, a cancel or a crash. Shared by the pool and the worker so both say things the same way.
import { headOf } from "../lib/text.ts";
import type { StepOutcome } from "./protocol.ts";

const MAX_MESSAGE = 200;

export function skippedStep(): StepOutcome {
  return { status: "skipped", findings: [], truncated: false, durationMs: 0 };
}

export function errorStep(error: string, durationMs: number): StepOutcome {
  return { status: "error", findings: [], truncated: false, durationMs: Math.round(durationMs), error };
}

/** One line for people: the message without the stack (stacks show file paths of the server). */
export function shortError(err: unknown): string {
  let text = String(err);
  if (err instanceof Error)
    text = err.name && err.name !== "Error" ? `${err.name}: ${err.message}` : err.message;
  return clip(text.split("\n")[0] ?? "");
}

/**
 * Bun hands a worker's uncaught error to the main thread as formatted text: a source excerpt, a
 * caret, then `error: message` or `TypeError: message`, then the stack. Keep the message line.
 * Only for errors the worker loop could not catch (a top-level throw, a throwing timer).
 */
export function shortWorkerError(formatted: string): string {
  // A thrown non-Error (a DOMException, say) arrives as an inspected object instead.
  const name = /^\s*name: "(.*)",?$/m.exec(formatted)?.[1];
  const message = /^\s*message: "(.*)",?$/m.exec(formatted)?.[1];
  if (message !== undefined) return clip(name ? `${name}: ${message}` : message);
  const lines = formatted.split("\n").map((l) => l.trim());
  const line =
    lines.find((l) => /^[A-Za-z]*(Error|error|Message):\s/.test(l)) ??
    lines.filter((l) => l && !l.startsWith("at ")).pop() ??
    "";
  return clip(line.replace(/^error:\s*/, ""));
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${headOf(text, MAX_MESSAGE - 1)}…` : text;
}
