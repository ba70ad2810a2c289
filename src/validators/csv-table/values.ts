// Reading a cell as a Table Schema v1 value, the way Frictionless reads it (frictionless-py's
// field readers are the reference; test/conformance/frictionless.test.ts measures the match).
// Values are numbers wherever the type is ordered (dates as days, datetimes as ms, times as
// seconds, year-months as months), so minimum, maximum, enum and keys compare them directly;
// integers past 2^53 are bigints and long or exponent numbers ExactNumbers, to stay exact.
import { compilePattern, type Kind, parseTemporal } from "./datetime.ts";
import { ExactNumber, exactDecimal } from "./exact.ts";
import { isGeojson, isTopojson } from "./geojson.ts";
import { isWkt } from "./wkt.ts";

export { ExactNumber, exactDecimal } from "./exact.ts";

export const FIELD_TYPES = [
  "string",
  "number",
  "integer",
  "boolean",
  "object",
  "array",
  "date",
  "time",
  "datetime",
  "year",
  "yearmonth",
  "duration",
  "geopoint",
  "geojson",
  "any",
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export type Value = string | number | bigint | boolean | object;
export type Parser = (raw: string) => Value | null;

/** The formats each type accepts besides "default" (a date, time or datetime also takes a pattern). */
export const FORMATS: Record<FieldType, readonly string[]> = {
  string: ["default", "email", "uri", "binary", "uuid", "wkt"],
  number: ["default"],
  integer: ["default"],
  boolean: ["default"],
  object: ["default"],
  array: ["default"],
  date: ["default", "any"],
  time: ["default", "any"],
  datetime: ["default", "any"],
  year: ["default"],
  yearmonth: ["default"],
  duration: ["default"],
  geopoint: ["default", "array", "object"],
  geojson: ["default", "topojson"],
  any: ["default"],
};
const TEMPORAL = new Set<FieldType>(["date", "time", "datetime"]);

export interface FieldOptions {
  type?: FieldType;
  format?: string;
  trueValues?: string[];
  falseValues?: string[];
  bareNumber?: boolean;
  groupChar?: string;
  decimalChar?: string;
}

const STRING_RE: Record<string, RegExp> = {
  email: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  binary: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
};
const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
// Python's Decimal, which Frictionless casts with, also reads these (any case).
const SPECIAL_NUMBERS: Record<string, number> = {
  nan: Number.NaN,
  inf: Infinity,
  infinity: Infinity,
  "+inf": Infinity,
  "+infinity": Infinity,
  "-inf": -Infinity,
  "-infinity": -Infinity,
};

/** A decimal number cell: a double, or an ExactNumber when a double may not hold it. */
function decimalValue(s: string): number | ExactNumber {
  const n = Number(s);
  return s.length <= 15 && !s.includes("e") && !s.includes("E") ? n : new ExactNumber(s, n);
}

/** The decimal of a finite number-like value, for comparing two of them exactly. */
const decimalOf = (v: number | bigint | ExactNumber) =>
  v instanceof ExactNumber ? v.decimal : exactDecimal(String(v));

function decimalParts(d: string) {
  const negative = d.startsWith("-");
  const body = negative ? d.slice(1) : d;
  const e = body.indexOf("e");
  const digits = e < 0 ? body : body.slice(0, e);
  const exp = e < 0 ? 0n : BigInt(body.slice(e + 1));
  return { sign: digits === "0" ? 0 : negative ? -1 : 1, digits, magnitude: BigInt(digits.length) + exp };
}

/** Orders two exactDecimal texts. */
function compareDecimals(p: string, q: string): number {
  if (p === q) return 0;
  const a = decimalParts(p);
  const b = decimalParts(q);
  if (a.sign !== b.sign) return a.sign < b.sign ? -1 : 1;
  if (a.sign === 0) return 0;
  let r: number;
  if (a.magnitude !== b.magnitude) r = a.magnitude < b.magnitude ? -1 : 1;
  else {
    const width = Math.max(a.digits.length, b.digits.length);
    const x = a.digits.padEnd(width, "0");
    const y = b.digits.padEnd(width, "0");
    r = x < y ? -1 : x > y ? 1 : 0;
  }
  return a.sign * r;
}

/**
 * Orders two values of an ordered type (minimum, maximum): negative, 0, positive, or NaN when
 * either is NaN (so that a bound test fails, as it did comparing doubles). Exact for integers
 * past 2^53 (bigint) and for ExactNumbers: their doubles decide when they differ (rounding keeps
 * order), their decimals when they are one double.
 */
export function compareValues(a: Value, b: Value): number {
  if (!(a instanceof ExactNumber) && !(b instanceof ExactNumber)) {
    // number and bigint compare exactly with each other.
    const x = a as number | bigint;
    const y = b as number | bigint;
    return x < y ? -1 : x > y ? 1 : Number.isNaN(Number(x)) || Number.isNaN(Number(y)) ? NaN : 0;
  }
  const x = Number(a);
  const y = Number(b);
  if (x !== y) return x < y ? -1 : x > y ? 1 : NaN;
  // One double: an ExactNumber is finite, so an infinite plain number is beyond it.
  if (typeof a === "number" && !Number.isFinite(a)) return a > 0 ? 1 : -1;
  if (typeof b === "number" && !Number.isFinite(b)) return b > 0 ? -1 : 1;
  return compareDecimals(
    decimalOf(a as number | bigint | ExactNumber),
    decimalOf(b as number | bigint | ExactNumber),
  );
}

/** bareNumber: false drops leading text other than "-" and digits, and trailing non-digits. */
const strip = (s: string) => s.replace(/^[^-\d]*/, "").replace(/\D*$/, "");

function integerParser(f: FieldOptions): Parser {
  const bare = f.bareNumber !== false;
  return (raw) => {
    const s = bare ? raw.trim() : strip(raw.trim());
    if (!INTEGER.test(s)) return null;
    const n = Number(s);
    // Beyond 2^53 a double would merge neighbours (unique, keys): keep the exact integer.
    return Number.isSafeInteger(n) ? n : BigInt(s);
  };
}

function numberParser(f: FieldOptions): Parser {
  const bare = f.bareNumber !== false;
  const group = f.groupChar ?? "";
  const decimal = f.decimalChar ?? ".";
  return (raw) => {
    let s = raw.trim();
    if (!bare) s = strip(s);
    if (group) s = s.split(group).join("");
    if (decimal !== ".") {
      if (s.includes(".")) return null;
      s = s.split(decimal).join(".");
    }
    if (DECIMAL.test(s)) return decimalValue(s);
    const special = SPECIAL_NUMBERS[s.toLowerCase()];
    return special === undefined ? null : special;
  };
}

function stringParser(format: string): Parser {
  if (format === "uri") return (raw) => (/^[a-z][a-z0-9+.-]*:/i.test(raw) && URL.canParse(raw) ? raw : null);
  if (format === "wkt") return (raw) => (isWkt(raw) ? raw : null);
  if (format in STRING_RE) return (raw) => (STRING_RE[format]!.test(raw) ? raw : null);
  return (raw) => raw;
}

function json(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A geopoint as [lon, lat], both in range; the three formats of the spec. */
function geopointParser(format: string): Parser {
  const num = (v: unknown) => {
    const n = typeof v === "number" ? v : typeof v === "string" && DECIMAL.test(v.trim()) ? Number(v) : NaN;
    return Number.isFinite(n) ? n : null;
  };
  const point = (lon: unknown, lat: unknown) => {
    const x = num(lon);
    const y = num(lat);
    if (x === null || y === null || x < -180 || x > 180 || y < -90 || y > 90) return null;
    return [x, y];
  };
  if (format === "array")
    return (raw) => {
      const v = json(raw);
      return Array.isArray(v) && v.length === 2 ? point(v[0], v[1]) : null;
    };
  if (format === "object")
    return (raw) => {
      const v = json(raw);
      return isObject(v) && Object.keys(v).length === 2 && "lon" in v && "lat" in v
        ? point(v.lon, v.lat)
        : null;
    };
  return (raw) => {
    const parts = raw.split(",");
    return parts.length === 2 ? point(parts[0], parts[1]) : null;
  };
}

// ISO 8601 durations as Python's isodate reads them (PnYnMnWnDTnHnMnS, fractions allowed).
const DURATION =
  /^([+-])?P(?!$)(?:(\d+(?:[.,]\d+)?)Y)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)W)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?=\d)(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/;

/** A duration's value: months and seconds, the two quantities a calendar cannot convert. */
function parseDuration(raw: string): string | null {
  const m = DURATION.exec(raw);
  if (!m) return null;
  const n = (i: number) => Number((m[i] ?? "0").replace(",", "."));
  const sign = m[1] === "-" ? -1 : 1;
  const months = sign * (n(2) * 12 + n(3));
  const seconds = sign * (((n(4) * 7 + n(5)) * 24 + n(6)) * 3600 + n(7) * 60 + n(8));
  return `P${months}M${seconds}S`;
}

function yearmonth(raw: string): number | null {
  const parts = raw.split("-");
  if (parts.length !== 2) return null;
  const [y, m] = parts.map((p) => p.trim());
  if (!INTEGER.test(y!) || !INTEGER.test(m!)) return null;
  const month = Number(m);
  return month >= 1 && month <= 12 ? Number(y) * 12 + month - 1 : null;
}

/** The parser of a field's type and format, or a message when the schema is unusable. */
export function typeParser(f: FieldOptions): Parser | string {
  const type = f.type ?? "string";
  let format = f.format ?? "default";
  // "fmt:<pattern>" is the deprecated spelling of a pattern (Table Schema before v1).
  if (TEMPORAL.has(type) && format.startsWith("fmt:")) format = format.slice(4);
  if (!TEMPORAL.has(type) && !FORMATS[type].includes(format))
    return `format "${format}" is not one of ${FORMATS[type].map((x) => `"${x}"`).join(", ")} for ${type} fields`;
  switch (type) {
    case "string":
      return stringParser(format);
    case "integer":
      return integerParser(f);
    case "number":
      return numberParser(f);
    case "year":
      return (raw) => {
        const s = raw.trim();
        return raw.length === 4 && INTEGER.test(s) && Number(s) >= 0 ? Number(s) : null;
      };
    case "yearmonth":
      return yearmonth;
    case "boolean": {
      const t = new Set(f.trueValues ?? ["true", "True", "TRUE", "1"]);
      const fl = new Set(f.falseValues ?? ["false", "False", "FALSE", "0"]);
      return (raw) => (t.has(raw) ? true : fl.has(raw) ? false : null);
    }
    case "duration":
      return parseDuration;
    case "geopoint":
      return geopointParser(format);
    case "geojson": {
      const ok = format === "topojson" ? isTopojson : isGeojson;
      return (raw) => {
        const v = json(raw);
        return isObject(v) && ok(v) ? v : null;
      };
    }
    case "object":
      return (raw) => {
        const v = json(raw);
        return isObject(v) ? v : null;
      };
    case "array":
      return (raw) => {
        const v = json(raw);
        return Array.isArray(v) ? v : null;
      };
    case "any":
      return (raw) => raw;
    default: {
      const kind = type as Kind;
      const custom = format !== "default" && format !== "any" ? compilePattern(format) : undefined;
      if (custom === null)
        return `format "${format}" uses an unsupported directive (use %Y %y %m %d %j %H %I %M %S %f %p %z %b %B %a %A %%)`;
      return (raw) => parseTemporal(kind, format, raw, custom);
    }
  }
}

/**
 * Canonical text of a value, for keys: 1 and 1.0 are one number, {"a":1} is one object. Numbers
 * are keyed by their exact decimal (exactDecimal), as Frictionless's Decimals compare, so that a
 * double, a bigint (integers past 2^53) and an ExactNumber of one value are one key. A double
 * counts as the decimal it prints as (0.1 is 0.1); a safe integer prints as that decimal already.
 */
export function valueKey(v: Value): string {
  switch (typeof v) {
    case "number":
      // `${-0}` is "0"; NaN and the infinities key as they print.
      if (Number.isSafeInteger(v) || !Number.isFinite(v)) return `n:${v}`;
      return `n:${exactDecimal(String(v))}`;
    case "bigint":
      return `n:${exactDecimal(String(v))}`;
    case "string":
      return `s:${v}`;
    case "boolean":
      return `b:${v}`;
    default:
      return v instanceof ExactNumber ? `n:${v.decimal}` : `j:${stableJson(v)}`;
  }
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}
