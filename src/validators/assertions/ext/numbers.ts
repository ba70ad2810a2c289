// CEL numbers in JavaScript: int is a bigint, uint a CelUint, double a number. Comparisons
// across the three are exact (JavaScript compares a bigint with a number by value).
import { fail } from "../errors.ts";
import { type CelUint, celUint, isCelUint } from "@bufbuild/cel";

export type Num = bigint | number | CelUint;

export const MAX_INT = 0x7fff_ffff_ffff_ffffn;
export const MIN_INT = -0x8000_0000_0000_0000n;
export const MAX_UINT = 0xffff_ffff_ffff_ffffn;

export function isNum(v: unknown): v is Num {
  return typeof v === "bigint" || typeof v === "number" || isCelUint(v);
}

/** The value to compare with: a bigint for int and uint, the number for a double. */
export const raw = (v: Num): bigint | number => (typeof v === "object" ? v.value : v);

/** -1, 0 or 1 (NaN compares as neither: both tests false, so 0). */
export function compareNum(a: Num, b: Num): number {
  const x = raw(a);
  const y = raw(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function checkedInt(v: bigint, what: string): bigint {
  if (v > MAX_INT || v < MIN_INT) fail(`integer overflow in ${what}`);
  return v;
}

export function checkedUint(v: bigint, what: string): CelUint {
  if (v > MAX_UINT || v < 0n) fail(`unsigned integer overflow in ${what}`);
  return celUint(v);
}

/** The CEL type name of a value, for messages. */
export function kindOf(v: unknown): string {
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "double";
  if (isCelUint(v)) return "uint";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (v === null) return "null";
  if (v instanceof Uint8Array) return "bytes";
  if (typeof v === "object" && v !== null && Symbol.iterator in v) return "list";
  return "value";
}

/**
 * The sum of numbers: an int when all are ints, a uint when all are uints (both checked for
 * overflow), else a double, added with Neumaier's compensation so that summing prices loses no
 * more than one rounding. The empty sum is the int 0.
 */
export function sumOf(values: Iterable<unknown>, what: string): Num {
  let ints = 0n;
  let uints = 0n;
  let kinds = 0; // bit 1 int, 2 uint, 4 double
  let sum = 0;
  let compensation = 0;
  const addDouble = (x: number) => {
    const t = sum + x;
    compensation += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
    sum = t;
  };
  let i = 0;
  for (const v of values) {
    if (typeof v === "bigint") {
      kinds |= 1;
      ints = checkedInt(ints + v, what);
    } else if (isCelUint(v)) {
      kinds |= 2;
      uints = checkedUint(uints + v.value, what).value;
    } else if (typeof v === "number") {
      kinds |= 4;
      addDouble(v);
    } else {
      fail(`${what} needs numbers; element ${i} is ${kindOf(v)}`);
    }
    i++;
  }
  if (kinds === 0 || kinds === 1) return ints;
  if (kinds === 2) return celUint(uints);
  addDouble(Number(ints));
  addDouble(Number(uints));
  return sum + compensation;
}
