// Time filters (`created_after`, `created_before`) compared with stored timestamps, which are
// ISO 8601 text with four-digit years and compared as text.
/** The bounds of the four-digit years stored timestamps have. */
const FIRST_MS = Date.parse("0000-01-01T00:00:00.000Z");
const LAST_MS = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * A filter's instant as stored timestamps are written. A year past 9999 (or before 0) is written
 * `+010000-…` (`-000001-…`) by toISOString and would compare as text before every stored time;
 * clamped, it compares as the instant it names.
 */
export function storedTime(ms: number): string {
  return new Date(Math.min(Math.max(ms, FIRST_MS), LAST_MS)).toISOString();
}

// ISO 8601 as RFC 3339 profiles it (a date, or a date and time with an optional offset; the
// expanded years toISOString writes past 9999), not whatever Date.parse reads: "1" was the year
// 2001 and "March 7" a date in the server's zone.
const ISO_8601 =
  /^(?<y>[+-]?\d{4,6})-(?<mo>\d{2})-(?<d>\d{2})(?<time>[Tt ](?<h>\d{2}):(?<mi>\d{2})(?::(?<s>\d{2})(?:\.\d{1,9})?)?(?<z>[Zz]|[+-](?<zh>\d{2}):?(?<zm>\d{2}))?)?$/;

/**
 * What the OpenAPI document says a time filter takes: ISO_8601 above without its named groups
 * (not `format: date-time`, which is RFC 3339's date-time alone and would tell a client that a
 * date, or a time without an offset, is refused). The ranges (month, day, hour…) are checked too.
 */
export const TIME_FILTER_PATTERN =
  "^[+-]?[0-9]{4,6}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?([Zz]|[+-][0-9]{2}:?[0-9]{2})?)?$";
/** The documented schema of a time filter; `what` ends the description ("entries at or after"). */
export const timeFilterDoc = (what: string) => ({
  type: "string",
  pattern: TIME_FILTER_PATTERN,
  description: `ISO 8601: a date (2026-03-07, midnight UTC) or a date and time, the seconds and the offset optional (2026-03-07T10:00, UTC; 2026-03-07T10:00:00.5+02:00); ${what}`,
});
/** The errors[] message for a time filter that is none of those. */
export const timeFilterMessage = (field: string) => `${field} must be an ISO 8601 date or date-time.`;

/** The days of a month of the proleptic Gregorian calendar. */
const lastDay = (year: number, month: number) =>
  month === 2
    ? (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;

/** A filter's value as an instant in ms, or null when it is not an ISO 8601 date or date-time. */
export function filterTime(v: string): number | null {
  const g = ISO_8601.exec(v)?.groups;
  if (!g) return null;
  // Every field in its range, as RFC 3339 §5.7 has them: Date.parse rolled 2026-02-30 over to
  // March 2 and 2026-11-31 to December 1.
  const month = Number(g.mo);
  if (month < 1 || month > 12 || Number(g.d) < 1 || Number(g.d) > lastDay(Number(g.y), month)) return null;
  if (g.time && (Number(g.h) > 23 || Number(g.mi) > 59 || Number(g.s ?? 0) > 59)) return null;
  if (g.zh !== undefined && (Number(g.zh) > 23 || Number(g.zm) > 59)) return null;
  // A date-time without an offset is UTC, as a date alone is: Date.parse reads it in the server's
  // time zone, so one query answered 3 runs on a UTC host and none under TZ=America/New_York.
  const ms = Date.parse(g.time && !g.z ? `${v}Z` : v);
  return Number.isNaN(ms) ? null : ms;
}
