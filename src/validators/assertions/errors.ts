// What an author reads when a rule cannot be evaluated. The engine's own messages are written for
// its developers ("found no matching overload for '_+_' applied to '(int, double)'") and some are
// JavaScript's ("Cannot convert x to a BigInt"): none reaches a user as is (issue #23). Known
// messages are rephrased; messages of Assay's own functions (RuleError) pass; the rest become a
// plain sentence that names no engine internals.
import { isCelError } from "@bufbuild/cel";

/** An error raised by Assay's CEL functions: its message is written for authors. */
export class RuleError extends Error {}

export function fail(message: string): never {
  throw new RuleError(message);
}

/** CEL's internal operator function names, as a rule's author wrote them. */
export const OPERATOR_NAMES: Record<string, string> = {
  "_+_": "+",
  "_-_": "-",
  "_*_": "*",
  "_/_": "/",
  "_%_": "%",
  "_==_": "==",
  "_!=_": "!=",
  "_<_": "<",
  "_<=_": "<=",
  "_>_": ">",
  "_>=_": ">=",
  "@in": "in",
  "!_": "!",
  "-_": "unary -",
};

const typeNames = (list: string) =>
  list
    .replace(/\([^()]*\)/g, "") // map(dyn, dyn) → map
    .split(", ")
    .filter((t) => t !== "")
    .map((t) =>
      t
        .replace(/^google\.protobuf\./, "")
        .toLowerCase()
        .replace("null_type", "null"),
    )
    .join(", ");

const RULES: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  // The conditional (and the macros filter, map with a filter, exists_one, which expand to it):
  // the engine names it without quotes, and its first argument is the condition.
  [
    /^found no matching overload for '?_\?_:_'? applied to '\(([^,()]+(?:\([^()]*\))?)/s,
    (m) => `expected a bool, got ${typeNames(m[1]!)}`,
  ],
  [
    /^found no matching overload for '([^']+)' applied to '(?:(.+?)\.)?\((.*)\)'$/s,
    (m) =>
      `no overload of '${OPERATOR_NAMES[m[1]] ?? m[1]}' takes (${typeNames([m[2], m[3]].filter(Boolean).join(", "))})`,
  ],
  [/^field not found: (.*)$/s, (m) => `no such key: '${m[1]}'`],
  [/^index (-?\d+) out of bounds/, (m) => `index ${m[1]} is out of range`],
  [/^u?int (divide|modulus) by zero$/, (m) => (m[1] === "divide" ? "division by zero" : "modulus by zero")],
  [
    /^u?int overflow during (.*)$/,
    (m) => (OPERATOR_NAMES[m[1]] ? `integer overflow in ${OPERATOR_NAMES[m[1]]}` : "integer overflow"),
  ],
  [/^type mismatch: expected bool, got (.*)$/, (m) => `expected a bool, got ${typeNames(m[1])}`],
  [/^type mismatch: iterable vs (.*)$/, (m) => `cannot iterate over ${typeNames(m[1])}`],
  [/^map key conflict: (.*)$/s, (m) => `the map repeats the key ${m[1]}`],
  [/^unsupported key type$/, () => "a map key must be an int, uint, bool or string"],
  [/^unresolved attribute$/, () => "no such variable"],
  [/^unbound function: (.*)$/, (m) => `unknown function '${m[1]}'`],
  [/^invalid argument to function (\S+): (.*)$/s, (m) => `${m[1]}(): ${m[2]}`],
  [/^Unable to convert string '(.*)' to bool$/s, (m) => `cannot convert ${JSON.stringify(m[1])} to bool`],
  [/^Failed to decode bytes as string/, () => "the bytes are not valid UTF-8"],
  [/^Failed to parse timestamp/, () => "not a timestamp in RFC 3339 format (2024-01-31T12:00:00Z)"],
  [
    /^(?:invalid duration|bad duration|duration string|Failed to parse duration)/i,
    () => "not a duration (e.g. 1h30m, 90s)",
  ],
  [/^invalid time zone: (.*)$/s, (m) => `not a time zone: ${JSON.stringify(m[1])} (an IANA name or +01:00)`],
  [/^(duration|timestamp) out of range$/, (m) => `${m[1]} out of range`],
  [/^Maximum call stack size exceeded/, () => "the data or the expression nests too deeply"],
  [/^Invalid string length/, () => "a string grew too long"],
];

/** The author-facing text of an evaluation error (a CelError value or a thrown error). */
export function userMessage(err: unknown): string {
  let cause: unknown = err;
  // The engine wraps what a function throws; the wrapped error says which kind it was.
  while (isCelError(cause) && cause.cause instanceof Error) cause = cause.cause;
  if (cause instanceof RuleError) return cause.message;
  const text = cause instanceof Error ? cause.message : String(cause);
  for (const [pattern, phrase] of RULES) {
    const m = pattern.exec(text);
    if (m) return phrase(m);
  }
  return "the expression could not be evaluated on this data";
}
