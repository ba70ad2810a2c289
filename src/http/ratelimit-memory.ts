// Rate limits shared by the HTTP threads of one process (SQLite, ASSAY_HTTP_THREADS > 1): the same
// GCRA as RateLimiter (src/http/ratelimit.ts), the same all-or-nothing check of several budgets as
// the PostgreSQL limiter (src/http/ratelimit-shared.ts), its state in a SharedArrayBuffer posted to
// every thread. Synchronous, and cheap (0.3–0.4 µs for two budgets): one lock word guards the table;
// keys are encoded and hashed before it is taken, and only the decisions are allocated under it.
//
// Layout: the lock word, then an open-addressing hash table of `slots` records of 112 bytes (TAT as
// Float64, key hash, key length, key bytes), so that a lookup touches about two cache lines.
// Bounded: a key whose TAT is ≤ now has a whole budget again, so its slot counts as free and is
// overwritten by the next key that needs one (forgetting it changes nothing, as with RateLimiter's
// generations). When a key's probe window has no free slot, the entry with the smallest TAT there
// — the closest to whole — goes.
import { createHash } from "node:crypto";
import { type Decision, type Policy, decisionOf, uncountedOf } from "./ratelimit.ts";
import type { Budget } from "./ratelimit-shared.ts";

/** What a thread needs to attach to the same budgets (posted with postMessage). */
export interface MemoryBudgetsInit {
  buffer: SharedArrayBuffer;
  slots: number;
}

/** Key bytes stored per entry: `${policy.name}:${key}` in UTF-8; longer keys are hashed. */
const KEY_BYTES = 96;
const KEY_WORDS = KEY_BYTES / 4;
/** The length stored for a long key's surrogate (its 32 SHA-256 bytes): no short key has it. */
const HASHED = 0x80 | 32;
/** One entry, in Int32 words: TAT (a Float64: words 0–1), key hash, key length, key bytes. */
const RECORD = 4 + KEY_WORDS;
/** Slots a key may occupy from its home slot on: bounds a lookup and an eviction's choice. */
const PROBES = 32;
/** Lock attempts before sleeping: the lock is held for a few hundred ns at most. */
const SPINS = 100;
/** Sleep of a waiting thread (ms): a missed wake-up costs at most this. */
const WAIT_MS = 1;
/** Lock word: 0 free, 1 held, 2 held and a thread may be waiting (release wakes one). */
const FREE = 0;
const HELD = 1;
const CONTENDED = 2;
/** Int32 lock word, padded so that the TATs are aligned. */
const HEADER = 8;
const bytesFor = (slots: number) => HEADER + slots * RECORD * 4;
const interval = (p: Policy) => (p.windowSeconds * 1000) / p.limit;
const wordsOf = (len: number) => (len === HASHED ? 8 : (len + 3) >> 2);

export class MemoryBudgets {
  readonly init: MemoryBudgetsInit;
  private readonly slots: number;
  private readonly window: number;
  private readonly lock: Int32Array;
  /** The entries, one record each, read as words (rec) and as TATs (tats, at slot × RECORD/2). */
  private readonly rec: Int32Array;
  private readonly tats: Float64Array;
  // This thread's scratch for the keys of one call, encoded (and hashed) before the lock is taken.
  private kBytes = new Uint8Array(2 * KEY_BYTES);
  private kWords = new Int32Array(this.kBytes.buffer);
  private kLen = new Int32Array(2);
  private kHash = new Int32Array(2);
  private kSlot = new Int32Array(2);
  private kTat = new Float64Array(2);

  /** New, empty budgets with room for `slots` keys in all (default 65,536: about 7 MB). */
  static create(slots = 65_536): MemoryBudgets {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError("invalid slot count");
    return new MemoryBudgets({ buffer: new SharedArrayBuffer(bytesFor(slots)), slots });
  }

  /** The same budgets, from another thread. */
  static attach(init: MemoryBudgetsInit): MemoryBudgets {
    return new MemoryBudgets(init);
  }

