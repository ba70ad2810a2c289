// Exact in-memory caches for the rows every request reads (token, user, org access, token
// policies, workflow). Triggers (migration 0005) bump one counter inside every transaction that
// writes those tables — from this process or another one, like the `assay` CLI — so a cache that
// reads the counter before each use and drops everything when it moved is never stale. Reading it
// costs one indexed row (~3 µs); the lookups it replaces cost 15–20 µs per request.
import type { Database } from "bun:sqlite";
import { Lru } from "../jobs/lru.ts";

/** Reads the current generation: one prepared single-row SELECT. */
export type Generation = () => number;

const readers = new WeakMap<Database, Generation>();

/** The generation reader of a connection (one prepared statement, shared by its stores). */
export function generationOf(db: Database): Generation {
  let read = readers.get(db);
  if (!read) {
    const sel = db.prepare<{ value: number }, []>("SELECT value FROM cache_generation WHERE id = 1");
    // One read per turn of the event loop while this connection writes nothing: the requests
    // handled in one turn arrived together, so none can follow from another's answer (a
    // revocation's response leaves in its turn at the earliest; a request sent after it is read in
    // a later one). A write of our own in between (a PATCH reading back what it wrote) forces a
    // fresh read: total_changes() counts this connection's writes and, touching no table, costs
    // no read transaction; the generation read does, ~10 µs under load (docs/decisions.md).
    const changes = db.prepare<{ n: number }, []>("SELECT total_changes() AS n");
    let turn: number | null = null;
    let turnChanges = -1;
    const clear = () => {
      turn = null;
    };
    read = () => {
      const n = changes.get()!.n;
      if (turn === null || n !== turnChanges) {
        if (turn === null) setImmediate(clear);
        turn = sel.get()!.value;
        turnChanges = n;
      }
      return turn;
    };
    readers.set(db, read);
  }
  return read;
}

/**
 * A bounded LRU whose entries are valid for one generation. `sync()` reads the generation and
 * empties the cache when it moved; a value loaded after that read is stored under it, so a write
 * racing the load only makes the entry short-lived, never stale.
 */
export class GenerationCache<K, V> {
  readonly #entries: Lru<K, V>;
  #gen = Number.NaN;

  constructor(
    readonly generation: Generation,
    capacity: number,
  ) {
    this.#entries = new Lru(capacity);
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Reads the generation, drops every entry if it changed, and returns it. `known`: a generation
   * this request already read (at authentication), which saves the read: entries of that or a
   * later generation answer as of the request's start.
   */
  sync(known?: number): number {
    if (known !== undefined && known <= this.#gen) return this.#gen;
    const g = known ?? this.generation();
    if (g !== this.#gen) {
      this.#entries.clear();
      this.#gen = g;
    }
    return g;
  }

  /** The entry for key; call sync() first (once per use). */
  peek(key: K): V | undefined {
    return this.#entries.get(key);
  }

  /** Stores a value loaded after sync() returned gen; ignored if the generation moved since. */
  put(gen: number, key: K, value: V): void {
    if (gen === this.#gen) this.#entries.set(key, value);
  }

  /** The cached value, or load() cached when not null (a miss is never remembered). */
  get(key: K, load: () => V | null, known?: number): V | null {
    const gen = this.sync(known);
    const hit = this.#entries.get(key);
    if (hit !== undefined) return hit;
    const value = load();
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
