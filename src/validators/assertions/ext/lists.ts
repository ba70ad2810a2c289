// List functions: cel-go's lists extension (lists.range, slice, flatten, distinct, reverse, sort,
// sortBy), Kubernetes' list library (sum, min, max, isSorted, indexOf, lastIndexOf) plus avg(),
// and cel-go's sets extension (sets.contains, sets.equivalent, sets.intersects).
// Functions that build a list charge its size before building it (meter.ts).
import { fail } from "../errors.ts";
import {
  type CelFunc,
  type CelList,
  CelScalar,
  type CelValue,
  celFunc,
  celMethod,
  isCelList,
  listType,
} from "@bufbuild/cel";
import { charge } from "../meter.ts";
import { celCompare, celEquals, equalityKey } from "./equality.ts";
import { mean } from "./math.ts";
import { sumOf } from "./numbers.ts";

const { BOOL, DYN, INT } = CelScalar;
const LIST = listType(DYN);

function index(n: bigint, size: number, what: string): number {
  if (n < 0n || n > BigInt(size)) fail(`${what}: index ${n} is out of range for a list of ${size}`);
  return Number(n);
}

/** One comparison of two values without a hash key: charged, since there may be n² of them. */
function chargedEquals(a: unknown, b: unknown): boolean {
  charge(1);
  return celEquals(a, b);
}

/** Elements of `list` with equal ones (CEL equality) dropped after their first. */
function distinct(list: CelList): CelValue[] {
  const keys = new Set<string>();
  const out: CelValue[] = [];
  for (const v of list) {
    const key = equalityKey(v);
    if (key !== null) {
      if (keys.has(key)) continue;
      keys.add(key);
    } else {
      // Lists, maps and NaN: compared one by one with the kept values that have no key.
      if (out.some((w) => equalityKey(w) === null && chargedEquals(v, w))) continue;
    }
    out.push(v);
  }
  return out;
}

function flatten(list: CelList, depth: bigint): CelValue[] {
  if (depth < 0n) fail("flatten() depth must not be negative");
  const out: CelValue[] = [];
  const walk = (l: CelList, d: bigint) => {
    for (const v of l) {
      charge(1);
      if (d > 0n && isCelList(v)) walk(v, d - 1n);
      else out.push(v);
    }
  };
  walk(list, depth);
  return out;
}

function sorted(values: CelValue[], keys: CelValue[], what: string): CelValue[] {
  charge(Math.ceil(values.length * Math.log2(values.length + 1)));
  const order = values.map((_, i) => i);
  order.sort((i, j) => celCompare(keys[i], keys[j], what) || i - j);
  return order.map((i) => values[i]);
}

function extreme(list: CelList, sign: 1 | -1, what: string): CelValue {
  if (list.size === 0) fail(`${what} of an empty list`);
  let best: CelValue = null;
  let first = true;
  for (const v of list) {
    if (first || celCompare(v, best, what) * sign > 0) best = v;
    first = false;
  }
  return best;
}

function position(list: CelList, value: unknown, last: boolean): bigint {
  let found = -1;
  let i = 0;
  for (const v of list) {
    if (celEquals(v, value)) {
      found = i;
      if (!last) break;
    }
    i++;
  }
  return BigInt(found);
}

/** Membership in `list` by CEL equality: hashed for scalars, one by one for the rest. */
function membership(list: CelList): (v: unknown) => boolean {
  const keys = new Set<string>();
  const others: unknown[] = [];
  for (const v of list) {
    const key = equalityKey(v);
    if (key === null) others.push(v);
    else keys.add(key);
  }
  return (v) => {
    const key = equalityKey(v);
    return key !== null ? keys.has(key) : others.some((w) => chargedEquals(v, w));
  };
}

/** Does `a` hold every element of `b`? */
function containsAll(a: CelList, b: CelList): boolean {
  const has = membership(a);
  for (const v of b) if (!has(v)) return false;
  return true;
}

export const listsExt: CelFunc[] = [
  celFunc("lists.range", [INT], LIST, (n: bigint) => {
    const size = n < 0n ? 0 : Number(n);
    charge(size);
    return Array.from({ length: size }, (_, i) => BigInt(i));
  }),
  celMethod("slice", LIST, [INT, INT], LIST, function (this: CelList, start: bigint, end: bigint) {
    const from = index(start, this.size, "slice()");
    const to = index(end, this.size, "slice()");
    if (from > to) fail(`slice(${start}, ${end}): the start is after the end`);
    charge(to - from);
    return Array.from({ length: to - from }, (_, i) => this.get(from + i) as CelValue);
  }),
  celMethod("flatten", LIST, [], LIST, function (this: CelList) {
    return flatten(this, 1n);
  }),
  celMethod("flatten", LIST, [INT], LIST, function (this: CelList, depth: bigint) {
    return flatten(this, depth);
  }),
  celMethod("distinct", LIST, [], LIST, function (this: CelList) {
    return distinct(this);
  }),
  celMethod("reverse", LIST, [], LIST, function (this: CelList) {
    return [...this].reverse();
  }),
  celMethod("sort", LIST, [], LIST, function (this: CelList) {
    const values = [...this];
    return sorted(values, values, "sort()");
  }),
  celFunc("@sortByAssociatedKeys", [LIST, LIST], LIST, (list: CelList, keys: CelList) =>
    sorted([...list], [...keys], "sortBy()"),
  ),
  celMethod("isSorted", LIST, [], BOOL, function (this: CelList) {
    let prev: unknown;
    let i = 0;
    for (const v of this) {
      if (i++ > 0 && celCompare(prev, v, "isSorted()") > 0) return false;
      prev = v;
    }
    return true;
  }),
  celMethod("indexOf", LIST, [DYN], INT, function (this: CelList, v: unknown) {
    return position(this, v, false);
  }),
  celMethod("lastIndexOf", LIST, [DYN], INT, function (this: CelList, v: unknown) {
    return position(this, v, true);
  }),
  celMethod("sum", LIST, [], DYN, function (this: CelList) {
    return sumOf(this, "sum()");
  }),
  celMethod("avg", LIST, [], CelScalar.DOUBLE, function (this: CelList) {
    return mean(this);
  }),
  celMethod("min", LIST, [], DYN, function (this: CelList) {
    return extreme(this, -1, "min()");
  }),
  celMethod("max", LIST, [], DYN, function (this: CelList) {
    return extreme(this, 1, "max()");
  }),
  celFunc("sets.contains", [LIST, LIST], BOOL, containsAll),
  celFunc(
    "sets.equivalent",
    [LIST, LIST],
    BOOL,
    (a: CelList, b: CelList) => containsAll(a, b) && containsAll(b, a),
  ),
  celFunc("sets.intersects", [LIST, LIST], BOOL, (a: CelList, b: CelList) => {
    const has = membership(a);
    for (const v of b) if (has(v)) return true;
    return false;
  }),
];
