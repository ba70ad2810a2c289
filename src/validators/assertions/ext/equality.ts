// CEL equality and ordering (langdef.md "Equality", "Ordering") for the extension functions that
// compare elements (distinct, indexOf, sort, sets.*): numbers equal across int, uint and double by
// value, NaN equal to nothing, lists and maps by content, other kinds only with their own kind.
import { fail } from "../errors.ts";
import { isCelList, isCelMap, isCelType } from "@bufbuild/cel";
import { isReflectMessage } from "@bufbuild/protobuf/reflect";
import { compareCodePoints } from "./code-points.ts";
import { compareNum, isNum, kindOf, raw } from "./numbers.ts";

export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== "number" || !Number.isNaN(a);
  if (isNum(a) || isNum(b)) return isNum(a) && isNum(b) && compareNum(a, b) === 0 && !isNaNValue(a);
  if (a instanceof Uint8Array)
    return b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
  if (isCelList(a)) {
    if (!isCelList(b) || a.size !== b.size) return false;
    for (let i = 0; i < a.size; i++) if (!celEquals(a.get(i), b.get(i))) return false;
    return true;
  }
  if (isCelMap(a)) {
    if (!isCelMap(b) || a.size !== b.size) return false;
    for (const [k, v] of a) {
      const w = b.get(k as never);
      if (w === undefined || !celEquals(v, w)) return false;
    }
    return true;
  }
  if (isCelType(a)) return isCelType(b) && a.kind === b.kind && a.name === b.name;
  const t = timeValue(a);
  const u = timeValue(b);
  return t !== null && u !== null && t.type === u.type && t.value === u.value;
}

const isNaNValue = (v: unknown) => typeof v === "number" && Number.isNaN(v);

/**
 * A string that equal scalars share and unequal ones do not, or null for values without one
 * (lists, maps, NaN): lets distinct() and the set functions run in linear time.
 */
export function equalityKey(v: unknown): string | null {
  if (typeof v === "string") return `s${v}`;
  if (typeof v === "boolean") return v ? "t" : "f";
  if (v === null) return "z";
  if (isNum(v)) {
    const x = raw(v);
    if (typeof x === "bigint") return `n${x}`;
    if (Number.isNaN(x)) return null;
    return Number.isInteger(x) ? `n${BigInt(x)}` : `n${x}`;
  }
  const t = timeValue(v);
  return t === null ? null : `${t.type}${t.value}`;
}

/** Orders two values of one comparable kind; throws for kinds CEL does not order. */
export function celCompare(a: unknown, b: unknown, what: string): number {
  if (isNum(a) && isNum(b)) return compareNum(a, b);
  if (typeof a === "string" && typeof b === "string") return compareCodePoints(a, b);
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
    return a.length - b.length;
  }
  const t = timeValue(a);
  const u = timeValue(b);
  if (t !== null && u !== null && t.type === u.type)
    return t.value < u.value ? -1 : t.value > u.value ? 1 : 0;
  fail(`${what} cannot order ${kindOf(a)} and ${kindOf(b)}`);
}

/** Timestamps and durations as nanoseconds. */
function timeValue(v: unknown): { type: string; value: bigint } | null {
  if (!isReflectMessage(v)) return null;
  const type = v.desc.typeName;
  if (type !== "google.protobuf.Timestamp" && type !== "google.protobuf.Duration") return null;
  const m = v.message as unknown as { seconds: bigint; nanos: number };
  return { type, value: m.seconds * 1_000_000_000n + BigInt(m.nanos) };
}
