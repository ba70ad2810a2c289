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
  if (!ISO_8601.test(v)) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : ms;
}
