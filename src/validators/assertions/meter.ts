// The evaluation budget of one CEL rule (issue #19: 18 nested list doublings took 5.7 GB).
// CEL has no loops, but comprehensions nest and lists and strings double, so a 4 KB rule can ask
// for more than any machine has. Every evaluation runs under a Meter: each comprehension step,
// each value a function builds and each collection a function walks is charged, and the first
// charge over the limit ends the evaluation. The engine turns a thrown error into a CEL error
// value, and CEL's `||`/`&&` may absorb error values; so the meter remembers that it ran out and
// throws again on every later charge, and the caller asks it afterwards (`exceeded`) instead of
// trusting the result.
import { isCelList, isCelMap } from "@bufbuild/cel";
import { CEL_COST_LIMIT, CEL_MAX_STRING } from "../limits.ts";

/** Charged per string character built (a unit per 4 characters) and walked (per 64). */
const BUILD_CHARS_PER_UNIT = 4;
const WALK_CHARS_PER_UNIT = 64;

/**
 * What a list or map literal costs each time it is evaluated, for what the engine allocates
 * (measured on Bun: an empty CelList ~184 bytes, +8 per element; a CelMap of one entry ~408):
 * about 20 bytes a unit, so a budget's worth of literals stays near 200 MB.
 */
export const LIST_LITERAL_UNITS = { base: 8, each: 1 };
export const MAP_LITERAL_UNITS = { base: 20, each: 2 };

/** Units between two collection hints (see Meter.charge): 10 per budget. */
const GC_EVERY_UNITS = 1_000_000;
let sinceGc = 0;

export class BudgetExceeded extends Error {}

export class Meter {
  used = 0;
  exceeded: string | null = null;
  constructor(readonly limit: number = CEL_COST_LIMIT) {}

  charge(units: number): void {
    if (this.exceeded !== null) throw new BudgetExceeded(this.exceeded);
    this.used += units;
    // A collection hint every GC_EVERY_UNITS: a rule walking a million elements makes garbage at
    // each step (converted values, numbers), and JSC let a worker grow to ~650 MB on one such
    // evaluation before collecting (two at once: 1.3 GB, #19). Young garbage is collected cheaply.
    // Counted across evaluations: a per-row rule runs a small one per row.
    sinceGc += units;
    if (sinceGc >= GC_EVERY_UNITS) {
      sinceGc = 0;
      Bun.gc(false);
    }
    if (this.used > this.limit)
      this.fail(`used more than its budget of ${this.limit.toLocaleString("en")} cost units`);
  }

  fail(reason: string): never {
    this.exceeded ??= reason;
    throw new BudgetExceeded(this.exceeded);
  }
}

let current: Meter | null = null;

/** Runs `fn` (one evaluation) under `meter`; evaluations do not nest, so one slot suffices. */
export function withMeter<T>(meter: Meter, fn: () => T): T {
  const outer = current;
  current = meter;
  try {
    return fn();
  } finally {
    current = outer;
  }
}

/** Charges the running evaluation; outside one (save-time folding, tests) it is free. */
export function charge(units: number): void {
  if (current !== null) current.charge(units);
}

/** Units for building `v`: its elements or entries, or its characters / 4. */
export function buildCost(v: unknown): number {
  if (typeof v === "string") return Math.ceil(v.length / BUILD_CHARS_PER_UNIT);
  if (v instanceof Uint8Array) return Math.ceil(v.length / BUILD_CHARS_PER_UNIT);
  if (isCelList(v)) return v.size;
  if (isCelMap(v)) return 2 * v.size;
  if (Array.isArray(v)) return v.length;
  return 0;
}

/** Units for walking `v` once: its elements or entries, or its characters / 64. */
export function walkCost(v: unknown): number {
  if (typeof v === "string") return Math.ceil(v.length / WALK_CHARS_PER_UNIT);
  if (v instanceof Uint8Array) return Math.ceil(v.length / WALK_CHARS_PER_UNIT);
  if (isCelList(v) || isCelMap(v)) return v.size;
  return 0;
}

/**
 * A string or bytes value about to be built, checked before it is: over CEL_MAX_STRING ends the
 * evaluation whatever the budget says, so one call cannot allocate hundreds of megabytes.
 */
export function checkLength(length: number, what: string): void {
  if (length > CEL_MAX_STRING) {
    const reason = `makes a ${what} of ${length.toLocaleString("en")} characters, over the limit of ${CEL_MAX_STRING.toLocaleString("en")}`;
    if (current !== null) current.fail(reason);
    throw new BudgetExceeded(reason);
  }
}
