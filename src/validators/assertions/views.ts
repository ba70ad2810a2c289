// The submission as CEL values, converted when read rather than all at once. CEL's own maps and
// lists (celMap over a JS Map) cost ~400 bytes per object and ~200 per array on top of the parsed
// document: a 24 MB JSON array of 1.15 million small objects took 470 MB more per run, two runs
// at once 1.1 GB (found against the built binary, issue #19). These views hold the parsed value
// and convert an element when the rule reads it; what a rule reads is charged to its budget.
// They answer the interface @bufbuild/cel reads (isCelMap/isCelList look for these symbols).
import type { CelValue } from "@bufbuild/cel";

const MAP = Symbol.for("@bufbuild/cel/map");
const LIST = Symbol.for("@bufbuild/cel/list");

/** How a parsed number becomes CEL: `int` (bigint) where `isInt` says so, else `double`. */
export type IsInt = (n: number) => boolean;

/** A parsed JSON/YAML value as CEL: scalars converted, objects and arrays wrapped. */
export function view(v: unknown, isInt: IsInt): CelValue {
  if (typeof v === "number") return (isInt(v) ? BigInt(v) : v) as CelValue;
  if (Array.isArray(v)) return new ArrayView(v, isInt) as unknown as CelValue;
  if (v !== null && typeof v === "object")
    return new ObjectView(v as Record<string, unknown>, isInt) as never;
  return v as CelValue;
}

class ObjectView {
  #keys: string[] | null = null;
  constructor(
    readonly o: Record<string, unknown>,
    readonly isInt: IsInt,
  ) {}
  private names(): string[] {
    this.#keys ??= Object.keys(this.o);
    return this.#keys;
  }
  get size(): number {
    return this.names().length;
  }
  /** Own keys only: "__proto__" or "constructor" in the data are ordinary keys. */
  get(key: unknown): CelValue | undefined {
    if (typeof key !== "string" || !Object.hasOwn(this.o, key)) return undefined;
    return view(this.o[key], this.isInt);
  }
  /** A key is present whatever its value, null included (cel-spec: has(e.f) "is a key in the map"). */
  has(key: unknown): boolean {
    return typeof key === "string" && Object.hasOwn(this.o, key);
  }
  forEach(callback: (value: CelValue, key: string, map: this) => void, thisArg?: unknown): void {
    for (const k of this.names()) callback.call(thisArg, view(this.o[k], this.isInt), k, this);
  }
  *entries(): Generator<[string, CelValue]> {
    for (const k of this.names()) yield [k, view(this.o[k], this.isInt)];
  }
  keys(): IterableIterator<string> {
    return this.names()[Symbol.iterator]();
  }
  *values(): Generator<CelValue> {
    for (const k of this.names()) yield view(this.o[k], this.isInt);
  }
  [Symbol.iterator]() {
    return this.entries();
  }
}
Object.defineProperty(ObjectView.prototype, MAP, { value: {} });

class ArrayView {
  constructor(
    readonly a: unknown[],
    readonly isInt: IsInt,
  ) {}
  get size(): number {
    return this.a.length;
  }
  get(index: number): CelValue | undefined {
    if (index < 0 || index >= this.a.length) return undefined;
    return view(this.a[index], this.isInt);
  }
  *values(): Generator<CelValue> {
    for (const x of this.a) yield view(x, this.isInt);
  }
  [Symbol.iterator]() {
    return this.values();
  }
}
Object.defineProperty(ArrayView.prototype, LIST, { value: {} });

/**
 * CSV records: one label index for the file, each record a view over its cells (the last of two
 * equal labels wins, as a map built cell by cell would have it).
 */
export function recordViews(labels: string[]): (cells: string[]) => CelValue {
  const index = new Map<string, number>();
  for (const [i, l] of labels.entries()) index.set(l, i);
  const present = (cells: string[]) => [...index].filter(([, i]) => i < cells.length).map(([l]) => l);
  return (cells) => new RecordView(index, cells, present) as never;
}

class RecordView {
  #keys: string[] | null = null;
  constructor(
    readonly index: Map<string, number>,
    readonly cells: string[],
    readonly present: (cells: string[]) => string[],
  ) {}
  private names(): string[] {
    this.#keys ??= this.present(this.cells);
    return this.#keys;
  }
  get size(): number {
    return this.names().length;
  }
  get(key: unknown): string | undefined {
    const i = typeof key === "string" ? this.index.get(key) : undefined;
    return i === undefined || i >= this.cells.length ? undefined : this.cells[i];
  }
  has(key: unknown): boolean {
    return this.get(key) !== undefined;
  }
  forEach(callback: (value: string, key: string, map: this) => void, thisArg?: unknown): void {
    for (const k of this.names()) callback.call(thisArg, this.get(k) as string, k, this);
  }
  *entries(): Generator<[string, string]> {
    for (const k of this.names()) yield [k, this.get(k) as string];
  }
  keys(): IterableIterator<string> {
    return this.names()[Symbol.iterator]();
  }
  *values(): Generator<string> {
    for (const k of this.names()) yield this.get(k) as string;
  }
  [Symbol.iterator]() {
    return this.entries();
  }
}
Object.defineProperty(RecordView.prototype, MAP, { value: {} });
