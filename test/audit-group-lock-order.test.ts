// A group commit's audit entries take the audit chain's head after the group's other statements
// (PostgreSQL, src/db/postgres.ts `alone`). The programs of a group run side by side on one
// connection, so a run's cancel could take the head (its audit entry) before another run of the
// group took its org's row (FOR KEY SHARE: a foreign key, the webhook read of a run that ended).
// An org's suspension takes the org's row FOR UPDATE and then the head (its own audit entry): the
// two waited for each other until PostgreSQL broke the cycle after deadlock_timeout (1 s) and one
// was retried. Both now take the org's row before the head. Held exact here: the test's
// transaction is the group (db.txGroup, as src/runs/batch.ts calls it), the suspension a real
// request, and locks from side connections put each statement where the race needs it.
import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { audit } from "../src/audit/append.ts";
import { SYSTEM } from "../src/audit/actor.ts";
import { verifyChain } from "../src/audit/verify.ts";
import { each, get, run } from "../src/db/program.ts";
import { onPostgres } from "./helpers/backend.ts";
import { until } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

describe.skipIf(!onPostgres)("a group commit's audit entry and an org's suspension (PostgreSQL)", () => {
  test("no deadlock: the group takes the org's row before the head, the suspension answers 200", async () => {
    const orgId = await s.org("held");
    const { id: userId } = await s.user("held-user", "held", "viewer");
    const before = await s.count("audit_log");
    const cacheHold = new SQL({ url: s.databaseUrl!, max: 1 });
    const rowHold = new SQL({ url: s.databaseUrl!, max: 1 });
    const watch = new SQL({ url: s.databaseUrl!, max: 1 });
    const waiting = async () =>
      Number(
        (
          await watch.unsafe(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          )
        )[0].n,
      );
    let group: Promise<unknown[]> | undefined;
    let suspension: Promise<Awaited<ReturnType<typeof call>>> | undefined;
    try {
      // The suspension will hold the org's row and wait before its audit entry: its UPDATE's
      // trigger bumps cache_generation, whose row is held here.
      await cacheHold.unsafe("BEGIN");
      await cacheHold.unsafe("SELECT value FROM cache_generation WHERE id = 1 FOR UPDATE");
      // The group's run-like program will wait before it takes the org's row: a user row held here.
      await rowHold.unsafe("BEGIN");
      await rowHold.unsafe(`SELECT id FROM users WHERE id = ${Number(userId)} FOR UPDATE`);
      let answered = false;
      suspension = call(s, "POST", "/api/v1/admin/orgs/held/suspend/", { token: s.rootToken });
      void suspension.then(
        () => (answered = true),
        () => (answered = true),
      );
      await until(async () => (await waiting()) >= 1, "the suspension waiting, the org's row held");
      // The group: a cancel's audit entry, and a run of the held org (its foreign key's share of
      // the org's row), sent side by side on the group's connection.
      group = s.deps.db.txGroup([
        () =>
          audit(SYSTEM, {
            action: "run.cancel",
            org_id: null,
            target_type: "run",
            target_id: "group-run",
            context: { reason: "test" },
          }),
        function* () {
          // The cycle, if there is one, is found by this transaction, 100 ms after it closes.
          yield* run("SET LOCAL deadlock_timeout = '100ms'");
          yield* get("SELECT id FROM users WHERE id = ? FOR KEY SHARE", userId);
          return yield* get("SELECT id FROM orgs WHERE id = ? FOR KEY SHARE", orgId);
        },
      ]);
      void group.catch(() => {});
      await until(async () => (await waiting()) >= 2, "the group waiting for the held user row");
      // The suspension goes on to its audit entry: it waits for the head if the group holds it.
      await cacheHold.unsafe("COMMIT");
      await until(async () => answered || (await waiting()) >= 2, "the suspension answered or waiting");
      // The group takes the org's row: held by the suspension until it commits.
      await rowHold.unsafe("COMMIT");
      const results = await group;
      expect(results[1]).toEqual({ id: orgId });
      const r = await suspension;
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ org_slug: "held", status: "suspended" });
    } finally {
      await cacheHold.close();
      await rowHold.close();
      await watch.close();
      await group?.catch(() => {});
      await suspension?.catch(() => {});
    }
    // The suspension's entry first (it took the head first), then the group's; the chain whole.
    const entries = await s.sql<{ action: string }>(
      "SELECT action FROM audit_log WHERE seq > ? ORDER BY seq",
      before,
    );
    expect(entries.map((e) => e.action)).toEqual(["org.suspend", "run.cancel"]);
    const v = await verifyChain(s.deps.db);
    expect({ ok: v.ok, broken: v.broken }).toEqual({ ok: true, broken: null });
  });
  // The group's run writer sends its runs' findings and outbox rows as `each` (src/runs/final-rows.ts).
  // The program that starts them stopped being counted before they were: for that moment the
  // transaction read as quiet, and a waiting audit entry took the head before their statements.
  test("programs started by `each` are waited for: the head is taken after their last statement", async () => {
    const head = "SELECT coalesce((SELECT seq FROM audit_head WHERE id = 1), 0) AS seq";
    const before = Number((await s.sql<{ seq: number | string }>(head))[0]!.seq);
    const seen = await s.deps.db.txGroup([
      () =>
        audit(SYSTEM, {
          action: "run.cancel",
          org_id: null,
          target_type: "run",
          target_id: "each-run",
          context: { reason: "test" },
        }),
      function* () {
        const [a] = yield* each([
          (function* () {
            yield* get("SELECT 1 AS one");
            return Number((yield* get<{ seq: number | string }>(head))!.seq);
          })(),
          (function* () {
            return Number((yield* get<{ seq: number | string }>(head))!.seq);
          })(),
        ]);
        return a;
      },
    ]);
    expect(seen[1]).toBe(before);
    const v = await verifyChain(s.deps.db);
    expect({ ok: v.ok, broken: v.broken }).toEqual({ ok: true, broken: null });
  });
});
