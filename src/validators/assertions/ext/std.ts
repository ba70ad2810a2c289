// Corrections to @bufbuild/cel's standard functions, registered after them (same overload id,
// so they replace them). Each fixes a case where the engine's answer differs from cel-go's:
// - int("")/int(" 7")/int("0x1f") gave 0/7/31 (JavaScript's BigInt() rules); cel-go parses decimal
//   digits only. Submitted CSV and XML values are strings, so this decides what `int(row.qty)`
//   accepts. uint() and double() likewise (double("") was 0).
// - <, <=, >, >= on strings compared UTF-16 units; CEL orders strings by code point.
// - matches() compiled its pattern on every call (30 µs); compiled patterns are kept here. The
//   engine is RE2 (linear time), as CEL specifies, so no pattern can make a match run away.
import { headOf } from "../../../lib/text.ts";
import { fail } from "../errors.ts";
import { RE2JS } from "@bufbuild/re2";
import { type CelFunc, CelScalar, celFunc, celMethod, celUint } from "@bufbuild/cel";
import { charge } from "../meter.ts";
import { compareCodePoints } from "./code-points.ts";
import { MAX_INT, MAX_UINT, MIN_INT } from "./numbers.ts";

const { BOOL, DOUBLE, INT, STRING, UINT } = CelScalar;

/** strconv.ParseInt(s, 10, 64) and ParseUint: digits with an optional sign, nothing around them. */
function parseInteger(s: string, unsigned: boolean): bigint {
  if (!(unsigned ? /^\+?[0-9]+$/ : /^[+-]?[0-9]+$/).test(s))
    fail(`cannot convert ${quote(s)} to ${unsigned ? "uint" : "int"}`);
  const v = BigInt(s);
  if (unsigned ? v > MAX_UINT : v > MAX_INT || v < MIN_INT)
    fail(`${quote(s)} is out of the ${unsigned ? "uint" : "int"} range`);
  return v;
}

/** strconv.ParseFloat(s, 64): decimal or exponent notation, or inf/infinity/nan in any case. */
function parseDouble(s: string): number {
  if (/^[+-]?(?:inf|infinity)$/i.test(s)) return s.startsWith("-") ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(s)) return Number.NaN;
  if (!/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(s))
    fail(`cannot convert ${quote(s)} to double`);
  return Number(s);
}

/** A value inside an error message: quoted, and cut short (it comes from the data). */
export function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${headOf(s, 40)}…` : s);
}

const PATTERN_CACHE_SIZE = 256;
const patterns = new Map<string, RE2JS>();

function compiled(pattern: string): RE2JS {
  let re = patterns.get(pattern);
  if (re === undefined) {
    re = RE2JS.compile(pattern);
    if (patterns.size >= PATTERN_CACHE_SIZE) patterns.delete(patterns.keys().next().value as string);
    patterns.set(pattern, re);
  }
  return re;
}

/** Throws the RE2 parser's complaint for a bad pattern (save time checks literal patterns). */
export function compilePattern(pattern: string): void {
  compiled(pattern);
}

export const stdFixes: CelFunc[] = [
  celFunc("int", [STRING], INT, (s: string) => parseInteger(s, false)),
  celFunc("uint", [STRING], UINT, (s: string) => celUint(parseInteger(s, true))),
  celFunc("double", [STRING], DOUBLE, parseDouble),
  // Strings order by code point (code-points.ts), not by JavaScript's UTF-16 units.
  celFunc("_<_", [STRING, STRING], BOOL, (a: string, b: string) => compareCodePoints(a, b) < 0),
  celFunc("_<=_", [STRING, STRING], BOOL, (a: string, b: string) => compareCodePoints(a, b) <= 0),
  celFunc("_>_", [STRING, STRING], BOOL, (a: string, b: string) => compareCodePoints(a, b) > 0),
  celFunc("_>=_", [STRING, STRING], BOOL, (a: string, b: string) => compareCodePoints(a, b) >= 0),
  celMethod("matches", STRING, [STRING], BOOL, function (this: string, pattern: string) {
    charge(Math.ceil(pattern.length / 16));
    return compiled(pattern).test(this);
  }),
];