  private constructor(init: MemoryBudgetsInit) {
    const { buffer, slots } = init;
    if (buffer.byteLength !== bytesFor(slots)) throw new RangeError("buffer does not match slot count");
    this.init = init;
    this.slots = slots;
    this.window = Math.min(slots, PROBES);
    this.lock = new Int32Array(buffer, 0, 1);
    this.rec = new Int32Array(buffer, HEADER, slots * RECORD);
    this.tats = new Float64Array(buffer, HEADER, (slots * RECORD) / 2);
  }

  /**
   * One request against every budget given: counted in all only when all allow it. Same answers
   * as createSharedLimiter(...).take(budgets): each decision from decisionOf with the TAT as stored
   * before this request (uncountedOf when the request is refused); `tat` is max(that, now), plus
   * one interval when counted — as there, a TAT ≤ now (a whole budget) is reported as now.
   */
  take(budgets: Budget[], now: number = Date.now()): (Decision & { tat: number })[] {
    const n = budgets.length;
    for (let i = 0; i < n; i++) this.encode(i, budgets[i]!.policy, budgets[i]!.key);
    const out = new Array<Decision & { tat: number }>(n);
    const cur = this.kTat;
    let all = true;
    this.acquire();
    try {
      for (let i = 0; i < n; i++) {
        const slot = this.find(i);
        this.kSlot[i] = slot;
        cur[i] = Math.max(slot < 0 ? now : this.tats[slot * (RECORD / 2)]!, now);
        out[i] = decisionOf(budgets[i]!.policy, now, cur[i]!) as Decision & { tat: number };
        all &&= out[i]!.allowed;
      }
      if (all)
        for (let i = 0; i < n; i++) {
          // Found above, else found now (the same key twice in one call) or a slot claimed.
          let slot = this.kSlot[i]!;
          if (slot < 0) slot = this.find(i);
          if (slot < 0) slot = this.claim(i, now, n);
          this.kSlot[i] = slot;
          if (slot >= 0) this.tats[slot * (RECORD / 2)] = cur[i]! + interval(budgets[i]!.policy);
        }
    } finally {
      this.release();
    }
    for (let i = 0; i < n; i++) {
      // Refused: counted nowhere, so every budget is shown as it stands (uncountedOf).
      if (!all) out[i] = uncountedOf(budgets[i]!.policy, now, cur[i]!) as Decision & { tat: number };
      out[i]!.tat = all ? cur[i]! + interval(budgets[i]!.policy) : cur[i]!;
    }
    return out;
  }

  /** The TAT stored for a key (0 when none: its budget is whole), for a peek (limits.ts ipPeek). */
  tat(policy: Policy, key: string): number {
    this.encode(0, policy, key);
    this.acquire();
    try {
      const slot = this.find(0);
      return slot < 0 ? 0 : this.tats[slot * (RECORD / 2)]!;
    } finally {
      this.release();
    }
  }

  /** Key i of this call into the scratch: its bytes (or surrogate) zero-padded to a word, length, hash. */
  private encode(i: number, policy: Policy, key: string) {
    if (i >= this.kLen.length) this.grow(i + 1);
    const bytes = this.kBytes;
    const off = i * KEY_BYTES;
    // ASCII by hand (most keys: t:<uuid>, u:<uuid>, an address), without building the string.
    let len = ascii(policy.name, bytes, off, 0);
    if (len >= 0 && len < KEY_BYTES) {
      bytes[off + len] = 0x3a; // ":"
      len = ascii(key, bytes, off, len + 1);
    } else len = -1;
    if (len < 0) {
      const s = `${policy.name}:${key}`;
      const r = s.length <= KEY_BYTES ? encoder.encodeInto(s, bytes.subarray(off, off + KEY_BYTES)) : null;
      if (r && r.read === s.length) len = r.written;
      else {
        bytes.set(createHash("sha256").update(s).digest(), off);
        len = HASHED;
      }
    }
    const words = wordsOf(len);
    for (let j = len; j < words * 4; j++) bytes[off + j] = 0;
    let h = 0x811c9dc5 ^ len;
    for (let w = 0; w < words; w++) {
      h = Math.imul(h ^ this.kWords[i * KEY_WORDS + w]!, 0x01000193);
      h ^= h >>> 15;
    }
    this.kLen[i] = len;
    this.kHash[i] = h;
  }

