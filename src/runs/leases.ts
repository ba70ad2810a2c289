// Claims on running runs (several nodes on one database, docs/scaling.md). A node that executes a
// queued run holds it until lease_until; while the run executes the node renews its claims every
// third of a lease, in one statement for all of them. If it dies (or cannot reach the database for
// a whole lease), it stops renewing, and another node's recovery pass puts the run back in the
// queue once the lease has run out — the attempt counts, so max_attempts still ends a run that
// keeps killing its servers. A node that finds a claim gone (taken over) stops that job: its
// result would be refused anyway (the final write is conditional on the claim). A lease is set,
// renewed and judged on the database's clock (src/db/clock.ts): the claim says how long, not until when.
import type { Logger } from "../lib/log.ts";
import type { Claim, RunStore } from "./store.ts";

export interface LeaseOptions {
  node: string;
  leaseMs: number;
  /** Run recovery of expired claims periodically (several nodes: PostgreSQL). */
  recover: boolean;
}

export function createLeaseKeeper(
  store: RunStore,
  log: Logger,
  o: LeaseOptions,
  hooks: {
    /** The runs this node holds a claim on right now. */
    held(): string[];
    /** Claims found gone: stop those jobs. */
    lost(ids: string[]): void;
    /** One recovery pass over expired claims (the executor's: webhook events, metrics). */
    recover(): Promise<{ requeued: number; failed: number }>;
  },
) {
  let renewTimer: Timer | null = null;
  let recoverTimer: Timer | null = null;
  const claim = (): Claim => ({ node: o.node, leaseMs: o.leaseMs });

  async function renew() {
    const ids = hooks.held();
    if (!ids.length) return;
    try {
      const kept = await store.renew(ids, claim());
      const gone = ids.filter((id) => !kept.has(id) && hooks.held().includes(id));
      if (gone.length) {
        log.warn("claims on running runs were taken over; their jobs stop here", { runs: gone.length });
        hooks.lost(gone);
      }
    } catch (e) {
      // The database is away: the claims run out unless it is back within the lease.
      log.warn("could not renew run claims", { error: String((e as Error)?.message ?? e) });
    }
  }

  async function recover() {
    try {
      const r = await hooks.recover();
      if (r.requeued || r.failed)
        log.info("runs of a stopped node recovered", { requeued: r.requeued, failed: r.failed });
    } catch (e) {
      log.warn("recovery of expired run claims failed", { error: String((e as Error)?.message ?? e) });
    }
  }

  return {
    claim,
    start() {
      renewTimer = setInterval(() => void renew(), Math.max(100, Math.floor(o.leaseMs / 3)));
      renewTimer.unref?.();
      if (o.recover) {
        recoverTimer = setInterval(() => void recover(), Math.max(200, Math.floor(o.leaseMs / 2)));
        recoverTimer.unref?.();
      }
    },
    stop() {
      if (renewTimer) clearInterval(renewTimer);
      if (recoverTimer) clearInterval(recoverTimer);
    },
    /** For tests: one renewal / recovery pass now. */
    renew,
    recover,
  };
}
