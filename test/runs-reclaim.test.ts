// A node stopped (SIGSTOP, a long pause) past its lease comes back with its job still running
// while another node's recovery has put that run back in the queue. It must not claim the run
// again while that job lives: it did (its claim passes saw a queued run like any other), and then
// executed the run twice at once in the same process — two workers on one run, the second job's
// bookkeeping overwritten by the first's, and a late `canceled` write of the old job able to land
// on the new claim (seen with the built binary: SIGSTOP, the others busy, SIGCONT). PostgreSQL
// only: one node on SQLite never finds its running runs requeued under it.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { testConfig } from "../src/config.ts";
import { get as getSql, run as runSql } from "../src/db/program.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { createWorkflow, seedAcme, until, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, createGates } from "./helpers/gates.ts";
import { call } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

const JSON_CT = { "content-type": "application/json" };

describe.skipIf(!onPostgres)("a node whose running run was requeued under it", () => {
  const gates = createGates();
  const dir = testTempDir("assay-reclaim-");
  let a: RunningServer | null = null;
  let drop: () => Promise<void> = async () => {};
  afterAll(async () => {
    gates.openAll();
    await a?.stop();
    await drop();
    gates.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  test("does not claim it again while its job runs; runs it once that job has ended", async () => {
    const pg = await freshPgDatabase();
    drop = pg.drop;
    a = await startServer(
      testConfig({
        port: 0,
        log_level: "silent",
        rate_limit_disabled: true,
        // A worker for the held run, one for a second execution of it (the bug), one for the quick run.
        workers: 3,
        data_dir: dir,
        database_url: pg.url,
        node_id: "z",
        test_gates_dir: gates.dir,
        // Long: no renewal or recovery pass of its own runs during the test; the test plays them.
        run_lease_ms: 600_000,
      }),
    );
    const t = (await seedAcme(a, "correct horse battery")).token;
    await createWorkflow(a, t, HOLD_WORKFLOW);
    await createWorkflow(a, t, {
      slug: "quick",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const g = gates.gate();
    const held = await call(a, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: t,
      raw: g.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(held.status).toBe(202);
    await g.held();
    // What another node's recovery pass does once this node's lease has run out while it was
    // stopped: the run back in the queue, its claim gone.
    const { db } = a.deps;
    await db.exec(
      runSql(
        "UPDATE runs SET status = 'queued', node_id = NULL, lease_until = NULL WHERE id = ?",
        held.json.id,
      ),
    );
    // A later run, claimed by the same pass that would have taken the older one too.
    a.deps.executor.poke(true);
    const quick = await call(a, "POST", "/api/v1/orgs/acme/workflows/quick/runs/", {
      token: t,
      raw: "{}",
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect((await waitForRun(a, t, quick.json.url)).status).toBe("succeeded");
    const row = () =>
      db.exec(
        getSql<{ status: string; node_id: string | null; attempts: number }>(
          "SELECT status, node_id, attempts FROM runs WHERE id = ?",
          held.json.id,
        ),
      );
    expect(await row()).toEqual({ status: "queued", node_id: null, attempts: 1 });
    expect(g.entered()).toBe(1);
    // The old job ends (its write refused: the run is no longer its claim); then the node runs it.
    g.open();
    expect((await waitForRun(a, t, held.json.url)).status).toBe("succeeded");
    expect(await row()).toEqual({ status: "succeeded", node_id: "z", attempts: 2 });
    // Two executions, one after the other.
    const lines = (f: string) => readFileSync(join(gates.dir, f), "utf8").trim().split("\n");
    const starts = lines(`${g.name}.held`).map((l) => Number(l.split(" ")[2]));
    const ends = existsSync(join(gates.dir, `${g.name}.done`))
      ? lines(`${g.name}.done`).map((l) => Number(l.split(" ")[1]))
      : [];
    expect(starts).toHaveLength(2);
    expect(ends).toHaveLength(2);
    expect(starts[1]!).toBeGreaterThanOrEqual(ends[0]!);
    await until(() => a!.deps.executor.stats().inFlight === 0, "the node's jobs to end");
  }, 60_000);
});
