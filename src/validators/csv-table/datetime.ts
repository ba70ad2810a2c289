// Dates and times for Table Schema: ISO 8601 by default, "any", or a strptime pattern
// (%Y %y %m %d %j %H %I %M %S %f %p %z %b %B %a %A %%, read as Python's strptime reads them:
// Frictionless's own reader). Parsed values become numbers so that minimum, maximum, enum and
// unique compare them: days (date), milliseconds (datetime), seconds (time).
// Every fractional digit written counts: a datetime or time finer than the millisecond is an
// ExactNumber (its exact decimal), so that values a microsecond or a nanosecond apart differ.
import { ExactNumber } from "./exact.ts";

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const FULL_MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];

const WEEKDAYS_SHORT = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const WEEKDAYS_FULL = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/** Letters matched in either case, as Python's strptime matches (re.IGNORECASE). */
const anyCase = (text: string) => text.replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);
/** Names as one alternation, longest first (Python's `__seqToRE`: "june" before "jun"). */
const names = (list: string[]) =>
  [...list]
    .sort((a, b) => b.length - a.length)
    .map(anyCase)
    .join("|");

// Python's own regexes for each directive (`_strptime.TimeRE`): a field takes two digits, or
// one, only as far as its range allows, so "930" with %H%M is 09:30 and "131" with %m%d is
// January 31. %S reaches 61 there; Python's datetime then refuses 60 and 61, and so does toParts.
const DIRECTIVES: Record<string, string> = {
  Y: "(?<Y>\\d\\d\\d\\d)",
  y: "(?<y>\\d\\d)",
  m: "(?<m>1[0-2]|0[1-9]|[1-9])",
  d: "(?<d>3[01]|[12]\\d|0[1-9]|[1-9]| [1-9])",
  j: "(?<j>36[0-6]|3[0-5]\\d|[12]\\d\\d|0[1-9]\\d|00[1-9]|[1-9]\\d|0[1-9]|[1-9])",
  H: "(?<H>2[0-3]|[0-1]\\d|\\d)",
  I: "(?<I>1[0-2]|0[1-9]|[1-9])",
  M: "(?<M>[0-5]\\d|\\d)",
  S: "(?<S>6[0-1]|[0-5]\\d|\\d)",
  f: "(?<f>[0-9]{1,6})",
  p: `(?<p>${names(["am", "pm"])})`,
  // An upper-case Z only, as Python's `(?-i:Z)`.
  z: "(?<z>[+-]\\d\\d:?[0-5]\\d|Z)",
  b: `(?<b>${names(MONTHS)})`,
  B: `(?<B>${names(FULL_MONTHS)})`,
  // Weekday names are read and not checked against the date, as Python does without %U or %W.
  a: `(?<a>${names(WEEKDAYS_SHORT)})`,
  A: `(?<A>${names(WEEKDAYS_FULL)})`,
};

export type Kind = "date" | "datetime" | "time";

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** The fraction of a second as written: its digits ("" for none). */
  fraction: string;
  offsetMin: number;
}

/**
 * Compiles a strptime pattern to a regex; null if it uses an unsupported directive. As Python's
 * strptime: a run of whitespace in the pattern matches any run of whitespace, letters match in
 * either case, and the regex is anchored at the start only — the first match must then cover the
 * whole value (parseTemporal), without backtracking into a longer one ("12:60" with %H:%M is no
 * time, though 12:6 followed by "0" was a match).
 */
export function compilePattern(pattern: string): RegExp | null {
  let src = "";
  const seen = new Set<string>();
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c !== "%") {
      if (/\s/.test(c)) {
        if (!src.endsWith("\\s+")) src += "\\s+";
      } else src += anyCase(c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"));
      continue;
    }
    const d = pattern[++i];
    if (d === "%") src += "%";
    else if (DIRECTIVES[d] && !seen.has(d)) {
      src += DIRECTIVES[d];
      seen.add(d);
    } else return null;
  }
  return new RegExp(`^${src}`);
}

