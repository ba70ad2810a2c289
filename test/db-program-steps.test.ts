// Two steps of the program driver (src/db/program.ts) that a group commit's runs use:
// `once`, a read whose answer serves the rest of its transaction (PostgreSQL keeps it per
// transaction, so a group's runs read their org's webhooks once; SQLite, whose reads cost no round
// trip, and any read outside a transaction, run it every time); and `each`, independent programs
// in one step (side by side on PostgreSQL, one after the other on SQLite), results in order.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { UniqueViolation, type Program, each, get, once, run } from "../src/db/program.ts";
import { onPostgres } from "./helpers/backend.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

let loads = 0;
function* load(): Program<number> {
  loads++;
  const r = yield* get<{ n: number | string }>("SELECT count(*) AS n FROM users");
  return Number(r?.n ?? -1);
}

test("within one transaction, a key is read once on PostgreSQL, every time on SQLite", async () => {
  loads = 0;
  const out = await s.deps.db.tx(function* () {
    const a = yield* once("users", load);
    const b = yield* once("users", load);
    const other = yield* once("other", load);
    return [a, b, other];
  });
  expect(out[0]).toBeGreaterThan(0);
  expect(out).toEqual([out[0], out[0], out[0]]);
  expect(loads).toBe(onPostgres ? 2 : 3);
});

test("the programs of one group transaction share the read on PostgreSQL", async () => {
  loads = 0;
  const make = () =>
    (function* () {
      return yield* once("users", load);
    })();
  const out = await s.deps.db.txGroup([make, make, make]);
  expect(new Set(out).size).toBe(1);
  expect(loads).toBe(onPostgres ? 1 : 3);
});

test("a later transaction reads again and sees what was committed in between", async () => {
  const before = await s.deps.db.tx(() => once("users", load));
  await s.sql("INSERT INTO users (username, created_at) VALUES ('once-new', ?)", new Date().toISOString());
  loads = 0;
  const after = await s.deps.db.tx(() => once("users", load));
  expect(after).toBe(before + 1);
  expect(loads).toBe(1);
  // One after another, the pool hands the same connection out again: each transaction reads.
  for (let i = 0; i < 5; i++) await s.deps.db.tx(() => once("users", load));
  expect(loads).toBe(6);
});

test("outside a transaction every call reads", async () => {
  loads = 0;
  await s.deps.db.exec(once("users", load));
  await s.deps.db.exec(once("users", load));
  expect(loads).toBe(2);
});

test("each runs every program and answers their results in order, in the transaction", async () => {
  const ts = new Date().toISOString();
  const names = ["each-a", "each-b", "each-c"];
  const out = await s.deps.db.tx(function* () {
    return yield* each(
      names.map((u) =>
        (function* () {
          yield* run("INSERT INTO users (username, created_at) VALUES (?, ?)", u, ts);
          return (yield* get<{ username: string }>("SELECT username FROM users WHERE username = ?", u))!
            .username;
        })(),
      ),
    );
  });
  expect(out).toEqual(names);
  expect(await s.count("users")).toBeGreaterThanOrEqual(3);
  expect(await each([]).next()).toEqual({ done: true, value: [] });
});

test("a failing program of each fails the transaction: nothing of any of them is kept", async () => {
  const ts = new Date().toISOString();
  const users = await s.count("users");
  const insert = (u: string) =>
    (function* () {
      yield* run("INSERT INTO users (username, created_at) VALUES (?, ?)", u, ts);
    })();
  const failed = s.deps.db.tx(() => each([insert("each-x"), insert("each-a"), insert("each-y")]));
  await expect(failed).rejects.toBeInstanceOf(UniqueViolation);
  expect(await s.count("users")).toBe(users);
});
