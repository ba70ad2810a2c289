// The writer thread (src/db/writer.ts): final sync runs committed on a second connection, one
// group in flight, the main connection's commits held meanwhile, and every failure written again
// on the main connection. Real databases and threads; the crash is a fixture thread.
import type { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { loadConfig, wantsWriterThread } from "../../../src/config.ts";
import { DB_FILE, closeDatabase, openDatabase } from "../../../src/db/open.ts";
import { run } from "../../../src/db/program.ts";
import { type SqliteDb, createSqliteDb } from "../../../src/db/sqlite.ts";
import { type WriterThread, startWriterThread } from "../../../src/db/writer.ts";
import { createLogger } from "../../../src/lib/log.ts";
import { uuidv7 } from "../../../src/lib/uuid.ts";
import { createRunStore } from "../../../src/runs/store.ts";
import type { RunStep } from "../../../src/runs/types.ts";
import { testTempDir } from "../../helpers/temp.ts";

const REAL = new URL("../../../src/db/writer-thread.ts", import.meta.url);
const CRASHING = new URL("../../fixtures/crashing-writer.ts", import.meta.url);

let raw: Database | null = null;
let writer: WriterThread | null = null;
afterEach(async () => {
  await writer?.stop();
  writer = null;
  if (raw) closeDatabase(raw);
  raw = null;
});

interface Setup {
  db: SqliteDb;
  store: ReturnType<typeof createRunStore>;
  ids: { orgId: number; userId: number; workflowId: number };
  logged: string[];
}

async function setup(url: URL | null, opts: { autoCheckpoint?: number } = {}): Promise<Setup> {
  const dir = testTempDir("writer");
  raw = openDatabase(dir);
  // What the checkpoint thread does to the main connection when it starts (0: it copies the WAL).
  if (opts.autoCheckpoint !== undefined) raw.exec(`PRAGMA wal_autocheckpoint = ${opts.autoCheckpoint}`);
  const ts = new Date().toISOString();
  const userId = Number(
    raw.prepare("INSERT INTO users (username, created_at) VALUES ('u', ?)").run(ts).lastInsertRowid,
  );
  const orgId = Number(
    raw.prepare("INSERT INTO orgs (slug, name, created_at) VALUES ('o', 'O', ?)").run(ts).lastInsertRowid,
  );
  const workflowId = Number(
    raw
      .prepare(
        "INSERT INTO workflows (org_id, slug, name, allowed_file_types, created_at, updated_at) VALUES (?, 'w', 'W', '[\"JSON\"]', ?, ?)",
      )
      .run(orgId, ts, ts).lastInsertRowid,
  );
  const logged: string[] = [];
  const log = { ...createLogger("silent"), error: (msg: string) => void logged.push(msg) };
  const db = createSqliteDb(raw);
  if (url) {
    writer = await startWriterThread(raw, join(dir, DB_FILE), url, log as ReturnType<typeof createLogger>);
    db.beginImmediate();
  }
  return { db, store: createRunStore(db, writer), ids: { orgId, userId, workflowId }, logged };
}

/** A final run as the inline lane writes it; `findings` failed ones (stored in run_findings). */
function finalRun(
  s: Setup,
  opts: { id?: string; findings?: number; inTx?: Parameters<Setup["store"]["createFinal"]>[2] } = {},
) {
  const at = new Date().toISOString();
  const findings = Array.from({ length: opts.findings ?? 0 }, (_, i) => ({
    code: "json_schema.type",
    message: `finding ${i}`,
    severity: "error" as const,
    path: `/items/${i}`,
    line: null,
    column: null,
    rule: null,
  }));
  const steps: RunStep[] = [
    {
      step_id: 1,
      order: 1,
      name: "s",
      validator: "json_schema",
      status: findings.length ? "failed" : "passed",
      duration_ms: 1,
      findings,
      error: null,
      truncated: false,
    },
  ];
  // Bytes above 127 too: the group crosses to the thread as latin1 text (writer-protocol.ts).
  const bytes = new TextEncoder().encode('{"a":"é€ 1"}');
  const id = opts.id ?? uuidv7();
  const sid = s.store.createFinal(
    {
      id,
      createdAt: at,
      orgId: s.ids.orgId,
      workflowId: s.ids.workflowId,
      workflowVersion: 1,
      steps,
      user: { id: s.ids.userId, username: "u" },
      submission: {
        bytes,
        contentType: "application/json",
        charset: "utf-8",
        fileType: "JSON",
        filename: null,
        metadata: { n: "1" },
        sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"),
      },
    },
    {
      status: findings.length ? "failed" : "succeeded",
      steps,
      summary: null,
      error: null,
      finishedAt: at,
      durationMs: 1,
      startedAt: at,
    },
    opts.inTx,
  );
  return { id, sid };
}

const count = (s: Setup, table: string) =>
  (s.db.raw.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

test("a group of final runs is committed by the thread in one go; each gets its own submission", async () => {
  const s = await setup(REAL);
  const runs = Array.from({ length: 20 }, (_, i) => finalRun(s, { findings: i % 4 === 0 ? 3 : 0 }));
  const sids = await Promise.all(runs.map((r) => r.sid));
  expect(new Set(sids).size).toBe(20);
  // Read back on the main connection: every run points at the submission its promise named.
  for (let i = 0; i < runs.length; i++) {
    const row = raw!.query("SELECT submission_id, status FROM runs WHERE id = ?").get(runs[i]!.id) as {
      submission_id: number;
      status: string;
    };
    expect(row).toEqual({ submission_id: sids[i]!, status: i % 4 === 0 ? "failed" : "succeeded" });
  }
  expect(count(s, "submissions")).toBe(20);
  // Each submission's content, byte for byte.
  for (const sid of sids) {
    const sub = raw!.query("SELECT content FROM submissions WHERE id = ?").get(sid) as {
      content: Uint8Array;
    };
    expect(new TextDecoder().decode(sub.content)).toBe('{"a":"é€ 1"}');
  }
  expect(count(s, "run_findings")).toBe(5); // one chunk for each of the 5 failed runs
  const got = await s.store.get(s.ids.orgId, runs[0]!.id);
  expect(got?.steps[0]?.findings.map((f) => f.message)).toEqual(["finding 0", "finding 1", "finding 2"]);
  // None of it went through a transaction of the main connection.
  expect(s.db.stats.transactions).toBe(0);
  expect(writer!.alive).toBe(true);
});

test("while a group is in flight the write gate is held; it opens when the group settles", async () => {
  const s = await setup(REAL);
  const r = finalRun(s);
  await new Promise((done) => setImmediate(done)); // the group leaves on the next turn
  expect(writer!.gate.held).toBe(true);
  await r.sid;
  expect(writer!.gate.held).toBe(false);
});

test("a group the thread cannot commit leaves nothing; its runs are written again alone, and only the faulty one fails", async () => {
  const s = await setup(REAL);
  const id = uuidv7();
  // Two runs with one id in one group: the thread's transaction fails as a whole.
  const a = finalRun(s, { id });
  const b = finalRun(s, { id });
  const c = finalRun(s);
  const settled = await Promise.allSettled([a.sid, b.sid, c.sid]);
  expect(settled.map((x) => x.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect((settled[1] as PromiseRejectedResult).reason.name).toBe("UniqueViolation");
  // Written once each: no submission of the rolled-back attempts is left behind.
  expect([count(s, "runs"), count(s, "submissions")]).toEqual([2, 2]);
  expect(writer!.alive).toBe(true);
});

test("a thread that dies fails over: its group and every run after it are written on the main connection", async () => {
  const s = await setup(CRASHING);
  const first = await Promise.all([finalRun(s).sid, finalRun(s).sid]);
  expect(first).toHaveLength(2);
  expect(writer!.alive).toBe(false);
  expect(writer!.gate.held).toBe(false);
  expect(s.logged).toEqual(["writer thread failed; runs are written on the main connection from now on"]);
  await finalRun(s).sid;
  expect([count(s, "runs"), count(s, "submissions")]).toEqual([3, 3]);
});

test("a run whose final-state hook writes is written on the main connection", async () => {
  // The crashing thread would fail over (and say so) if the run were sent to it.
  const s = await setup(CRASHING);
  const r = finalRun(s, {
    *inTx() {
      yield* run("UPDATE orgs SET name = name WHERE id = ?", s.ids.orgId);
    },
  });
  await r.sid;
  expect(count(s, "runs")).toBe(1);
  expect(writer!.alive).toBe(true);
  expect(s.logged).toEqual([]);
});

test("what a run's hooks were quiet on is read again in the thread's transaction: if it changed, the run is written on the main connection", async () => {
  const s = await setup(REAL);
  const NAME = "SELECT name FROM orgs WHERE id = ?";
  // A hook that writes nothing, as of the org's name read now (as the webhook outbox does with
  // the cache generation, src/webhooks/subscriptions.ts).
  const hook = () =>
    Object.assign(function* () {}, {
      quiet: () => [
        {
          sql: NAME,
          params: [s.ids.orgId],
          expect: JSON.stringify(s.db.raw.query(NAME).get(s.ids.orgId)),
        },
      ],
    });
  // Unchanged: committed by the thread.
  await finalRun(s, { inTx: hook() }).sid;
  expect(s.db.stats.transactions).toBe(0);
  // Changed between the read (at the call) and the thread's transaction (a turn later).
  const r = finalRun(s, { inTx: hook() });
  s.db.raw.exec(`UPDATE orgs SET name = 'Renamed' WHERE id = ${s.ids.orgId}`);
  await r.sid;
  expect(s.db.stats.transactions).toBe(1); // written again, alone, on the main connection
  expect(count(s, "runs")).toBe(2);
  expect(writer!.alive).toBe(true);
});

test("a hook that says nothing about its writes keeps the run on the main connection", async () => {
  const s = await setup(CRASHING);
  await finalRun(s, { inTx: function* () {} }).sid;
  expect(count(s, "runs")).toBe(1);
  expect(writer!.alive).toBe(true);
  expect(s.logged).toEqual([]);
});

test("with the thread stopped, runs are written on the main connection", async () => {
  const s = await setup(REAL);
  await writer!.stop();
  expect(writer!.alive).toBe(false);
  await finalRun(s).sid;
  expect(count(s, "runs")).toBe(1);
});

test("ASSAY_WRITER_THREAD: off (the default), on or auto; anything else stops the start with the reason; never on PostgreSQL", () => {
  expect(loadConfig({}).writer_thread).toBe("off"); // measured slower than one thread (docs/scaling.md)
  expect(() => loadConfig({ ASSAY_WRITER_THREAD: "yes" })).toThrow(
    "writer thread must be one of auto, on, off",
  );
  const pg = "postgres://u@localhost/db";
  expect(wantsWriterThread(loadConfig({ ASSAY_WRITER_THREAD: "on" }))).toBe(true);
  expect(wantsWriterThread(loadConfig({ ASSAY_WRITER_THREAD: "off" }))).toBe(false);
  expect(wantsWriterThread(loadConfig({ ASSAY_WRITER_THREAD: "auto" }))).toBe(availableParallelism() > 1);
  expect(wantsWriterThread(loadConfig({ ASSAY_WRITER_THREAD: "on", ASSAY_DATABASE_URL: pg }))).toBe(false);
});

// The thread's own connection must not checkpoint inside its commits while the checkpoint thread
// does it (SQLite's default would: 1,000 pages, then a copy and a file sync in the commit, several
// times a second under load). It follows the main connection's setting, and SQLite's default
// again when told (the checkpoint thread failed).
test("the thread's connection checkpoints only as the main connection does", async () => {
  const s = await setup(REAL, { autoCheckpoint: 0 });
  const file = join(s.db.raw.filename);
  const pages = () => statSync(file).size / 4096;
  const before = pages();
  // ~40 KiB of findings a run: 60 runs put ~600 pages in the WAL, 150 well over 1,000.
  const write = async (n: number) => {
    for (let i = 0; i < n; i += 10)
      await Promise.all(Array.from({ length: 10 }, () => finalRun(s, { findings: 200 }).sid));
  };
  await write(150);
  const wal = statSync(`${file}-wal`).size / 4096;
  expect(wal).toBeGreaterThan(1000);
  expect(pages()).toBe(before); // nothing was copied into the file: no checkpoint ran
  writer!.autoCheckpoint(1000);
  await write(150);
  expect(pages()).toBeGreaterThan(before + 500); // the thread's commits checkpoint again
});
