// Exact in-memory caches for the rows every request reads (token, user, org access, token
// policies, workflow). Triggers (migration 5) bump one counter inside every transaction that
// writes those tables — from this process, another node, or the `assay` CLI — so a cache that
// reads the counter before each use and drops everything when it moved is never stale. The
// drivers read it at most once per turn of the event loop (src/db/sqlite.ts explains why that is
// exact): ~3 µs on SQLite, one round trip on PostgreSQL, where the lookups it replaces cost
// 15–20 µs and several round trips per request.
import { Lru } from "../jobs/lru.ts";
import type { Db, Program } from "./program.ts";

/**
 * A bounded LRU whose entries are valid for one generation. A value loaded after the generation
 * was read is stored under it, so a write racing the load only makes the entry short-lived,
 * never stale. Generations only move forward: a read that resolves late (PostgreSQL) with an
 * older value neither empties the cache nor stores what it loaded.
 */
export class GenerationCache<K, V> {
  readonly #entries: Lru<K, V>;
  #gen = Number.NEGATIVE_INFINITY;

  constructor(
    readonly db: Db,
    capacity: number,
  ) {
    this.#entries = new Lru(capacity);
  }

  get size(): number {
    return this.#entries.size;
  }

  #advance(g: number): number {
    if (g > this.#gen) {
      this.#entries.clear();
      this.#gen = g;
    }
    return g;
  }

  /**
   * The generation to use, emptying the cache when it moved. `known`: a generation this request
   * already read (at authentication), which saves the read: entries of that or a later
   * generation answer as of the request's start.
   */
  sync(known?: number): number | Promise<number> {
    if (known !== undefined) return known <= this.#gen ? this.#gen : this.#advance(known);
    const g = this.db.generation();
    return typeof g === "number" ? this.#advance(g) : g.then((v) => this.#advance(v));
  }

  /** The entry for key; call sync() first (once per use). */
  peek(key: K): V | undefined {
    return this.#entries.get(key);
  }

  /** Stores a value loaded after sync() returned gen; ignored unless gen is still current. */
  put(gen: number, key: K, value: V): void {
    if (gen === this.#gen) this.#entries.set(key, value);
  }

  /** The cached value, or the program's result cached when not null (a miss is never remembered). */
  async get(key: K, load: () => Program<V | null>, known?: number): Promise<V | null> {
    const s = this.sync(known);
    const gen = typeof s === "number" ? s : await s;
    // An entry of a later generation than this request's is fresher than it needs: served.
    const hit = this.#entries.get(key);
    if (hit !== undefined) return hit;
    const value = await this.db.exec(load());
    if (value !== null) this.put(gen, key, value);
    return value;
  }
}

/** Cached values are shared between requests: frozen so that no caller can change them. */
export function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}
