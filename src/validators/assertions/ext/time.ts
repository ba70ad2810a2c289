// Corrections to @bufbuild/cel's timestamp and duration conversions, registered after them (same
// overload id, so they replace them). Each is a case where the engine's answer differs from
// cel-go's:
// - timestamp('2026-02-31T00:00:00Z') was 2026-03-03 (the engine reads the string with the
//   platform's Date.parse, which rolls a day the month lacks, and hour 24, into the next); cel-go
//   reads it with Go's time.Parse(time.RFC3339), which refuses them.
// - timestamp(1700000000) was 1970-01-20 (read as milliseconds); CEL reads seconds since the epoch.
// - string(duration('1.5s')) was "1.500s" (protobuf's JSON form); cel-go writes the seconds in the
//   shortest decimal that reads back the same, "1.5s". Likewise string() of a timestamp with a
//   fraction: cel-go's time.RFC3339Nano drops its trailing zeros ("…:00.5Z", not "…:00.500Z").
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { type Duration, DurationSchema, type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { CelScalar, celFunc, objectType } from "@bufbuild/cel";
import { fail } from "../errors.ts";
import { quote } from "./std.ts";

const { INT, STRING } = CelScalar;
const TIMESTAMP = objectType(TimestampSchema);
const DURATION = objectType(DurationSchema);

/** CEL's timestamp range, 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z, in Unix seconds. */
const MIN_SECONDS = -62135596800n;
const MAX_SECONDS = 253402300799n;

const NOT_RFC3339 = "not a timestamp in RFC 3339 format (2024-01-31T12:00:00Z)";
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/;

const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const daysIn = (y: number, m: number) =>
  m === 2 ? (isLeap(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;

/** time.Parse(time.RFC3339, s): each field within its range, the day within its month. */
function parseTimestamp(s: string) {
  const m = RFC3339.exec(s);
  if (!m) fail(NOT_RFC3339);
  const [year, month, day, hour, minute, second, offHour = 0, offMinute = 0] = m
    .slice(1)
    .map((f) => (f === undefined ? undefined : Number(f))) as number[];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) fail(NOT_RFC3339);
  if (offHour > 23 || offMinute > 59) fail(NOT_RFC3339);
  if (day > daysIn(year, month))
    fail(`not a timestamp: ${quote(s)} (${m[1]}-${m[2]} has ${daysIn(year, month)} days)`);
  try {
    // The engine's own reading (protobuf's JSON form of a Timestamp): the range, the fraction.
    return fromJson(TimestampSchema, s);
  } catch (e) {
    fail(/must be from/.test((e as Error).message) ? "timestamp out of range" : NOT_RFC3339);
  }
}

function timestampOfSeconds(seconds: bigint) {
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) fail("timestamp out of range");
  return create(TimestampSchema, { seconds, nanos: 0 });
}

/** A timestamp as cel-go writes it: RFC 3339 in UTC, the fraction without trailing zeros. */
export function timestampText(t: Timestamp): string {
  return String(toJson(TimestampSchema, t)).replace(/\.(\d*?)0+Z$/, (_, kept: string) =>
    kept === "" ? "Z" : `.${kept}Z`,
  );
}

/**
 * A duration as cel-go writes it: strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s", the
 * shortest decimal that reads back as the same double, never in exponent notation.
 */
export function durationText(d: Duration): string {
  const seconds = Number(d.seconds) + d.nanos / 1e9;
  return `${plainDecimal(seconds)}s`;
}

/** JavaScript's shortest round-trip digits, with the exponent written out (1e-7 → 0.0000001). */
function plainDecimal(x: number): string {
  const s = String(x);
  const e = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!e) return s;
  const [, sign, lead, rest = "", exp] = e;
  const digits = lead + rest;
  const point = 1 + Number(exp); // where the decimal point falls in `digits`
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

export const timeFixes = [
  celFunc("timestamp", [STRING], TIMESTAMP, parseTimestamp),
  celFunc("timestamp", [INT], TIMESTAMP, timestampOfSeconds),
  celFunc("string", [TIMESTAMP], STRING, (t: { message: Timestamp }) => timestampText(t.message)),
  celFunc("string", [DURATION], STRING, (d: { message: Duration }) => durationText(d.message)),
];
