// The one CEL environment of every assertion: @bufbuild/cel's standard library with Assay's
// corrections (ext/std.ts) and extensions (strings, math, lists, sets), every function wrapped
// so that it is charged to the evaluation's budget (meter.ts), plus the internal functions the
// evaluation rewrites call (rewrite.ts). Internal names start with `@`, which no source can spell.
import {
  type CelEnv,
  type CelFunc,
  type CelList,
  CelScalar,
  type CelValue,
  celEnv,
  celFunc,
  celList,
  celMethod,
  isCelError,
  listType,
} from "@bufbuild/cel";
import { fail } from "./errors.ts";
import { listsExt } from "./ext/lists.ts";
import { mathExt } from "./ext/math.ts";
import { stdFixes } from "./ext/std.ts";
import { encodersExt, stringsExt } from "./ext/strings.ts";
import { timeFixes } from "./ext/time.ts";
import { chargeCall } from "./costs.ts";
import { buildCost, charge, checkLength, walkCost } from "./meter.ts";

const { DYN, INT } = CelScalar;
const LIST = listType(DYN);

/** Types whose values have no size: a function of only these needs no meter (see metered). */
const SIZELESS = new Set([
  "int",
  "uint",
  "double",
  "bool",
  "null_type",
  "type",
  "google.protobuf.Timestamp",
  "google.protobuf.Duration",
]);

/**
 * A function charged 1 per call plus the size of what it walks and what it builds. Functions that
 * only take and give sizeless values (arithmetic, comparisons of numbers) are left as they are:
 * they take constant time, and a comprehension step already pays for each node of its body.
 */
function metered(f: CelFunc): CelFunc {
  const types = [...(f.target ? [f.target] : []), ...f.arguments, f.result];
  if (types.every((t) => SIZELESS.has(t.name))) return f;
  const impl = function (this: CelValue | undefined, ...args: CelValue[]) {
    chargeCall(f.name, this, args);
    const result = f.call(0, this, args);
    if (result === undefined) fail(`no overload of ${f.name} takes these arguments`);
    if (isCelError(result)) throw result;
    if (result !== this && !args.includes(result)) {
      if (typeof result === "string" || result instanceof Uint8Array) checkLength(result.length, "string");
      charge(buildCost(result));
    }
    return result;
  };
  return f.target
    ? celMethod(f.name, f.target, f.arguments, f.result, impl as never)
    : celFunc(f.name, f.arguments, f.result, impl as never);
}

/** Lists that map() and filter() append to: each evaluation of the macro starts a new one. */
const growing = new WeakMap<CelList, CelValue[]>();

const internal: CelFunc[] = [
  // A comprehension's range: walking it costs its size (it is copied to an array first).
  celFunc("@range", [DYN], DYN, (range: CelValue) => {
    charge(walkCost(range));
    return range;
  }),
  // A comprehension's loop condition, evaluated once per step: the step's static cost.
  celFunc("@tick", [DYN, INT], DYN, (condition: CelValue, units: bigint) => {
    charge(Number(units));
    return condition;
  }),
  // A list or map literal (rewrite.ts): what it allocates, charged each time it is built.
  celFunc("@build", [DYN, INT], DYN, (literal: CelValue, units: bigint) => {
    charge(Number(units));
    return literal;
  }),
  celFunc("@newlist", [], LIST, () => {
    const items: CelValue[] = [];
    const list = celList(items);
    growing.set(list, items);
    return list;
  }),
  // `@result + [x]` copied nothing but nested one level deeper per step, so map() over 100,000
  // elements took 1.8 s and a second map() over its result overflowed the stack.
  celFunc("@append", [LIST, DYN], LIST, (list: CelList, item: CelValue) => {
    const items = growing.get(list);
    if (items === undefined) fail("internal: not a growing list");
    items.push(item);
    return list;
  }),
];

const extensions = [...stdFixes, ...timeFixes, ...stringsExt, ...encodersExt, ...mathExt, ...listsExt];

function build(): CelEnv {
  const all = [...celEnv({ funcs: extensions }).funcs];
  return celEnv({ funcs: [...all.map(metered), ...internal] });
}

export const env: CelEnv = build();

const byName = new Map<string, CelFunc[]>();

/** Every function a rule may call, by name (for the save-time checker). */
export function functionsNamed(name: string): CelFunc[] {
  let funcs = byName.get(name);
  if (funcs === undefined) {
    funcs = [...(env.funcs.find(name) ?? [])];
    byName.set(name, funcs);
  }
  return funcs;
}
