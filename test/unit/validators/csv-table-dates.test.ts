// Date and time patterns read as Frictionless reads them: with Python's datetime.strptime, and
// the ISO defaults with dateutil's isoparse. Every expectation below is what Python 3.11 printed
// for the same value and pattern (datetime.strptime(value, pattern)).
import { describe, expect, test } from "bun:test";
import { compilePattern, type Kind, parseTemporal } from "../../../src/validators/csv-table/datetime.ts";

/** The value read with a pattern, as ISO text (date: the day; time: seconds; datetime: the instant); null when refused. */
function read(kind: Kind, value: string, pattern?: string): string | null {
  const compiled = pattern ? compilePattern(pattern) : undefined;
  if (compiled === null) throw new Error(`pattern ${pattern} did not compile`);
  const r = parseTemporal(kind, pattern, value, compiled);
  if (r === null) return null;
  const n = Number(r);
  if (kind === "date") return new Date(n * 86_400_000).toISOString().slice(0, 10);
  if (kind === "time") return `${n}s`;
  return new Date(n).toISOString();
}

describe("strptime patterns, as Python reads them", () => {
  test("a field takes one digit where its range allows no second one", () => {
    expect(read("time", "930", "%H%M")).toBe(`${9 * 3600 + 30 * 60}s`);
    expect(read("time", "123", "%H%M")).toBe(`${12 * 3600 + 3 * 60}s`);
    expect(read("date", "131", "%m%d")).toBe("1900-01-31");
    expect(read("date", " 5/1/2024", "%d/%m/%Y")).toBe("2024-01-05");
  });

  test("%I without %p is a morning hour, 12 being midnight", () => {
    expect(read("time", "09:30", "%I:%M")).toBe(`${9 * 3600 + 30 * 60}s`);
    expect(read("time", "12:30", "%I:%M")).toBe(`${30 * 60}s`);
    expect(read("time", "12 AM", "%I %p")).toBe("0s");
    expect(read("time", "12 pm", "%I %p")).toBe(`${12 * 3600}s`);
    expect(read("time", "13:00", "%I:%M")).toBeNull();
  });

  test("whitespace matches any run of whitespace; letters match in either case", () => {
    expect(read("datetime", "2024-01-05  10:00", "%Y-%m-%d %H:%M")).toBe("2024-01-05T10:00:00.000Z");
    expect(read("datetime", "2024-01-05\t10:00", "%Y-%m-%d %H:%M")).toBe("2024-01-05T10:00:00.000Z");
    expect(read("datetime", "2024-01-0510:00", "%Y-%m-%d %H:%M")).toBeNull();
    expect(read("datetime", "2024-01-05t10:00", "%Y-%m-%dT%H:%M")).toBe("2024-01-05T10:00:00.000Z");
    expect(read("date", "X5", "x%d")).toBe("1900-01-05");
    expect(read("date", "5 JANUARY 2024", "%d %B %Y")).toBe("2024-01-05");
    expect(read("date", "5 jun 2024", "%d %b %Y")).toBe("2024-06-05");
    expect(read("date", "5 jux 2024", "%d %b %Y")).toBeNull();
  });

  test("the first match must cover the whole value", () => {
    // Python: "unconverted data remains: 0" — %M took "6", and a longer minute is not tried.
    expect(read("time", "12:60", "%H:%M")).toBeNull();
    expect(read("time", "12:59", "%H:%M")).toBe(`${12 * 3600 + 59 * 60}s`);
  });

  test("%z is an upper-case Z or an offset", () => {
    expect(read("datetime", "2024-01-05 10:00 +0530", "%Y-%m-%d %H:%M %z")).toBe("2024-01-05T04:30:00.000Z");
    expect(read("datetime", "2024-01-05 10:00 Z", "%Y-%m-%d %H:%M %z")).toBe("2024-01-05T10:00:00.000Z");
    expect(read("datetime", "2024-01-05 10:00 z", "%Y-%m-%d %H:%M %z")).toBeNull();
  });

  test("%j decides the day; weekday names are read, not checked", () => {
    expect(read("date", "2024 060", "%Y %j")).toBe("2024-02-29");
    expect(read("date", "2023 366", "%Y %j")).toBe("2024-01-01");
    expect(read("date", "2024 05 03 001", "%Y %m %d %j")).toBe("2024-01-01");
    expect(read("date", "Mon 2024-01-05", "%a %Y-%m-%d")).toBe("2024-01-05");
    expect(read("date", "Friday 2024-01-05", "%A %Y-%m-%d")).toBe("2024-01-05");
    expect(read("date", "Fri 2024-01-05", "%A %Y-%m-%d")).toBeNull();
  });

  test("a directive Python lacks, or one used twice, compiles to nothing", () => {
    expect(compilePattern("%Q")).toBeNull();
    expect(compilePattern("%d %d")).toBeNull();
    expect(compilePattern("%Y-%")).toBeNull();
  });
});