// The defaults as Frictionless reads them: a date as strptime("%Y-%m-%d") does (one-digit month
// and day too), a datetime and a time as dateutil's isoparse does (any one character between date
// and time, T or a space as a rule; offsets Z or z, ±HH:MM, ±HHMM, ±HH). Until 2026-11-29 only T or
// a space and an upper-case Z were read: "2020-01-01t10:00:00z", which RFC 3339 §5.6 allows and
// Frictionless reads, was a type error.
const ISO: Record<Kind, RegExp> = {
  date: /^(?<Y>\d{4})-(?<m>\d{1,2})-(?<d>\d{1,2})$/,
  datetime:
    /^(?:(?<Y>\d{4})-(?<m>\d{2})-(?<d>\d{2})|(?<wY>\d{4})-W(?<W>\d{2})-(?<wd>\d))[\s\S](?<H>\d{2}):(?<M>\d{2}):(?<S>\d{2})(?:[.,](?<f>\d{1,9}))?(?<z>[Zz]|[+-]\d{2}(?::?\d{2})?)?$/,
  time: /^(?<H>\d{2}):(?<M>\d{2}):(?<S>\d{2})(?:[.,](?<f>\d{1,9}))?(?<z>[Zz]|[+-]\d{2}(?::?\d{2})?)?$/,
};

/**
 * The fields of a match. `endOfDay`: 24:00:00 is midnight at the end of the day (the next day's
 * 00:00), as ISO 8601 and XML Schema 1.0 write it and dateutil's isoparse reads it — for the ISO
 * defaults only; Python's %H stops at 23.
 */
