// UUIDv7 (RFC 9562 §5.7): 48-bit Unix ms timestamp, then random bits — ids that sort by time,
// so the runs table (WITHOUT ROWID, keyed by id) stays append-mostly.
import { randomBytes } from "node:crypto";

let lastMs = 0;
let seq = 0;

export function uuidv7(): string {
  const b = randomBytes(16);
  let ms = Date.now();
  // Monotonic within one process: same millisecond → bump a 12-bit counter in rand_a.
  if (ms <= lastMs) {
    seq = (seq + 1) & 0xfff;
    if (seq === 0) lastMs += 1;
    ms = lastMs;
  } else {
    lastMs = ms;
    seq = b[6]! & 0x03; // small random start keeps room for the counter
  }
  b[0] = Math.floor(ms / 2 ** 40) & 0xff;
  b[1] = Math.floor(ms / 2 ** 32) & 0xff;
  b[2] = (ms >>> 24) & 0xff;
  b[3] = (ms >>> 16) & 0xff;
  b[4] = (ms >>> 8) & 0xff;
  b[5] = ms & 0xff;
  b[6] = 0x70 | ((seq >>> 8) & 0x0f);
  b[7] = seq & 0xff;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
