// Corrections to @bufbuild/cel's standard functions, registered after them (same overload id,
// so they replace them). Each fixes a case where the engine's answer differs from cel-go's:
// - int("")/int(" 7")/int("0x1f") gave 0/7/31 (JavaScript's BigInt() rules); cel-go parses decimal
//   digits only. Submitted CSV and XML values are strings, so this decides what `int(row.qty)`
//   accepts. uint() and double() likewise (double("") was 0).
// - <, <=, >, >= on strings compared UTF-16 units; CEL orders strings by code point.
// - matches() compiled its pattern on every call (30 µs); compiled patterns are kept here. The
//   engine is RE2 (linear time), as CEL specifies, so no pattern can make a match run away; but
//   compiling expands counted repetitions, and a pattern the data supplies (`s.matches(p)`) was
//   compiled whatever it cost: `a{1000}` a thousand times over took 0.9 s and ~500 MB, ten
//   thousand times over (70 KB) ~5 GB. Every pattern's cost is checked first (regex-cost.ts).
import { headOf } from "../../../lib/text.ts";
import { fail } from "../errors.ts";
import { RE2JS } from "@bufbuild/re2";
import { type CelFunc, CelScalar, celFunc, celMethod, celUint } from "@bufbuild/cel";
import { charge } from "../meter.ts";
import { MAX_REGEX_COST } from "../../limits.ts";
import { regexCost, regexCostProblem } from "../../shared/regex-cost.ts";
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
/** Positions (regexCost) the kept patterns may hold in all: one may weigh ~10 MB. */
const PATTERN_CACHE_COST = 10 * MAX_REGEX_COST;
const patterns = new Map<string, { re: RE2JS; cost: number }>();
let cachedCost = 0;

function compiled(pattern: string): RE2JS {
  const hit = patterns.get(pattern);
  if (hit) return hit.re;
  const costly = regexCostProblem(pattern, "re2");
  if (costly) fail(costly);
  const re = RE2JS.compile(pattern);
  const cost = regexCost(pattern, "re2");
  while (
    patterns.size > 0 &&
    (patterns.size >= PATTERN_CACHE_SIZE || cachedCost + cost > PATTERN_CACHE_COST)
  ) {
    const oldest = patterns.keys().next().value as string;
    cachedCost -= patterns.get(oldest)!.cost;
    patterns.delete(oldest);
  }
  patterns.set(pattern, { re, cost });
  cachedCost += cost;
  return re;
}

/** Throws the RE2 parser's complaint, or the cost's, for a bad pattern (save time checks literal patterns). */
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