function toParts(g: Record<string, string | undefined>, endOfDay = false): Parts | null {
  let month = g.m ? Number(g.m) : 1;
  if (g.b || g.B) {
    const name = (g.b ?? g.B ?? "").toLowerCase();
    const idx = g.b ? MONTHS.indexOf(name) : FULL_MONTHS.indexOf(name);
    if (idx < 0) return null;
    month = idx + 1;
  }
  let hour = g.H !== undefined ? Number(g.H) : 0;
  if (g.I !== undefined) {
    // Without %p the hour is a morning one, 12 being midnight, as Python reads it.
    const h12 = Number(g.I);
    if (h12 < 1 || h12 > 12) return null;
    hour = (h12 % 12) + (g.p?.toLowerCase() === "pm" ? 12 : 0);
  }
  let offsetMin = 0;
  if (g.z && g.z !== "Z" && g.z !== "z") {
    const z = g.z.replace(":", "");
    const [zh, zm] = [Number(z.slice(1, 3)), Number(z.slice(3, 5) || "0")];
    // An offset is less than a day, its minutes below 60: dateutil's isoparse refuses +24:00 and
    // +05:60, Python's %z (a timezone of 24 hours or more) too; both were read as offsets.
    if (zh > 23 || zm > 59) return null;
    offsetMin = (z[0] === "-" ? -1 : 1) * (zh * 60 + zm);
  }
  const year =
    g.Y !== undefined
      ? Number(g.Y)
      : g.y !== undefined
        ? 2000 + Number(g.y) - (Number(g.y) >= 69 ? 100 : 0)
        : 1900;
  const p: Parts = {
    year,
    month,
    day: g.d !== undefined ? Number(g.d) : 1,
    hour,
    minute: g.M !== undefined ? Number(g.M) : 0,
    second: g.S !== undefined ? Number(g.S) : 0,
    fraction: g.f ?? "",
    offsetMin,
  };
  if (g.wY !== undefined) {
    // An ISO week date (2020-W01-3), which dateutil's isoparse reads: week 1 holds January 4th,
    // days run Monday (1) to Sunday (7); weeks 1 to 53, past a year's last week into the next.
    const [week, weekday] = [Number(g.W), Number(g.wd)];
    if (week < 1 || week > 53 || weekday < 1 || weekday > 7) return null;
    const year = Number(g.wY);
    if (!inYearRange(year)) return null;
    const jan4 = utcMs(year, 1, 4);
    const monday = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * 86_400_000;
    const d = new Date(monday + ((week - 1) * 7 + weekday - 1) * 86_400_000);
    p.year = d.getUTCFullYear();
    p.month = d.getUTCMonth() + 1;
    p.day = d.getUTCDate();
  }
  if (!inYearRange(p.year) || p.month < 1 || p.month > 12) return null;
  if (g.j !== undefined) {
    // The day of the year decides the date (Python: month and day written beside it are
    // ignored; past the year's last day it runs into the next year, as date.fromordinal does).
    const d = new Date(utcMs(p.year, 1, 1) + (Number(g.j) - 1) * 86_400_000);
    p.year = d.getUTCFullYear();
    p.month = d.getUTCMonth() + 1;
    p.day = d.getUTCDate();
    if (!inYearRange(p.year)) return null;
  }
  if (p.day < 1 || p.day > daysInMonth(p.year, p.month)) return null;
  if (p.minute > 59 || p.second > 59) return null;
  // The next day's first instant; after 9999-12-31 there is none (Python's datetime ends there).
  if (p.hour === 24 && endOfDay && p.minute === 0 && p.second === 0 && !/[1-9]/.test(p.fraction))
    return p.year === 9999 && p.month === 12 && p.day === 31 ? null : p;
  if (p.hour > 23) return null;
  return p;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Python's datetime (what Frictionless builds) has years 1 to 9999: "0000-01-01" is no date. */
const inYearRange = (year: number) => year >= 1 && year <= 9999;

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/**
 * Milliseconds since 1970 of a UTC date and time (proleptic Gregorian). Date.UTC alone reads years
 * 0 to 99 as 1900 to 1999, so 0050-06-01 would sort after 1900-01-01 and be 1950-06-01 to
 * `unique`; setUTCFullYear takes the year as it is. Date.UTC stays for the other years: it
 * allocates nothing, and dates are read once per cell.
 */
function utcMs(year: number, month: number, day: number, h = 0, mi = 0, s = 0, ms = 0): number {
  if (year >= 100) return Date.UTC(year, month - 1, day, h, mi, s, ms);
  return new Date(Date.UTC(2000, 0, 1, h, mi, s, ms)).setUTCFullYear(year, month - 1, day);
}

/**
 * An ISO date (YYYY-MM-DD) without a regex match and its groups object: what parseTemporal
 * returns for it, or undefined to let parseTemporal decide.
 */
function isoDate(raw: string): number | null | undefined {
  if (raw.length !== 10 || raw.charCodeAt(4) !== 45 || raw.charCodeAt(7) !== 45) return undefined;
  let year = 0;
  let month = 0;
  let day = 0;
  for (let i = 0; i < 10; i++) {
    if (i === 4 || i === 7) continue;
    const digit = raw.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    if (i < 4) year = year * 10 + digit;
    else if (i < 7) month = month * 10 + digit;
    else day = day * 10 + digit;
  }
  if (!inYearRange(year) || month < 1 || month > 12 || day < 1) return null;
  if (day > daysInMonth(year, month)) return null;
  return utcMs(year, month, day) / 86_400_000;
}

/**
 * `any`: the ISO forms, else day, month name or number, year, time and am/pm in free order
 * ("10th Jan 1969 9 am", "Jan 10, 1969", "3:00 pm"), else what Date.parse reads (RFC 2822).
 * A date and a datetime need a date; a time needs a time and may carry a date.
 */
function anyParts(kind: Kind, raw: string): Parts | null {
  const words = freeParts(raw);
  if (words && (kind === "time" ? words.hasTime : words.hasDate)) return toParts(words.groups);
  if (kind === "time") return null;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) return null;
  // The fields as written, and the offset written with them: a date is the day written
  // ("1969-01-10T23:00:00-05:00" is the 10th, not the UTC day, the 11th). Without an offset
  // Date.parse read the server's local time: its local fields are the ones written.
  const offsetMin = writtenOffset(raw);
  const d = new Date(offsetMin === null ? t : t + offsetMin * 60_000);
  const local = offsetMin === null;
  const year = local ? d.getFullYear() : d.getUTCFullYear();
  if (!inYearRange(year)) return null;
  return {
    year,
    month: (local ? d.getMonth() : d.getUTCMonth()) + 1,
    day: local ? d.getDate() : d.getUTCDate(),
    hour: local ? d.getHours() : d.getUTCHours(),
    minute: local ? d.getMinutes() : d.getUTCMinutes(),
    second: local ? d.getSeconds() : d.getUTCSeconds(),
    fraction: String(local ? d.getMilliseconds() : d.getUTCMilliseconds()).padStart(3, "0"),
    offsetMin: offsetMin ?? 0,
  };
}

/** RFC 2822's zone names (§4.3) and UTC's, in minutes east. */
const ZONES: Record<string, number> = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420,
};
/** A zone at the end of a date string: `-05:00`, `+0500`, `GMT+0100`, `EST`, `Z`, a `(comment)` after. */
const ZONE_AT_END = /(?:([+-])(\d{2}):?(\d{2})|\b([a-z]{1,3}))\s*(?:\([^)]*\))?\s*$/i;

