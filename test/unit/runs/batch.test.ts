// Group commit over a real SQLite database: the writes of one turn of the event loop share one
// transaction, each caller settles after the commit, and a failing write is isolated.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeGateOf } from "../../../src/db/write-gate.ts";
import { lift } from "../../../src/db/program.ts";
import { createSqliteDb } from "../../../src/db/sqlite.ts";
import { WINDOW_MS, type WriteBatcher, createWriteBatcher } from "../../../src/runs/batch.ts";
import { loadConfig } from "../../../src/config.ts";

/** A write of a synchronous function on the connection (the batcher takes programs). */
const wr = <T>(b: WriteBatcher, fn: () => T, urgent?: boolean) => b.write(() => lift(fn), urgent);

const dir = mkdtempSync(join(tmpdir(), "assay-batch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A database file and a second connection to it, which sees only committed rows. */
function open() {
  const file = join(dir, `t${++n}.db`);
  const db = new Database(file);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY)");
  const other = new Database(file, { readonly: true });
  const count = (d: Database) => (d.query("SELECT count(*) AS n FROM t").get() as { n: number }).n;
  return { db, other, count, insert: (k: string) => db.query("INSERT INTO t (k) VALUES (?)").run(k) };
}

describe("createWriteBatcher", () => {
  test("writes of one turn commit together, after the turn, and resolve after the commit", async () => {
    const { db, other, count, insert } = open();
    const b = createWriteBatcher(createSqliteDb(db));
    const visibleElsewhere: number[] = [];
    const writes = ["a", "b", "c"].map((k) =>
      wr(b, () => {
        insert(k);
        visibleElsewhere.push(count(other));
        return k;
      }),
    );
    expect(count(db)).toBe(0); // nothing is written in the caller's turn
    expect(await Promise.all(writes)).toEqual(["a", "b", "c"]);
    expect(visibleElsewhere).toEqual([0, 0, 0]); // one transaction: no write was committed alone
    expect(count(other)).toBe(3); // and all three are committed once the promises settle
  });

  test("a failing write rejects alone; the others of its group are committed", async () => {
    const { db, other, count, insert } = open();
    insert("taken");
    const b = createWriteBatcher(createSqliteDb(db));
    const ok1 = wr(b, () => insert("x"));
    const bad = wr(b, () => insert("taken"));
    const ok2 = wr(b, () => insert("y"));
    const [r1, r2, r3] = await Promise.allSettled([ok1, bad, ok2]);
    expect([r1.status, r2.status, r3.status]).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((r2 as PromiseRejectedResult).reason)).toContain("UNIQUE");
    expect(count(other)).toBe(3);
  });

  test("right after a commit, writes of the next turns wait for the window and share a commit", async () => {
    const { db, other, count, insert } = open();
    // 500 ms: the turn between "a" and "c" must fall within it, however busy the host.
    const b = createWriteBatcher(createSqliteDb(db), 500);
    await wr(b, () => insert("first"));
    const seen: number[] = [];
    const a = wr(b, () => {
      insert("a");
      seen.push(count(other));
    });
    await new Promise((r) => setImmediate(r)); // a later turn, as a worker's next result would be
    const c = wr(b, () => {
      insert("c");
      seen.push(count(other));
    });
    await Promise.all([a, c]);
    expect(seen).toEqual([1, 1]); // "a" was not committed alone before "c" was written
    expect(count(other)).toBe(3);
  });

  test("with a window of 0 (commit_window_us=0) every turn's writes commit on the next turn", async () => {
    const { db, other, count, insert } = open();
    const b = createWriteBatcher(createSqliteDb(db), 0);
    await wr(b, () => insert("first"));
    const seen: number[] = [];
    const a = wr(b, () => {
      insert("a");
      seen.push(count(other));
    });
    await new Promise((r) => setImmediate(r)); // the same later turn as the test above
    const c = wr(b, () => {
      insert("c");
      seen.push(count(other));
    });
    await Promise.all([a, c]);
    expect(seen).toEqual([1, 2]); // "a" was committed alone, before "c" was written
    expect(count(other)).toBe(3);
  });

  test("an urgent write does not wait out the window; it takes the waiting writes with it", async () => {
    const { db, other, count, insert } = open();
    const b = createWriteBatcher(createSqliteDb(db), 10_000);
    await wr(b, () => insert("first"));
    const waiting = wr(b, () => insert("w"));
    const t0 = performance.now();
    await wr(b, () => insert("u"), true);
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(count(other)).toBe(3);
    await waiting;
  });

  test("a write issued after a flush goes into the next transaction", async () => {
    const { db, other, count, insert } = open();
    const b = createWriteBatcher(createSqliteDb(db));
    await wr(b, () => insert("1"));
    expect(count(other)).toBe(1);
    await wr(b, () => insert("2"));
    expect(count(other)).toBe(2);
  });
});

describe("createWriteBatcher behind the write gate (a WAL restart)", () => {
  test("a held gate defers the commit; writes issued meanwhile join it; release commits them at once", async () => {
    const { db, other, count, insert } = open();
    const b = createWriteBatcher(createSqliteDb(db), 0);
    const gate = writeGateOf(db);
    gate.hold("checkpoint");
    let settled = 0;
    const first = wr(b, () => insert("a")).then(() => settled++);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); // turns pass: still held
    const second = wr(b, () => insert("b"), true).then(() => settled++); // urgent waits too
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect([settled, count(other), count(db)]).toEqual([0, 0, 0]);
    gate.release("checkpoint");
    expect(count(other)).toBe(2); // committed within release(), in one transaction
    await Promise.all([first, second]);
    expect(settled).toBe(2);
  });
});

describe("the commit_window_us setting", () => {
  test("µs from 0 to 100000, default 0 (WINDOW_MS); anything else stops the start with the reason", () => {
    expect(loadConfig({}).commit_window_us).toBe(0);
    expect(WINDOW_MS).toBe(0); // the batcher's own default (the floor of the bench uses it) agrees
    expect(loadConfig({ ASSAY_COMMIT_WINDOW_US: "1000" }).commit_window_us).toBe(1000);
    expect(loadConfig({}, { commit_window_us: "250" }).commit_window_us).toBe(250);
    for (const bad of ["-1", "100001", "1.5", "soon"])
      expect(() => loadConfig({ ASSAY_COMMIT_WINDOW_US: bad })).toThrow("ASSAY_COMMIT_WINDOW_US");
  });
});
