// A client's wait that runs out while a graceful stop is writing its run (PostgreSQL). At the
// stop, runs waiting in memory are written queued for the next start, and their clients answered
// once the write commits. A client whose own wait ran out before that commit found the run
// neither in memory nor on disk: 500 internal_error (TypeError), where docs/deploy.md promises
// 202 with the run. Found by SIGTERM followed by SIGKILL under a mixed load. The write is held
// by a lock on the runs table, taken by the test, until the wait has run out; PostgreSQL only,
// since SQLite's one writer cannot be held that way without failing the write.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { testConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { createWorkflow, seedRoot, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, createGates } from "./helpers/gates.ts";
import { call } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

const gates = createGates();
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  gates.remove();
  for (const c of cleanup) await c();
});

const WAIT_S = 3;

describe.skipIf(!onPostgres)("graceful stop", () => {
  test("a wait that runs out while the stop writes its run queued is answered 202 with the run", async () => {
    const pg = await freshPgDatabase();
    cleanup.push(pg.drop);
    const s = await startServer(
      testConfig({
        test_gates_dir: gates.dir,
        data_dir: testTempDir("assay-stop-wait-"),
        database_url: pg.url,
        port: 0,
        log_level: "silent",
        rate_limit_disabled: true,
        workers: 1,
        shutdown_grace_ms: 60_000,
      }),
    );
    const { token } = await seedRoot(s);
    await createWorkflow(s, token, HOLD_WORKFLOW);
    const post = (doc: string, wait: number) =>
      call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
        token,
        raw: doc,
        headers: { "content-type": "application/json", prefer: `wait=${wait}` },
      });
    const running = gates.gate();
    const first = post(running.doc(), 60);
    await running.held();
    // Handed to the busy worker (pipelined), then one waiting in memory for a worker.
    const handed = post(gates.gate().doc(), 60);
    await until(() => s.deps.executor.stats().memoryRunning === 2, "a run handed to the busy worker");
    const sentAt = Date.now();
    const second = post(gates.gate().doc(), WAIT_S);
    await until(() => s.deps.executor.stats().memoryQueued === 1, "the last run to wait in memory");

    // Inserts into runs wait for this lock: the stop's write of the second run is held.
    const lock = new SQL({ url: pg.url, max: 1 });
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked!: (pid: number) => void;
    const pid = new Promise<number>((r) => {
      locked = r;
    });
    const tx = lock.begin(async (t) => {
      await t.unsafe("LOCK TABLE runs IN EXCLUSIVE MODE");
      locked(Number(((await t.unsafe("SELECT pg_backend_pid() AS pid")) as { pid: number }[])[0]!.pid));
      await released;
    });
    const lockPid = await pid;
    const stopping = s.stop();
    await until(() => blockedBy(pg.url, lockPid), "the stop's write to wait for the lock");
    // The client's wait runs out while the write is held.
    await until(() => Date.now() > sentAt + WAIT_S * 1000 + 200, "the second client's wait to run out");
    release();
    await tx;
    await lock.close();

    const r = await second;
    expect([r.status, r.json.status]).toEqual([202, "queued"]);
    expect(r.headers.get("location")).toBe(r.json.url);
    running.open();
    expect((await first).status).toBe(201);
    expect((await handed).status).toBe(202);
    await stopping;
  });
});

/** Whether a session of the database waits for a lock that session `pid` holds. */
async function blockedBy(url: string, pid: number): Promise<boolean> {
  const sql = new SQL({ url, max: 1 });
  try {
    const rows = (await sql.unsafe(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))",
      [pid],
    )) as { n: string }[];
    return Number(rows[0]!.n) > 0;
  } finally {
    await sql.close();
  }
}
