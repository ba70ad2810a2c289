// The pick order of the pool's waiting jobs (src/jobs/fair-queue.ts): fair across orgs, FIFO
// within one.
import { describe, expect, test } from "bun:test";
import { FairQueue, type OrgKey, SERVED_KEPT } from "../../../src/jobs/fair-queue.ts";

type Job = { org: OrgKey; name: string };
const job = (org: OrgKey, name: string): Job => ({ org, name });

/** Takes every job in pick order, counting each taken job as running for its org. */
function order(q: FairQueue<Job>, running: Record<string, number> = {}): string[] {
  const active = new Map<OrgKey, number>(Object.entries(running));
  const out: string[] = [];
  for (let j = q.peek((o) => active.get(o) ?? 0); j; j = q.peek((o) => active.get(o) ?? 0)) {
    q.take(j);
    active.set(j.org, (active.get(j.org) ?? 0) + 1);
    out.push(j.name);
  }
  return out;
}

describe("FairQueue", () => {
  test("one org: first in, first out", () => {
    const q = new FairQueue<Job>();
    for (const n of ["a1", "a2", "a3"]) q.push(job("a", n));
    expect(order(q)).toEqual(["a1", "a2", "a3"]);
    expect(q.size).toBe(0);
  });

  test("takes turns across orgs, whatever order the jobs came in", () => {
    const q = new FairQueue<Job>();
    for (const n of ["a1", "a2", "a3", "b1", "b2", "c1"]) q.push(job(n[0], n));
    expect(order(q)).toEqual(["a1", "b1", "c1", "a2", "b2", "a3"]);
  });

  test("an org with nothing running goes before an org's next job", () => {
    const q = new FairQueue<Job>();
    for (const n of ["a2", "a3", "b1"]) q.push(job(n[0], n));
    expect(order(q, { a: 1 })).toEqual(["b1", "a2", "a3"]);
  });

  test("on a tie, the org served least recently", () => {
    const q = new FairQueue<Job>();
    q.push(job("a", "a1"));
    q.take(q.peek(() => 0)!);
    q.push(job("a", "a2"));
    q.push(job("b", "b1"));
    expect(q.peek(() => 0)?.name).toBe("b1");
  });

  test("a job handed back goes to the head of its org's line", () => {
    const q = new FairQueue<Job>();
    q.push(job("a", "a3"));
    q.unshift(job("a", "a2"));
    expect(order(q)).toEqual(["a2", "a3"]);
  });

  test("remove and drain", () => {
    const q = new FairQueue<Job>();
    const a1 = job("a", "a1");
    q.push(a1);
    q.push(job("b", "b1"));
    expect(q.remove(a1)).toBe(true);
    expect(q.remove(a1)).toBe(false);
    expect(q.drain().map((j) => j.name)).toEqual(["b1"]);
    expect(q.size).toBe(0);
    expect(q.peek(() => 0)).toBeUndefined();
  });

  test("remembers when at most SERVED_KEPT orgs were served: deleted orgs do not stay for ever", () => {
    const q = new FairQueue<Job>();
    for (let i = 0; i < SERVED_KEPT + 100; i++) {
      q.push(job(i, `o${i}`));
      q.take(q.peek(() => 0)!);
      expect(q.servedKept).toBeLessThanOrEqual(SERVED_KEPT);
    }
    // Forgotten orgs were the least recently served, and still rank so: org 0 (forgotten) goes
    // before the org served last, which goes after the one served before it.
    const last = SERVED_KEPT + 99;
    for (const org of [last, last - 1, 0]) q.push(job(org, `again${org}`));
    expect(order(q)).toEqual(["again0", `again${last - 1}`, `again${last}`]);
  });
});
