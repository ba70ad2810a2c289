// A tiny least-recently-used map. Both sides of the pool use one with the same capacity and touch
// keys in the same order (every step of a job, in step order), so the pool's view of what a worker
// has cached stays close to the truth; `missing_config` covers the rest.
export class Lru<K, V> {
  readonly #map = new Map<K, V>();
  // The key at the "newest" end: touching it again needs no re-insert. The caches consulted on
  // every request (token, org access, workflow) hit the same key run after run, and a re-insert
  // is two Map operations and a fresh entry for the collector each time.
  #newest: K | undefined = undefined;
  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError("Lru capacity must be at least 1");
  }

  get size(): number {
    return this.#map.size;
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Returns the value and marks the key as most recently used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined && !this.#map.has(key)) return undefined;
    if (key !== this.#newest) {
      // A Map iterates in insertion order: re-inserting moves the key to the "newest" end.
      this.#map.delete(key);
      this.#map.set(key, value as V);
      this.#newest = key;
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    this.#newest = key;
    if (this.#map.size > this.capacity) this.#map.delete(this.#map.keys().next().value as K);
  }

  clear(): void {
    this.#map.clear();
    this.#newest = undefined;
  }
}
