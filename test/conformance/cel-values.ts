// CEL values in one comparable form: [type, value] pairs, for the suite's expected `Value`
// messages and for what an evaluation returns. Doubles compare as numbers (NaN equal to NaN, so a
// NaN result matches an expected NaN); maps compare without regard to entry order.
import { isCelList, isCelMap, isCelType, isCelUint } from "@bufbuild/cel";
import type { Value } from "@bufbuild/cel-spec/cel/expr/value_pb.js";

export type Canon = [string, unknown?];

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

export function expected(v: Value): Canon {
  const k = v.kind;
  switch (k.case) {
    case "nullValue":
      return ["null"];
    case "boolValue":
      return ["bool", k.value];
    case "int64Value":
      return ["int", String(k.value)];
    case "uint64Value":
      return ["uint", String(k.value)];
    case "doubleValue":
      return ["double", k.value];
    case "stringValue":
      return ["string", k.value];
    case "bytesValue":
      return ["bytes", hex(k.value)];
    case "listValue":
      return ["list", k.value.values.map(expected)];
    case "mapValue":
      return ["map", k.value.entries.map((e) => [expected(e.key as Value), expected(e.value as Value)])];
    case "typeValue":
      return ["type", k.value];
    default:
      return ["unsupported", k.case];
  }
}

export function canonical(v: unknown): Canon {
  if (v === null) return ["null"];
  if (typeof v === "boolean") return ["bool", v];
  if (typeof v === "bigint") return ["int", String(v)];
  if (isCelUint(v)) return ["uint", String(v.value)];
  if (typeof v === "number") return ["double", v];
  if (typeof v === "string") return ["string", v];
  if (v instanceof Uint8Array) return ["bytes", hex(v)];
  if (isCelList(v)) return ["list", [...v].map(canonical)];
  if (isCelMap(v)) return ["map", [...v.entries()].map(([a, b]) => [canonical(a), canonical(b)])];
  if (isCelType(v)) return ["type", v.name];
  return ["unsupported", String(v)];
}

export function same(a: Canon, b: Canon): boolean {
  if (a[0] !== b[0]) return false;
  switch (a[0]) {
    case "double":
      return a[1] === b[1] || (Number.isNaN(a[1]) && Number.isNaN(b[1]));
    case "list": {
      const x = a[1] as Canon[];
      const y = b[1] as Canon[];
      return x.length === y.length && x.every((e, i) => same(e, y[i]));
    }
    case "map": {
      const x = a[1] as Array<[Canon, Canon]>;
      const y = b[1] as Array<[Canon, Canon]>;
      return x.length === y.length && x.every(([k, v]) => y.some(([k2, v2]) => same(k, k2) && same(v, v2)));
    }
    default:
      return JSON.stringify(a) === JSON.stringify(b);
  }
}
