// Rate limits shared by several nodes (PostgreSQL only): the GCRA in the database gives exactly
// the in-memory limiter's answers for the same clock, whichever node asks; two budgets checked
// together are counted only when both allow; the sweep forgets only whole budgets.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { migratePostgres } from "../src/db/migrate.ts";
import { type PgDb, createPgDb } from "../src/db/postgres.ts";
import { type SharedLimiter, createSharedLimiter } from "../src/http/ratelimit-shared.ts";
import { type Decision, type Policy, RateLimiter } from "../src/http/ratelimit.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";

const policy: Policy = { name: "default", limit: 7, windowSeconds: 60 };
const user: Policy = { name: "user", limit: 10, windowSeconds: 60 };
let clock = 1_700_000_000_000;
const dbs: PgDb[] = [];
let nodes: SharedLimiter[] = [];
let drop = async () => {};

describe.skipIf(!onPostgres)("rate limits in PostgreSQL", () => {
  beforeAll(async () => {
    const pg = await freshPgDatabase();
    drop = pg.drop;
    for (let i = 0; i < 3; i++) dbs.push(createPgDb(pg.url, { max: 2 }));
    await migratePostgres(dbs[0]!);
    nodes = dbs.map((db) => createSharedLimiter(db, () => clock));
  });
  afterAll(async () => {
    for (const db of dbs) await db.close();
    await drop();
  });

  test("three nodes share one budget, with the in-memory limiter's answers at every step", async () => {
    const local = new RateLimiter(policy, { now: () => clock });
    for (let i = 0; i < 40; i++) {
      clock += 1500; // slower than the budget refills: some are refused, some allowed again
      const [{ tat, ...shared }] = (await nodes[i % 3]!.take([{ policy, key: "t:1" }])) as [
        Decision & { tat: number },
      ];
      expect(shared).toEqual(local.take("t:1"));
      expect(tat).toBeGreaterThan(0);
    }
  });

  test("a token's and its user's budgets together: counted only when both allow", async () => {
    const key = "t:2";
    // The user's budget is nearly spent by another token of the same user.
    for (let i = 0; i < 9; i++) await nodes[0]!.take([{ policy: user, key: "u:9" }]);
    const [t1, u1] = await nodes[1]!.take([
      { policy, key },
      { policy: user, key: "u:9" },
    ]);
    expect([t1!.allowed, u1!.allowed]).toEqual([true, true]);
    expect(u1!.remaining).toBe(0);
    const [t2, u2] = await nodes[2]!.take([
      { policy, key },
      { policy: user, key: "u:9" },
    ]);
    expect([t2!.allowed, u2!.allowed]).toEqual([true, false]);
    // The token's budget as it stands: the refused request is not in it (limit − 1 left, not − 2).
    expect(t2!.remaining).toBe(policy.limit - 1);
    // The refused request cost the token nothing: it still has limit − 1 left.
    const [t3] = await nodes[0]!.take([{ policy, key }]);
    expect(t3!.remaining).toBe(policy.limit - 2);
  });

  test("the sweep forgets budgets that are whole again, and only those", async () => {
    await nodes[0]!.take([{ policy, key: "fresh" }]);
    clock += 61_000;
    await nodes[0]!.take([{ policy, key: "busy" }]);
    const removed = await nodes[1]!.sweep();
    expect(removed).toBeGreaterThanOrEqual(1);
    const [busy] = await nodes[2]!.take([{ policy, key: "busy" }]);
    expect(busy!.remaining).toBe(policy.limit - 2);
  });
});
