// CEL strings are sequences of code points (cel-spec, "String and Bytes Values"), and cel-go's
// strings extension indexes them so; JavaScript's string methods count UTF-16 units, which the
// engine's charAt, indexOf, lastIndexOf and substring used: '😀a'.substring(1) was half an emoji.
// These count code points, and take the plain UTF-16 path when the string has no surrogate (the
// two counts are then the same). Bounds and messages are the engine's.
import { fail } from "../errors.ts";

const SURROGATE = /[\uD800-\uDFFF]/;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;

/** Code points, counted without building an array ([...s] on 25 MB of text is 25 M strings). */
export function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    if (isHigh(s.charCodeAt(i)) && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** The UTF-16 offset of code point `cp` (the length at or past the end). */
function offsetOf(s: string, cp: number): number {
  let i = 0;
  for (let n = 0; n < cp && i < s.length; n++) i += isHigh(s.charCodeAt(i)) && i + 1 < s.length ? 2 : 1;
  return i;
}

/** The code point index of a UTF-16 offset, or -1 for -1. */
const indexOfOffset = (s: string, at: number) => (at < 0 ? -1 : codePoints(s.slice(0, at)));

/** The string's length in code points, and whether it differs from its UTF-16 length. */
function measure(s: string): { length: number; wide: boolean } {
  if (!SURROGATE.test(s)) return { length: s.length, wide: false };
  return { length: codePoints(s), wide: true };
}

function inBounds(i: number, length: number, last: number): void {
  if (i < 0 || i > last) fail(`index ${i} out of bounds [0, ${length})`);
}

export function charAt(this: string, index: bigint): string {
  const { length, wide } = measure(this);
  const i = Number(index);
  inBounds(i, length, length);
  if (!wide) return this.charAt(i);
  return this.slice(offsetOf(this, i), offsetOf(this, i + 1));
}

// The empty string is found where the search starts, the end included: cel-go returns the offset
// ('abc'.indexOf('', 3) == 3) where a non-empty search from the end is out of bounds.
export function indexOf(this: string, sub: string, start?: bigint): bigint {
  const { length, wide } = measure(this);
  if (start === undefined) return BigInt(wide ? indexOfOffset(this, this.indexOf(sub)) : this.indexOf(sub));
  const i = Number(start);
  inBounds(i, length, sub === "" ? length : length - 1);
  if (sub === "") return start;
  if (!wide) return BigInt(this.indexOf(sub, i));
  return BigInt(indexOfOffset(this, this.indexOf(sub, offsetOf(this, i))));
}

export function lastIndexOf(this: string, sub: string, start?: bigint): bigint {
  const { length, wide } = measure(this);
  if (start === undefined)
    return BigInt(wide ? indexOfOffset(this, this.lastIndexOf(sub)) : this.lastIndexOf(sub));
  const i = Number(start);
  inBounds(i, length, sub === "" ? length : length - 1);
  if (sub === "") return start;
  if (!wide) return BigInt(this.lastIndexOf(sub, i));
  return BigInt(indexOfOffset(this, this.lastIndexOf(sub, offsetOf(this, i))));
}

export function substring(this: string, start: bigint, end?: bigint): string {
  const { length, wide } = measure(this);
  const i = Number(start);
  inBounds(i, length, length);
  const j = end === undefined ? length : Number(end);
  inBounds(j, length, length);
  if (i > j) fail("invalid argument to function substring: start > end");
  return wide ? this.slice(offsetOf(this, i), offsetOf(this, j)) : this.substring(i, j);
}

/**
 * -1, 0 or 1: strings ordered by code point, as CEL orders them (cel-spec, "String and Bytes
 * Values"). JavaScript's `<` compares UTF-16 units, which puts an astral character (a surrogate
 * pair, D800–DFFF) before U+E000–U+FFFF: '\uFFFF' < '😀' was false. Only at the first unit that
 * differs, and only when both are ≥ D800, does the order need fixing: surrogates move above.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length < b.length ? -1 : 1;
  let x = a.charCodeAt(i);
  let y = b.charCodeAt(i);
  if (x >= 0xd800 && y >= 0xd800) {
    x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
    y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
  }
  return x < y ? -1 : 1;
}
