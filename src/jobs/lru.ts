// A tiny least-recently-used map. Both sides of the pool use one with the same capacity and touch
// keys in the same order (every step of a job, in step order), so the pool's view of what a worker
// has cached stays close to the truth; `missing_config` covers the rest.
export class Lru<K, V> {
  readonly #map = new Map<K, V>();
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
    if (!this.#map.has(key)) return undefined;
    const value = this.#map.get(key) as V;
    // A Map iterates in insertion order: re-inserting moves the key to the "newest" end.
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.capacity) this.#map.delete(this.#map.keys().next().value as K);
  }

  clear(): void {
    this.#map.clear();
  }
}
