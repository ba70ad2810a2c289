// cel-go's strings extension as @bufbuild/cel ships it (charAt, indexOf, lastIndexOf, lowerAscii,
// upperAscii, replace, split, substring, trim, join, format, strings.quote), plus reverse() from
// cel-go's later versions, and cel-go's base64 encoders. What they build is charged and bounded by
// the wrapper in env.ts. split(sep, n) is replaced: the engine's used JavaScript's limit, which
// drops the rest ('a,b,c'.split(',', 2) gave ['a', 'b']); Go's strings.SplitN keeps it in the last.
// format()'s %f rounds as Go does (fixed-point.ts).
import { type CelFunc, type CelList, CelScalar, celFunc, celMethod, listType } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { fail } from "../errors.ts";
import { charge, checkLength } from "../meter.ts";
import { charAt, codePoints, indexOf, lastIndexOf, substring } from "./code-points.ts";
import { withGoFixedPoint } from "./fixed-point.ts";

/** How many parts split() makes, charged before they are made. */
function chargeParts(s: string, sep: string): void {
  let parts = 1;
  if (sep === "") parts = codePoints(s);
  else for (let at = s.indexOf(sep); at >= 0; at = s.indexOf(sep, at + sep.length)) parts++;
  charge(parts);
}

/** Go's strings.SplitN: n < 0 all parts, 0 none, else at most n with the rest in the last. */
function splitN(s: string, sep: string, n: bigint): string[] {
  if (n === 0n) return [];
  chargeParts(s, sep);
  const parts = sep === "" ? [...s] : s.split(sep);
  if (n < 0n || BigInt(parts.length) <= n) return parts;
  const head = parts.slice(0, Number(n) - 1);
  return [...head, parts.slice(Number(n) - 1).join(sep)];
}

/**
 * Go's strings.Replace: the first n occurrences (all when n < 0); an empty `old` matches before
 * each character and at the end. The result's length is known before it is built, and checked
 * (meter.ts): `s.replace('', s)` must not allocate |s|² characters before anything can object.
 */
function replaceN(s: string, old: string, by: string, n: bigint): string {
  const chars = old === "" ? [...s] : null;
  const found = chars ? chars.length + 1 : s.split(old).length - 1;
  const count = n < 0n || BigInt(found) < n ? found : Number(n);
  checkLength(s.length + count * (by.length - old.length), "string");
  if (count === 0) return s;
  if (chars) {
    const head = chars
      .slice(0, count)
      .map((c) => by + c)
      .join("");
    return count > chars.length ? `${head}${by}` : head + chars.slice(count).join("");
  }
  const parts = s.split(old);
  return (
    parts.slice(0, count + 1).join(by) +
    (count + 1 < parts.length ? old + parts.slice(count + 1).join(old) : "")
  );
}

/** join(), its length checked before it is built (a list may hold one long string many times). */
function joinAll(list: CelList, sep: string): string {
  let length = 0;
  let i = 0;
  for (const v of list) {
    if (typeof v !== "string") fail(`join() needs a list of strings; element ${i} is not a string`);
    length += v.length + (i++ > 0 ? sep.length : 0);
  }
  checkLength(length, "string");
  return [...list].join(sep);
}

const { INT, STRING } = CelScalar;
const LIST = listType(CelScalar.DYN);

/** The engine's format(), kept for every clause but the fixed-point one (fixed-point.ts). */
const engineFormat = (
  strings.find((f) => f.name === "format") as unknown as { _impl: Parameters<typeof withGoFixedPoint>[0] }
)._impl;

export const stringsExt: CelFunc[] = [
  ...strings,
  // By code point, as CEL counts (code-points.ts); the engine's count UTF-16 units.
  celMethod("charAt", STRING, [INT], STRING, charAt),
  celMethod("indexOf", STRING, [STRING], INT, indexOf),
  celMethod("indexOf", STRING, [STRING, INT], INT, indexOf),
  celMethod("lastIndexOf", STRING, [STRING], INT, lastIndexOf),
  celMethod("lastIndexOf", STRING, [STRING, INT], INT, lastIndexOf),
  celMethod("substring", STRING, [INT], STRING, substring),
  celMethod("substring", STRING, [INT, INT], STRING, substring),
  celFunc("size", [STRING], INT, (s: string) => BigInt(codePoints(s))),
  celMethod("size", STRING, [], INT, function (this: string) {
    return BigInt(codePoints(this));
  }),
  // The engine's versions add one character at a time: a rope of 25 M nodes for 25 MB of text.
  celMethod("lowerAscii", STRING, [], STRING, function (this: string) {
    return this.replace(/[A-Z]+/g, (m) => m.toLowerCase());
  }),
  celMethod("upperAscii", STRING, [], STRING, function (this: string) {
    return this.replace(/[a-z]+/g, (m) => m.toUpperCase());
  }),
  celMethod("split", STRING, [STRING], listType(STRING), function (this: string, sep: string) {
    return splitN(this, sep, -1n);
  }),
  celMethod("replace", STRING, [STRING, STRING], STRING, function (this: string, old: string, by: string) {
    return replaceN(this, old, by, -1n);
  }),
  celMethod(
    "replace",
    STRING,
    [STRING, STRING, INT],
    STRING,
    function (this: string, old: string, by: string, n: bigint) {
      return replaceN(this, old, by, n);
    },
  ),
  celMethod("join", LIST, [], STRING, function (this: CelList) {
    return joinAll(this, "");
  }),
  celMethod("join", LIST, [STRING], STRING, function (this: CelList, sep: string) {
    return joinAll(this, sep);
  }),
  celMethod(
    "split",
    CelScalar.STRING,
    [CelScalar.STRING, CelScalar.INT],
    listType(CelScalar.STRING),
    function (this: string, sep: string, n: bigint) {
      return splitN(this, sep, n);
    },
  ),
  celMethod("format", STRING, [LIST], STRING, withGoFixedPoint(engineFormat)),
  celMethod("reverse", CelScalar.STRING, [], CelScalar.STRING, function (this: string) {
    charge(this.length);
    return [...this].reverse().join("");
  }),
];

/** cel-go ext/encoders: standard base64, padding optional when decoding. */
export const encodersExt: CelFunc[] = [
  celFunc("base64.encode", [CelScalar.BYTES], CelScalar.STRING, (b: Uint8Array) =>
    Buffer.from(b).toString("base64"),
  ),
  celFunc("base64.decode", [CelScalar.STRING], CelScalar.BYTES, (s: string) => {
    if (
      !/^[A-Za-z0-9+/]*={0,2}$/.test(s) ||
      s.replace(/=+$/, "").length % 4 === 1 ||
      (s.includes("=") && s.length % 4 !== 0)
    )
      fail("base64.decode(): not valid base64");
    return new Uint8Array(Buffer.from(s, "base64"));
  }),
];
