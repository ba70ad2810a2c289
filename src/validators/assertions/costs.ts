// What a call of a standard or extension function is charged before it runs (meter.ts): 1, plus
// the size of what it walks. Equality and `in` may walk nested lists and maps, so they are
// charged by the elements they can reach, counted as they are charged (the counting stops when
// the budget does). `+` of strings and bytes is checked against the size limit before it builds.
import { type CelValue, isCelList, isCelMap } from "@bufbuild/cel";
import { charge, checkLength, walkCost } from "./meter.ts";

/** The elements and entries reachable from `v`, charged as they are counted. */
function chargeDeep(v: unknown): number {
  if (!isCelList(v) && !isCelMap(v)) return 1;
  let n = 1;
  charge(v.size);
  for (const x of isCelList(v) ? v : v.values()) if (isCelList(x) || isCelMap(x)) n += chargeDeep(x);
  return n + v.size;
}

const collection = (v: unknown) => isCelList(v) || isCelMap(v);

/** Units a call costs before it runs (its arguments' sizes; see the file's comment). */
function unitsOf(name: string, target: CelValue | undefined, args: CelValue[]): number {
  if (name === "dyn" || name === "type") return 1;
  // Stored sizes: a list's, a map's, bytes'. A string's is counted in code points.
  if (name === "size") {
    const v = target ?? args[0];
    return 1 + (typeof v === "string" ? walkCost(v) : 0);
  }
  if (name === "_==_" || name === "_!=_") {
    const [a, b] = args;
    // Equal sizes and not the same value: the comparison may visit every nested element.
    if (
      collection(a) &&
      collection(b) &&
      a !== b &&
      (a as { size: number }).size === (b as { size: number }).size
    )
      chargeDeep(a);
    return 1 + walkCost(a) + walkCost(b);
  }
  if (name === "@in") {
    const [x, range] = args;
    if (isCelMap(range)) return 1;
    // Each element is compared with x: by value for scalars, element by element for collections.
    if (collection(x) && isCelList(range)) for (const _ of range) chargeDeep(x);
    return 1 + walkCost(range);
  }
  let units = 1 + (target === undefined ? 0 : walkCost(target));
  for (const a of args) units += walkCost(a);
  return units;
}

export function chargeCall(name: string, target: CelValue | undefined, args: CelValue[]): void {
  charge(unitsOf(name, target, args));
  if (name === "_+_") {
    const [a, b] = args;
    if (typeof a === "string" && typeof b === "string") checkLength(a.length + b.length, "string");
    if (a instanceof Uint8Array && b instanceof Uint8Array) checkLength(a.length + b.length, "bytes value");
  }
}