describe("24:00:00 in the ISO defaults, as dateutil's isoparse reads it", () => {
  test("a time of 24:00:00 is midnight", () => {
    expect(read("time", "24:00:00")).toBe("0s");
    expect(read("time", "24:00:00.000")).toBe("0s");
    expect(read("time", "24:00:01")).toBeNull();
    expect(read("time", "24:00:00.1")).toBeNull();
    expect(read("time", "25:00:00")).toBeNull();
  });

  test("a datetime at 24:00:00 is the next day's first instant", () => {
    expect(read("datetime", "2024-01-01T24:00:00Z")).toBe("2024-01-02T00:00:00.000Z");
    expect(read("datetime", "2024-12-31T24:00:00")).toBe("2025-01-01T00:00:00.000Z");
    expect(read("datetime", "0050-01-01T24:00:00Z")).toBe("0050-01-02T00:00:00.000Z");
    expect(read("datetime", "2024-01-01T24:00:00.5Z")).toBeNull();
  });

  test("a pattern's %H stops at 23, as Python's does", () => {
    expect(read("time", "24:00", "%H:%M")).toBeNull();
  });
});

// Fuzzing the built server (2026-11-29): an offset of a day or more, or of 60 minutes or more, was
// read as one ("2020-01-01T00:00:00+99:99" passed a datetime field). dateutil 2.9 and Python 3.11
// printed the verdicts below.
describe("offsets are less than a day, their minutes below 60", () => {
  test("the ISO defaults, as dateutil's isoparse reads them", () => {
    expect(read("datetime", "2020-01-01T00:00:00+23:59")).toBe("2019-12-31T00:01:00.000Z");
    for (const z of ["+24:00", "-2400", "+25", "+99:99", "+05:60", "+0560"])
      expect(read("datetime", `2020-01-01T00:00:00${z}`)).toBeNull();
    expect(read("time", "10:00:00-23:59")).toBe(`${10 * 3600 + 23 * 3600 + 59 * 60}s`);
    expect(read("time", "10:00:00+24:00")).toBeNull();
  });

  test("%z, as Python's strptime reads it", () => {
    expect(read("datetime", "2020-01-01 00:00 +2359", "%Y-%m-%d %H:%M %z")).toBe("2019-12-31T00:01:00.000Z");
    expect(read("datetime", "2020-01-01 00:00 +2400", "%Y-%m-%d %H:%M %z")).toBeNull();
    expect(read("datetime", "2020-01-01 00:00 -9959", "%Y-%m-%d %H:%M %z")).toBeNull();
  });
});

// A differential run against dateutil 2.9's isoparse (2026-11-29), Frictionless's reader of the
// ISO defaults: it takes any one character between date and time, a lower-case z (RFC 3339 §5.6
// allows t and z) and an ISO week date, and has no day after 9999-12-31 for 24:00:00 to roll into.
describe("the ISO defaults read as dateutil's isoparse reads them", () => {
  test("a lower-case t or z, or another separator", () => {
    expect(read("datetime", "2020-01-01t10:00:00z")).toBe("2020-01-01T10:00:00.000Z");
    expect(read("datetime", "2020-01-01_10:00:00+01:00")).toBe("2020-01-01T09:00:00.000Z");
    expect(read("time", "10:00:00z")).toBe(`${10 * 3600}s`);
  });

  test("an ISO week date (week 1 holds January 4th; Monday is day 1)", () => {
    expect(read("datetime", "2020-W01-1T12:00:00Z")).toBe("2019-12-30T12:00:00.000Z");
    expect(read("datetime", "2020-W53-7T12:00:00Z")).toBe("2021-01-03T12:00:00.000Z");
    expect(read("datetime", "2021-W53-1T12:00:00Z")).toBe("2022-01-03T12:00:00.000Z");
    expect(read("datetime", "0001-W01-1T12:00:00Z")).toBe("0001-01-01T12:00:00.000Z");
    for (const v of ["2020-W00-1T12:00:00Z", "2020-W54-1T12:00:00Z", "2020-W01-8T12:00:00Z"])
      expect(read("datetime", v)).toBeNull();
  });

  test("24:00:00 on 9999-12-31 is no datetime; the day before it is", () => {
    expect(read("datetime", "9999-12-31T24:00:00Z")).toBeNull();
    expect(read("datetime", "9999-12-30T24:00:00Z")).toBe("9999-12-31T00:00:00.000Z");
  });
});
