// Where a byte of the file as stored falls in its text. Under a charset other than UTF-8 the
// stored bytes are not the UTF-8 that bytePosition reads: a Latin-1 "Ã©" is two characters, a
// UTF-16 "a" two bytes. So the bytes before the offset are decoded in the file's own charset.
import { LineIndex, type Position } from "./position.ts";
import { bytePosition } from "./utf8.ts";
import type { ValidationInput } from "../types.ts";

/** Line and column, in `input.text`, of the character that holds stored byte `offset`. */
export function storedPosition(input: ValidationInput, offset: number): Position {
  if (!input.stored || !input.charset) return bytePosition(input.stored ?? input.bytes, offset);
  return new LineIndex(input.text).position(charsBefore(input.stored, offset, input.charset));
}

/** UTF-16 units of the characters that end at or before `offset` (a BOM not counted). */
function charsBefore(bytes: Uint8Array, offset: number, charset: string): number {
  // One byte, one character: intake reads these two as latin1 (src/runs/intake/charsets.ts).
  if (charset === "us-ascii" || charset === "iso-8859-1") return offset;
  try {
    // stream: a character cut at the offset is held back, not counted as a U+FFFD.
    return new TextDecoder(charset).decode(bytes.subarray(0, offset), { stream: true }).length;
  } catch {
    return 0;
  }
}