  private grow(n: number) {
    const bytes = new Uint8Array(n * KEY_BYTES);
    bytes.set(this.kBytes);
    this.kBytes = bytes;
    this.kWords = new Int32Array(bytes.buffer);
    this.kLen = new Int32Array(n);
    this.kHash = new Int32Array(n);
    this.kSlot = new Int32Array(n);
    this.kTat = new Float64Array(n);
  }

  /**
   * The slot holding key i, or -1. Entries are never deleted, so there are no holes to stop a
   * lookup early: a whole budget's slot keeps its key until another key is written over it in
   * place. A lookup scans the key's probe window and stops only at a slot never written (length
   * 0): a key goes to the first free slot of its window, a never-written slot is always free, and
   * keys never move, so nothing of this key lies beyond one.
   */
  private find(i: number): number {
    const { rec, kWords } = this;
    const len = this.kLen[i]!;
    const hash = this.kHash[i]!;
    const words = wordsOf(len);
    const k = i * KEY_WORDS;
    let s = (hash >>> 0) % this.slots;
    for (let p = 0; p < this.window; p++, s = s + 1 === this.slots ? 0 : s + 1) {
      const r = s * RECORD;
      const l = rec[r + 3]!;
      if (l === 0) return -1;
      if (l !== len || rec[r + 2] !== hash) continue;
      let w = 0;
      while (w < words && rec[r + 4 + w] === kWords[k + w]) w++;
      if (w === words) return s;
    }
    return -1;
  }

  /**
   * A slot for key i, not yet stored: the first free one of its window (TAT ≤ now), else the one
   * with the smallest TAT. Slots found or written for the other keys of this call are not taken.
   */
  private claim(i: number, now: number, n: number): number {
    let s = (this.kHash[i]! >>> 0) % this.slots;
    let min = -1;
    for (let p = 0; p < this.window; p++, s = s + 1 === this.slots ? 0 : s + 1) {
      if (this.claimedByOther(s, i, n)) continue;
      const tat = this.tats[s * (RECORD / 2)]!;
      if (tat <= now) {
        min = s;
        break;
      }
      if (min < 0 || tat < this.tats[min * (RECORD / 2)]!) min = s;
    }
    if (min < 0) return -1; // a window smaller than the call: this budget is not remembered
    const r = min * RECORD;
    const len = this.kLen[i]!;
    this.rec[r + 2] = this.kHash[i]!;
    this.rec[r + 3] = len;
    for (let w = 0; w < wordsOf(len); w++) this.rec[r + 4 + w] = this.kWords[i * KEY_WORDS + w]!;
    return min;
  }

  private claimedByOther(s: number, i: number, n: number): boolean {
    for (let j = 0; j < n; j++) if (j !== i && this.kSlot[j] === s) return true;
    return false;
  }

  private acquire() {
    const lock = this.lock;
    if (Atomics.compareExchange(lock, 0, FREE, HELD) === FREE) return;
    for (let i = 0; i < SPINS; i++)
      if (Atomics.load(lock, 0) === FREE && Atomics.compareExchange(lock, 0, FREE, HELD) === FREE) return;
    // Marked contended, so that the holder's release wakes a sleeper; the timeout bounds a missed one.
    while (Atomics.exchange(lock, 0, CONTENDED) !== FREE) Atomics.wait(lock, 0, CONTENDED, WAIT_MS);
  }

  /** Atomics.notify costs ~30 ns even with no one waiting: only when a thread may be. */
  private release() {
    if (Atomics.exchange(this.lock, 0, FREE) === CONTENDED) Atomics.notify(this.lock, 0, 1);
  }
}

/** `s` as ASCII into bytes[off + at…]: the end, or -1 if not ASCII or past KEY_BYTES. */
function ascii(s: string, bytes: Uint8Array, off: number, at: number): number {
  if (at + s.length > KEY_BYTES) return -1;
  for (let j = 0; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c > 0x7f) return -1;
    bytes[off + at + j] = c;
  }
  return at + s.length;
}

const encoder = new TextEncoder();
