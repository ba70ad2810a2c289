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
