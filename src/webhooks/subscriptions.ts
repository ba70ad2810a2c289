// Which webhooks an org's runs notify: read inside the transaction of every run's final state
// (the outbox, src/webhooks/outbox-store.ts). Most orgs have none and the answer changes only
// when a webhook, its org or a workflow is written, so on SQLite it is kept in memory under the
// cache generation (src/db/generation.ts; migration 14 makes webhook writes bump it).
//
// Exact by construction: the generation is read INSIDE the final transaction, once per
// transaction. A SQLite transaction on the one writer connection sees one snapshot, and its writes
// apply to that snapshot, so whatever another process (the CLI) or this one committed before is
// seen, and nothing can commit between the read and the run's commit. The programs that share a
// group commit (src/runs/batch.ts) write runs, submissions and their outbox rows, never the tables
// that bump the generation, so one read serves the whole group: a run costs no statement here
// (was one join per run, ~2 µs and a program step: docs/benchmarks.md, ninth pass).
//
// PostgreSQL reads the webhooks in the transaction, once per org and transaction (`once`,
// src/db/program.ts): a group commit's final runs are one program (src/runs/final-rows.ts), and
// its read is made after every run of the group was submitted, so a webhook committed before a
// run's request is seen by that run. A generation read would be a round trip of its own, which
// is what the lookup costs. The read locks the rows it returns (FOR KEY SHARE, what the outbox
// row's foreign key takes anyway): a deletion in progress is waited for and its webhook left out,
// and none can commit before the outbox rows do. Unlocked, a webhook deleted between the read and
// the insert failed the insert, and with it the run's final write: twice in a row (the group, then
// the write alone) left the run `running` for as long as its node lived (2026-11-29).
import type { Db, Program } from "../db/program.ts";
import { all, get, once } from "../db/program.ts";
import { GenerationCache, deepFreeze } from "../db/generation.ts";
import type { SqliteDb } from "../db/sqlite.ts";
import type { Read } from "../db/writer-protocol.ts";
import { parseJson } from "../db/util.ts";

export interface Subscription {
  id: number;
  events: readonly string[];
  /** Empty: every workflow of the org. */
  workflowSlugs: readonly string[];
}

// CAST keeps the plan: with a bare `?` in a join SQLite re-plans on each execution
// (41 µs → 1.5 µs, measured; see src/runs/store.ts).
const ACTIVE =
  "SELECT w.id, w.events, w.workflow_slugs FROM webhooks w JOIN orgs o ON o.id = w.org_id WHERE w.org_id = CAST(? AS INTEGER) AND w.is_active = 1 AND o.status = 'active' AND o.deleted_at IS NULL";
const GENERATION = "SELECT value FROM cache_generation WHERE id = 1";
/** Orgs whose answer is kept (an LRU): far more than one server's active orgs. */
const CAPACITY = 10_000;

/**
 * PostgreSQL: the webhooks and their org held until the transaction ends (the header says why).
 * The org's row too: a suspension or deletion (src/orgs/store.ts, update: its row FOR UPDATE)
 * waits for a run's end that read the org as active, and a run's end that comes while one is
 * under way waits for it and then finds no webhook. Without it, node a answered 204 to the
 * deletion while node b's run end, having read the org as active, was still to commit its
 * deliveries: a run that ended in a deleted org notified it after a restore (2026-11-29,
 * test/nodes-races.test.ts). KEY SHARE, as a run's foreign key takes it: a rename's FOR NO KEY
 * UPDATE does not wait for it.
 */
const ACTIVE_HELD = `${ACTIVE} FOR KEY SHARE OF w, o`;

function* load(orgId: number, sql = ACTIVE): Program<Subscription[]> {
  const rows = yield* all<{ id: number; events: string; workflow_slugs: string }>(sql, orgId);
  return rows.map((r) => ({
    id: r.id,
    events: parseJson<string[]>(r.events, []),
    workflowSlugs: parseJson<string[]>(r.workflow_slugs, []),
  }));
}

export interface Subscriptions {
  of(orgId: number): Program<readonly Subscription[]>;
  /**
   * For the writer thread (src/db/writer.ts): when the cache says, as of the generation read now,
   * that the org has no active webhook, that read (to be repeated inside the thread's
   * transaction); null when it has some, or when the cache does not know.
   */
  quiet(orgId: number): Read[] | null;
  /**
   * Inside a transaction, synchronously: true when `of` already read the generation in this very
   * transaction and the org has no active webhook — what `of` would answer, without its program.
   * False when not known (PostgreSQL always): call `of`.
   */
  idle(orgId: number): boolean;
}

export function createSubscriptions(db: Db): Subscriptions {
  // PostgreSQL: read once per transaction and org (a group commit's runs share the read).
  if (db.dialect !== "sqlite")
    return {
      of: (orgId) => once(`webhooks:${orgId}`, () => load(orgId, ACTIVE_HELD)),
      quiet: () => null,
      idle: () => false,
    };
  const raw = (db as SqliteDb).raw;
  const cache = new GenerationCache<number, readonly Subscription[]>(db, CAPACITY);
  /** The transaction whose generation was read (db.stats counts them), and that generation. */
  let tx = -1;
  let gen = 0;
  return {
    quiet(orgId) {
      // The generation as this turn read it (one read per turn, src/db/sqlite.ts): if another
      // connection moved it since, the thread's read differs and the run goes to the main one.
      const g = (db as SqliteDb).generation();
      cache.sync(g);
      const hit = cache.peek(orgId);
      if (!hit || hit.length) return null;
      return [{ sql: GENERATION, params: [], expect: JSON.stringify({ value: g }) }];
    },
    idle(orgId) {
      if (db.stats.transactions !== tx || !raw.inTransaction) return false;
      const hit = cache.peek(orgId);
      return hit !== undefined && hit.length === 0;
    },
    /** The active webhooks of an org's active, undeleted org; run inside a transaction. */
    *of(orgId: number): Program<readonly Subscription[]> {
      // Outside a transaction nothing holds the snapshot: read the generation every time.
      if (db.stats.transactions !== tx || !raw.inTransaction) {
        const g = yield* get<{ value: number }>(GENERATION);
        tx = raw.inTransaction ? db.stats.transactions : -1;
        gen = cache.sync(Number(g?.value ?? 0)) as number;
      }
      const hit = cache.peek(orgId);
      if (hit) return hit;
      const subs = deepFreeze(yield* load(orgId));
      cache.put(gen, orgId, subs);
      return subs;
    },
  };
}
