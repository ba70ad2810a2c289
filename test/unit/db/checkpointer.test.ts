// The checkpoint thread keeps the WAL bounded under steady writes (src/db/checkpoint-worker.ts):
// PASSIVE checkpoints alone let it grow without end while commits keep coming.
import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Checkpointer, startCheckpointer } from "../../../src/db/checkpointer.ts";
import { createLogger } from "../../../src/lib/log.ts";

const WORKER = new URL("../../../src/db/checkpoint-worker.ts", import.meta.url);
const FRAME = 4096 + 24; // a WAL frame: one page and its header
let dir = "";
let cp: Checkpointer | null = null;
let db: Database | null = null;

afterEach(async () => {
  await cp?.stop();
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Commits `n` one-page rows, one per turn of the event loop; returns the largest WAL seen. */
async function writeSteadily(d: Database, path: string, n: number): Promise<number> {
  const insert = d.prepare("INSERT INTO t (b) VALUES (?)");
  const blob = new Uint8Array(3000).fill(7);
  let max = 0;
  for (let i = 0; i < n; i++) {
    d.transaction(() => insert.run(blob))();
    if (i % 50 === 0) max = Math.max(max, statSync(`${path}-wal`).size);
    await new Promise((r) => setImmediate(r));
  }
  return Math.max(max, statSync(`${path}-wal`).size);
}

test("under steady commits the WAL is started over once it passes restartFrames", async () => {
  dir = mkdtempSync(join(tmpdir(), "assay-ckpt-"));
  const path = join(dir, "t.db");
  db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)");
  cp = await startCheckpointer(db, path, WORKER, createLogger("error"), {
    intervalMs: 5,
    restartFrames: 300,
  });
  // Each commit appends three frames (the row's leaf, its parent, page 1): with restartFrames
  // infinite these writes leave a 75 MB WAL behind (measured); with 300, 17 MB at most, the
  // high-water mark of the first ticks, then the file is reused from its start.
  const commits = 6000;
  const max = await writeSteadily(db, path, commits);
  expect(cp.restarts()).toBeGreaterThan(0);
  expect(max).toBeLessThan((commits * 3 * FRAME) / 2);
  expect(db.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: commits });
});
