// The process's shared write lock (src/db/write-lock.ts) and the write gate that follows it
// (src/db/write-gate.ts): threads that write to one SQLite file on connections of their own take
// turns without ever meeting SQLite's busy handler.
import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lift } from "../../../src/db/program.ts";
import { createSqliteDb } from "../../../src/db/sqlite.ts";
import { writeGateOf } from "../../../src/db/write-gate.ts";
import { WriteLock } from "../../../src/db/write-lock.ts";
import { createWriteBatcher } from "../../../src/runs/batch.ts";

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

function freshFile(): string {
  dir = mkdtempSync(join(tmpdir(), "assay-write-lock-"));
  const path = join(dir, "t.db");
  const d = new Database(path, { create: true, strict: true });
  d.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, who INTEGER, n INTEGER)");
  d.close();
  return path;
}

/** A connection whose gate follows a new shared lock, and the same lock as another thread holds it. */
function sharedGate() {
  const raw = new Database(freshFile(), { strict: true });
  const mine = WriteLock.create(1);
  const other = WriteLock.attach(mine.init, 2);
  const gate = writeGateOf(raw);
  gate.share(mine);
  return { raw, other, gate };
}

test("one holder at a time; a thread may take it again while it holds it", () => {
  const a = WriteLock.create(1);
  const b = WriteLock.attach(a.init, 2);
  expect(a.tryAcquire()).toBe(true);
  expect(a.tryAcquire()).toBe(true); // nested: a group commit's transaction inside its flush
  expect(b.heldElsewhere).toBe(true);
  expect(a.heldElsewhere).toBe(false);
  expect(b.tryAcquire()).toBe(false);
  a.release();
  expect(b.tryAcquire()).toBe(false); // still held once
  a.release();
  expect(b.heldElsewhere).toBe(false);
  expect(b.tryAcquire()).toBe(true);
  expect(a.heldElsewhere).toBe(true);
  b.release();
  b.release(); // a release too many changes nothing
  expect(a.tryAcquire()).toBe(true);
  a.release();
  expect(() => WriteLock.attach(a.init, 0)).toThrow(RangeError);
});

test("a group commit finds the lock held elsewhere: it waits, gathers, and commits once released", async () => {
  const { raw, other, gate } = sharedGate();
  const batch = createWriteBatcher(createSqliteDb(raw), 0);
  const insert = raw.prepare("INSERT INTO t (who, n) VALUES (1, ?)");
  expect(other.tryAcquire()).toBe(true);
  expect(gate.held).toBe(true);
  const committed: number[] = [];
  const first = batch.write(() => lift(() => insert.run(1))).then(() => committed.push(1));
  // Two turns later, still held: nothing was written, and a second write joins the same group.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  const second = batch.write(() => lift(() => insert.run(2))).then(() => committed.push(2));
  await new Promise((r) => setImmediate(r));
  expect(committed).toEqual([]);
  expect(raw.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 0 });
  const transactions = createSqliteDb(raw).stats.transactions;
  other.release();
  await Promise.all([first, second]);
  expect(committed).toEqual([1, 2]);
  expect(raw.query("SELECT n FROM t ORDER BY id").all()).toEqual([{ n: 1 }, { n: 2 }]);
  expect(transactions).toBe(0);
  expect(gate.held).toBe(false);
  expect(other.tryAcquire()).toBe(true); // the batcher let go
  other.release();
  raw.close();
});

test("a holder of the gate (the WAL restart) holds the shared lock until it lets go", async () => {
  const { raw, other, gate } = sharedGate();
  expect(other.tryAcquire()).toBe(true);
  let holding = false;
  gate.hold("checkpoint", () => {
    holding = true;
  });
  await new Promise((r) => setImmediate(r));
  expect(holding).toBe(false); // not while another thread writes
  other.release();
  for (let i = 0; i < 100 && !holding; i++) await new Promise((r) => setImmediate(r));
  expect(holding).toBe(true);
  expect(other.heldElsewhere).toBe(true);
  expect(other.tryAcquire()).toBe(false);
  gate.release("checkpoint");
  expect(other.tryAcquire()).toBe(true);
  other.release();
  raw.close();
});

test("threads writing one file on connections of their own never meet SQLite's lock", async () => {
  const path = freshFile();
  const lock = WriteLock.create(1);
  const rows = 3000;
  // This thread's connection is open (and has read) before any other: the last close had removed
  // the WAL, and connections opening it at once meet SQLite's recovery lock (SQLITE_BUSY with a
  // busy timeout of 0), which is not the write lock under test (a failure seen on a busy CI host).
  const raw = new Database(path, { strict: true });
  raw.exec("PRAGMA busy_timeout = 0");
  raw.query("SELECT count(*) FROM t").get();
  const threads = [2, 3, 4].map((owner) => {
    const w = new Worker(new URL("../../fixtures/write-lock-writer.ts", import.meta.url));
    const done = new Promise<{ failed: number }>((resolve, reject) => {
      w.onmessage = (e) => resolve(e.data);
      w.onerror = (e) => reject(new Error(e.message));
    });
    w.postMessage({ path, lock: lock.init, owner, rows });
    return { w, done };
  });
  // This thread writes too, as the main thread does.
  writeGateOf(raw).share(lock);
  const db = createSqliteDb(raw);
  db.beginImmediate();
  const batch = createWriteBatcher(db, 0);
  const insert = raw.prepare("INSERT INTO t (who, n) VALUES (1, ?)");
  const mine: Promise<unknown>[] = [];
  for (let i = 0; i < rows; i++) {
    mine.push(batch.write(() => lift(() => insert.run(i))));
    if (i % 5 === 4) await new Promise((r) => setImmediate(r));
  }
  let results: { failed: number }[];
  try {
    await Promise.all(mine);
    results = await Promise.all(threads.map((t) => t.done));
  } finally {
    // Even after a failure: a thread left writing would hold the lock in the next test.
    for (const t of threads) t.w.terminate();
  }
  // With a busy timeout of 0, a transaction begun while another connection wrote would have
  // failed (SQLITE_BUSY): none did, and every row of every thread is there once.
  expect(results).toEqual([{ failed: 0 }, { failed: 0 }, { failed: 0 }]);
  expect(raw.query("SELECT who, count(*) AS n, count(DISTINCT n) AS d FROM t GROUP BY who").all()).toEqual(
    [1, 2, 3, 4].map((who) => ({ who, n: rows, d: rows })),
  );
  raw.close();
});

test("the time it was held adds up over the threads that held it", async () => {
  const a = WriteLock.create(1);
  const b = WriteLock.attach(a.init, 2);
  expect(a.heldSeconds()).toBe(0);
  const t0 = performance.now();
  expect(a.tryAcquire()).toBe(true);
  expect(a.tryAcquire()).toBe(true);
  await Bun.sleep(20);
  a.release();
  expect(a.heldSeconds()).toBe(0); // still held: counted when let go
  a.release();
  const first = a.heldSeconds();
  expect(first).toBeGreaterThanOrEqual(0.019);
  expect(first).toBeLessThanOrEqual((performance.now() - t0) / 1000);
  expect(b.tryAcquire()).toBe(true);
  await Bun.sleep(10);
  b.release();
  expect(a.heldSeconds()).toBe(b.heldSeconds());
  expect(b.heldSeconds() - first).toBeGreaterThanOrEqual(0.009);
});
