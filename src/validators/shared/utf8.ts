// Strict UTF-8 checking on the raw bytes: TextDecoder would silently substitute U+FFFD, and a
// user needs the position of the first bad byte, not a replaced character.
import type { Position } from "./position.ts";

/** Byte offset of the first byte that is not part of a valid UTF-8 sequence, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    if (i + need >= n) return i; // truncated sequence at the end
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are invalid (RFC 3629).
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/** Line and column (UTF-16 units of the decoded line prefix) of a byte offset. */
export function bytePosition(bytes: Uint8Array, offset: number): Position {
  // An offset inside a character (a limit that falls in a multi-byte one) names that character:
  // decoding its first bytes alone added a U+FFFD, a column too far.
  while (offset > 0 && offset < bytes.length && ((bytes[offset] ?? 0) & 0xc0) === 0x80) offset--;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    const b = bytes[i];
    if (b === 10 || (b === 13 && bytes[i + 1] !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  const prefix = new TextDecoder("utf-8").decode(bytes.subarray(lineStart, offset));
  return { line, column: prefix.length + 1 };
}

export function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}