/** The offset a string Date.parse read was written with, in minutes east; null when none. */
function writtenOffset(raw: string): number | null {
  const m = ZONE_AT_END.exec(raw);
  if (!m) return null;
  if (m[1]) return (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  return ZONES[m[4]!.toLowerCase()] ?? null;
}

const FILLERS = new Set(["st", "nd", "rd", "th", "of", "at", "on", "the", "t"]);
const WEEKDAYS = /^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*$/;

/** Reads free text into strptime-like groups; null when a word is not a date or time word. */
function freeParts(raw: string) {
  const tokens = raw.toLowerCase().match(/[a-z]+|\d+(?::\d+){1,2}(?:\.\d+)?|\d+|\S/g) ?? [];
  const groups: Record<string, string | undefined> = {};
  const numbers: string[] = [];
  let hasTime = false;
  for (const tok of tokens) {
    if (/^\d+:/.test(tok)) {
      if (hasTime) return null;
      const [h, mi, sec] = tok.split(":");
      Object.assign(groups, { H: h, M: mi, S: sec?.split(".")[0], f: sec?.split(".")[1] });
      hasTime = true;
    } else if (/^\d+$/.test(tok)) numbers.push(tok);
    else if (tok === "am" || tok === "pm") {
      // "9 am": the number just before is the hour.
      if (!hasTime) {
        const h = numbers.pop();
        if (h === undefined) return null;
        groups.H = h;
        hasTime = true;
      }
      const h = Number(groups.H);
      if (h < 1 || h > 12) return null;
      groups.H = String((h % 12) + (tok === "pm" ? 12 : 0));
    } else if (/^[a-z]+$/.test(tok)) {
      const month = MONTHS.findIndex(
        (m) => tok.startsWith(m) && FULL_MONTHS[MONTHS.indexOf(m)]!.startsWith(tok),
      );
      if (month >= 0 && groups.m === undefined) groups.m = String(month + 1);
      else if (!FILLERS.has(tok) && !WEEKDAYS.test(tok)) return null;
    } else if (!/^[,./-]$/.test(tok)) return null;
  }
  // Numbers left: a four-digit year; then day (after a month name) or month and day, in that order.
  const year = numbers.findIndex((n) => n.length === 4);
  if (year >= 0) groups.Y = numbers.splice(year, 1)[0];
  if (groups.m !== undefined && numbers.length === 1) groups.d = numbers.pop();
  else if (groups.m === undefined && numbers.length === 2) [groups.m, groups.d] = numbers.splice(0, 2);
  if (numbers.length > 0) return null;
  const hasDate = groups.Y !== undefined && groups.m !== undefined && groups.d !== undefined;
  if (!hasDate && (groups.Y !== undefined || groups.m !== undefined || groups.d !== undefined)) return null;
  return { groups, hasDate, hasTime };
}

/**
 * Parses a cell as a date, datetime or time; returns a comparable number (an ExactNumber for a
 * datetime or time written past the millisecond) or null.
 */
export function parseTemporal(
  kind: Kind,
  format: string | undefined,
  raw: string,
  compiled?: RegExp | null,
): number | ExactNumber | null {
  const iso = !format || format === "default" || format === "any";
  if (iso && kind === "date") {
    const quick = isoDate(raw);
    if (quick !== undefined) return quick;
  }
  const re = iso ? ISO[kind] : compiled;
  let m = re?.exec(raw);
  if (m && m[0].length !== raw.length) m = null;
  const p = m?.groups ? toParts(m.groups, iso) : format === "any" ? anyParts(kind, raw) : null;
  if (!p) return null;
  if (kind === "date") return utcMs(p.year, p.month, p.day) / 86_400_000;
  const fraction = p.fraction.replace(/0+$/, "");
  const ms = fraction === "" ? 0 : Number(fraction.slice(0, 3).padEnd(3, "0"));
  // 24:00:00 (endOfDay): the time 00:00:00, the datetime the next day's first instant.
  const nextDay = p.hour === 24;
  if (nextDay) p.hour = 0;
  if (kind === "time") {
    const seconds = p.hour * 3600 + p.minute * 60 + p.second - p.offsetMin * 60;
    // Whole milliseconds: one division of an exact integer, the double nearest the decimal.
    return fraction.length <= 3 ? (seconds * 1000 + ms) / 1000 : finer(seconds, fraction);
  }
  const total =
    utcMs(p.year, p.month, p.day, p.hour, p.minute, p.second, ms) -
    p.offsetMin * 60_000 +
    (nextDay ? 86_400_000 : 0);
  return fraction.length <= 3 ? total : finer(total, fraction.slice(3));
}

/** `whole` (an integer) plus 0.`digits`, exactly: "1.000001" as the decimal 1000001e-6. */
function finer(whole: number, digits: string): ExactNumber {
  const text = `${BigInt(whole) * 10n ** BigInt(digits.length) + BigInt(digits)}e-${digits.length}`;
  return new ExactNumber(text, Number(text));
}
