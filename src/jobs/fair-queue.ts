// The pool's waiting jobs, one FIFO per organization, and the rule that picks the next one: fair
// across orgs, so one org's backlog cannot hold every worker while another org's run waits behind
// it (docs/execution.md, "Fairness across organizations"). Pure: the pool says how many jobs each
// org has on its workers.

/** An org's key; jobs submitted without one share a single org. */
export type OrgKey = string | number;

/**
 * Orgs whose last turn is remembered, far more than one server's active orgs. Orgs come and go
 * (an org deleted stays in the map otherwise): the least recently served are forgotten first,
 * and a forgotten org ranks as served before any remembered one, which it was.
 */
export const SERVED_KEPT = 10_000;

export class FairQueue<T extends { org: OrgKey }> {
  readonly #byOrg = new Map<OrgKey, T[]>();
  /** When each org last had a job taken: the least recently served wins a tie. */
  readonly #served = new Map<OrgKey, number>();
  #turn = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Orgs whose last turn is remembered (for tests of its bound). */
  get servedKept(): number {
    return this.#served.size;
  }

  push(item: T): void {
    const q = this.#byOrg.get(item.org);
    if (q) q.push(item);
    else this.#byOrg.set(item.org, [item]);
    this.#size++;
  }

  /** Back at the head of its org's line (a job handed back by a worker that never started it). */
  unshift(item: T): void {
    const q = this.#byOrg.get(item.org);
    if (q) q.unshift(item);
    else this.#byOrg.set(item.org, [item]);
    this.#size++;
  }

  remove(item: T): boolean {
    const q = this.#byOrg.get(item.org);
    const at = q ? q.indexOf(item) : -1;
    if (!q || at < 0) return false;
    q.splice(at, 1);
    if (!q.length) this.#byOrg.delete(item.org);
    this.#size--;
    return true;
  }

  /**
   * The job to start next, without taking it: the oldest job of the org with the fewest jobs
   * on workers (`active`); among those, the org served least recently (then the one that queued
   * first). So an org with nothing running goes before another org's 2nd, 3rd… job.
   */
  peek(active: (org: OrgKey) => number): T | undefined {
    let best: T | undefined;
    let bestActive = 0;
    let bestServed = 0;
    for (const [org, q] of this.#byOrg) {
      const a = active(org);
      const s = this.#served.get(org) ?? -1;
      if (!best || a < bestActive || (a === bestActive && s < bestServed)) {
        best = q[0];
        bestActive = a;
        bestServed = s;
      }
    }
    return best;
  }

  /** Takes `item` (from peek) out of the queue and counts its org as just served. */
  take(item: T): void {
    // Kept for orgs with nothing left queued too, up to SERVED_KEPT. Deleted and set again, so
    // that the map's order is the order of service and its first key the one to forget.
    if (!this.remove(item)) return;
    this.#served.delete(item.org);
    this.#served.set(item.org, ++this.#turn);
    if (this.#served.size > SERVED_KEPT) this.#served.delete(this.#served.keys().next().value as OrgKey);
  }

  /** Every job, and empties the queue. */
  drain(): T[] {
    const all = [...this.#byOrg.values()].flat();
    this.#byOrg.clear();
    this.#size = 0;
    return all;
  }
}
