// Time filters read an instant the same way whatever the server's time zone.
import { describe, expect, test } from "bun:test";
import { filterTime } from "../../../src/lib/filter-time.ts";

describe("filterTime", () => {
  test("a date-time without an offset is UTC, like a date alone", () => {
    expect(filterTime("2026-11-28T08:00:00")).toBe(Date.UTC(2026, 10, 28, 8));
    expect(filterTime("2026-11-28 08:00")).toBe(Date.UTC(2026, 10, 28, 8));
    expect(filterTime("2026-11-28T08:00:00.5")).toBe(Date.UTC(2026, 10, 28, 8, 0, 0, 500));
    expect(filterTime("2026-11-28")).toBe(Date.UTC(2026, 10, 28));
  });
  test("an offset is kept", () => {
    expect(filterTime("2026-11-28T08:00:00Z")).toBe(Date.UTC(2026, 10, 28, 8));
    expect(filterTime("2026-11-28T08:00:00+02:00")).toBe(Date.UTC(2026, 10, 28, 6));
    expect(filterTime("2026-11-28T08:00:00-0500")).toBe(Date.UTC(2026, 10, 28, 13));
  });
  test("not ISO 8601: null", () => {
    for (const v of ["1", "March 7", "2026-13-01T00:00", "2026-11-28T25:00"])
      expect(filterTime(v)).toBeNull();
  });
  test("a day the month lacks, or a field past its range, is no instant", () => {
    for (const v of [
      "2026-11-31",
      "2026-02-29",
      "1900-02-29",
      "2026-00-10",
      "2026-01-00",
      "2026-01-01T23:60",
      "2026-01-01T00:00:60Z",
      "2026-01-01T00:00+24:00",
      "2026-01-01T00:00-05:60",
    ])
      expect({ v, ms: filterTime(v) }).toEqual({ v, ms: null });
    expect(filterTime("2024-02-29")).toBe(Date.UTC(2024, 1, 29));
    expect(filterTime("2000-02-29")).toBe(Date.UTC(2000, 1, 29));
    expect(filterTime("2026-12-31T23:59:59.999Z")).toBe(Date.UTC(2026, 11, 31, 23, 59, 59, 999));
  });
});
