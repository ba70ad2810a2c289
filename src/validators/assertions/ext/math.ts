// cel-go's math extension (ext/math.go): math.greatest, math.least, abs, ceil, floor, round,
// trunc, sign, sqrt, isNaN, isInf, isFinite and the bit operations, with cel-go's names and
// semantics; plus the aggregates math.sum and math.avg over a list (lists.ts has the
// Kubernetes-style methods .sum(), .min(), .max(), .avg()).
import { fail } from "../errors.ts";
import {
  type CelFunc,
  type CelList,
  CelScalar,
  type CelUint,
  celFunc,
  celUint,
  listType,
} from "@bufbuild/cel";
import { CEL_LIMITS } from "../../limits.ts";
import { checkedInt, compareNum, isNum, kindOf, MAX_UINT, MIN_INT, type Num, sumOf } from "./numbers.ts";

const { BOOL, DOUBLE, DYN, INT, UINT } = CelScalar;
const LIST = listType(DYN);

/** math.greatest(a, b, …) or math.greatest([a, b, …]): the extreme value, of its own type. */
function extreme(name: string, sign: 1 | -1) {
  return (...args: unknown[]) => {
    const values = args.length === 1 && !isNum(args[0]) && isIterable(args[0]) ? [...args[0]] : args;
    if (values.length === 0) fail(`${name}() of an empty list`);
    let best: Num | undefined;
    for (const v of values) {
      if (!isNum(v)) fail(`${name}() takes numbers, not ${kindOf(v)}`);
      if (best === undefined || compareNum(v, best) * sign > 0 || Number.isNaN(v)) best = v;
    }
    return best as Num;
  };
}

function isIterable(v: unknown): v is Iterable<unknown> {
  return typeof v === "object" && v !== null && Symbol.iterator in v;
}

/** Go's math.Round: halves away from zero (JavaScript's Math.round takes them up). */
const roundHalfAway = (x: number) => (x < 0 ? -Math.round(-x) : Math.round(x));

const int64 = (v: bigint) => BigInt.asIntN(64, v);
const uint64 = (v: bigint) => BigInt.asUintN(64, v);

function shiftAmount(n: bigint): number {
  if (n < 0n) fail(`math.bitShift requires a non-negative offset, got ${n}`);
  return n > 64n ? 64 : Number(n);
}

/** Overloads of a variadic function for 1 … maxCallArguments arguments. */
function variadic(name: string, impl: (...args: unknown[]) => unknown): CelFunc[] {
  return Array.from({ length: CEL_LIMITS.maxCallArguments }, (_, i) =>
    celFunc(name, Array(i + 1).fill(DYN), DYN, impl as never),
  );
}

const mean = (list: CelList) => {
  if (list.size === 0) fail("avg() of an empty list");
  return Number(sumAsDouble(list)) / list.size;
};
const sumAsDouble = (list: Iterable<unknown>) => {
  const s = sumOf(list, "avg()");
  return typeof s === "object" ? Number(s.value) : Number(s);
};

export const mathExt: CelFunc[] = [
  ...variadic("math.greatest", extreme("math.greatest", 1)),
  ...variadic("math.least", extreme("math.least", -1)),
  celFunc("math.abs", [INT], INT, (x: bigint) => {
    if (x === MIN_INT) fail("integer overflow in math.abs()");
    return x < 0n ? -x : x;
  }),
  celFunc("math.abs", [UINT], UINT, (x: CelUint) => x),
  celFunc("math.abs", [DOUBLE], DOUBLE, Math.abs),
  celFunc("math.ceil", [DOUBLE], DOUBLE, Math.ceil),
  celFunc("math.floor", [DOUBLE], DOUBLE, Math.floor),
  celFunc("math.round", [DOUBLE], DOUBLE, roundHalfAway),
  celFunc("math.trunc", [DOUBLE], DOUBLE, Math.trunc),
  celFunc("math.sign", [INT], INT, (x: bigint) => (x > 0n ? 1n : x < 0n ? -1n : 0n)),
  celFunc("math.sign", [UINT], UINT, (x: CelUint) => celUint(x.value > 0n ? 1n : 0n)),
  celFunc("math.sign", [DOUBLE], DOUBLE, (x: number) => (Number.isNaN(x) ? x : x > 0 ? 1 : x < 0 ? -1 : 0)),
  celFunc("math.sqrt", [DOUBLE], DOUBLE, Math.sqrt),
  celFunc("math.sqrt", [INT], DOUBLE, (x: bigint) => Math.sqrt(Number(x))),
  celFunc("math.sqrt", [UINT], DOUBLE, (x: CelUint) => Math.sqrt(Number(x.value))),
  celFunc("math.isNaN", [DOUBLE], BOOL, Number.isNaN),
  celFunc("math.isInf", [DOUBLE], BOOL, (x: number) => x === Infinity || x === -Infinity),
  celFunc("math.isFinite", [DOUBLE], BOOL, Number.isFinite),
  celFunc("math.bitAnd", [INT, INT], INT, (a: bigint, b: bigint) => a & b),
  celFunc("math.bitAnd", [UINT, UINT], UINT, (a: CelUint, b: CelUint) => celUint(a.value & b.value)),
  celFunc("math.bitOr", [INT, INT], INT, (a: bigint, b: bigint) => a | b),
  celFunc("math.bitOr", [UINT, UINT], UINT, (a: CelUint, b: CelUint) => celUint(a.value | b.value)),
  celFunc("math.bitXor", [INT, INT], INT, (a: bigint, b: bigint) => a ^ b),
  celFunc("math.bitXor", [UINT, UINT], UINT, (a: CelUint, b: CelUint) => celUint(a.value ^ b.value)),
  celFunc("math.bitNot", [INT], INT, (a: bigint) => ~a),
  celFunc("math.bitNot", [UINT], UINT, (a: CelUint) => celUint(MAX_UINT ^ a.value)),
  celFunc("math.bitShiftLeft", [INT, INT], INT, (a: bigint, n: bigint) => int64(a << BigInt(shiftAmount(n)))),
  celFunc("math.bitShiftLeft", [UINT, INT], UINT, (a: CelUint, n: bigint) =>
    celUint(uint64(a.value << BigInt(shiftAmount(n)))),
  ),
  // cel-go shifts an int right as unsigned: -1024 >> 3 is 2305843009213693824.
  celFunc("math.bitShiftRight", [INT, INT], INT, (a: bigint, n: bigint) =>
    int64(uint64(a) >> BigInt(shiftAmount(n))),
  ),
  celFunc("math.bitShiftRight", [UINT, INT], UINT, (a: CelUint, n: bigint) =>
    celUint(a.value >> BigInt(shiftAmount(n))),
  ),
  celFunc("math.sum", [LIST], DYN, (list: CelList) => sumOf(list, "math.sum()")),
  celFunc("math.avg", [LIST], DOUBLE, mean),
];

export { checkedInt, mean };
