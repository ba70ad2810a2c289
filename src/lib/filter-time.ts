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
const ISO_8601 = /^[+-]?\d{4,6}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

/** A filter's value as an instant in ms, or null when it is not an ISO 8601 date or date-time. */
export function filterTime(v: string): number | null {
  const m = ISO_8601.exec(v);
  if (!m) return null;
  // A date-time without an offset is UTC, as a date alone is: Date.parse reads it in the server's
  // time zone, so one query answered 3 runs on a UTC host and none under TZ=America/New_York.
  const ms = Date.parse(m[1] && !m[4] ? `${v}Z` : v);
  return Number.isNaN(ms) ? null : ms;
}
