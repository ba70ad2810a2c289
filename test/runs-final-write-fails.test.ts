// A run whose final write fails for good (an error that is not the database being away, so it
// is not retried) must not stay `running` for as long as its node lives: the node kept renewing
// its claim on it, so no recovery pass ever took it back. Now the claim is let go: once the lease
// runs out the run is put back in the queue and executed again (the attempt counts, so a run
// that keeps failing this way ends in error after ASSAY_MAX_ATTEMPTS). The failure is injected
// by a trigger in the test's database, on the run's first final write only. PostgreSQL only (one
// node on SQLite recovers its runs at its next start).
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { testConfig } from "../src/config.ts";
import { get as getSql, run as runSql } from "../src/db/program.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { createWorkflow, seedAcme, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, createGates } from "./helpers/gates.ts";
import { call } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

describe.skipIf(!onPostgres)("a run whose final write fails for good", () => {
  const gates = createGates();
  const dir = testTempDir("assay-final-fails-");
  let s: RunningServer | null = null;
  let drop: () => Promise<void> = async () => {};
  afterAll(async () => {
    gates.openAll();
    await s?.stop();
    await drop();
    gates.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  test("is taken back by recovery once its lease runs out, and executed again", async () => {
    const pg = await freshPgDatabase();
    drop = pg.drop;
    s = await startServer(
      testConfig({
        port: 0,
        log_level: "silent",
        rate_limit_disabled: true,
        workers: 1,
        data_dir: dir,
        database_url: pg.url,
        node_id: "f",
        test_gates_dir: gates.dir,
        // Short, so that recovery comes soon; not shorter: a busy machine must still renew it in time.
        run_lease_ms: 3000,
      }),
    );
    const t = (await seedAcme(s, "correct horse battery")).token;
    await createWorkflow(s, t, HOLD_WORKFLOW);
    const g = gates.gate();
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: t,
      raw: g.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    await g.held();
    // The run's first final write fails, and so does the group commit's retry of it alone (a
    // sequence is not rolled back with the write).
    const { db } = s.deps;
    await db.exec(runSql("CREATE SEQUENCE test_final_writes"));
    await db.exec(
      runSql(`CREATE FUNCTION test_fail_first_final() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.id = '${r.json.id}' AND NEW.status NOT IN ('queued', 'running') AND nextval('test_final_writes') <= 2 THEN
            RAISE EXCEPTION 'injected failure of the final write';
          END IF;
          RETURN NEW;
        END $$`),
    );
    await db.exec(
      runSql(
        "CREATE TRIGGER test_fail_first_final BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION test_fail_first_final()",
      ),
    );
    g.open();
    const done = await waitForRun(s, t, r.json.url, 30_000);
    expect(done.status).toBe("succeeded");
    const row = await db.exec(
      getSql<{ attempts: number; written: string }>(
        "SELECT attempts, (SELECT last_value FROM test_final_writes)::text AS written FROM runs WHERE id = ?",
        r.json.id,
      ),
    );
    expect(row).toEqual({ attempts: 2, written: "3" });
  }, 60_000);
});
