import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testConfig } from "../src/config.ts";
import { all as allOf } from "../src/db/program.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { seedAcme } from "./helpers/fixtures.ts";
import { call } from "./helpers/server.ts";

const RUNS = 10_000;
const nodes: RunningServer[] = [];
const dirs: string[] = [];
let drop: () => Promise<void> = async () => {};
let token = "";

async function until(cond: () => Promise<boolean>, what: string, ms = 240_000) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

describe.skipIf(!onPostgres)("two nodes, one queue", () => {
  beforeAll(async () => {
    const pg = await freshPgDatabase();
    drop = pg.drop;
    for (const node of ["node-a", "node-b"]) {
      const dir = mkdtempSync(join(tmpdir(), "assay-nodes-"));
      dirs.push(dir);
      nodes.push(
        await startServer(
          testConfig({
            port: 0,
            log_level: "silent",
            rate_limit_disabled: true,
            workers: 1,
            max_queue: RUNS * 2,
            data_dir: dir,
            database_url: pg.url,
            node_id: node,
          }),
        ),
      );
    }
    token = (await seedAcme(nodes[0]!)).token;
  }, 60_000);

  afterAll(async () => {
    for (const n of nodes) await n.stop();
    await drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("10,000 runs: each claimed and executed exactly once, by one of the two", async () => {
    let next = 0;
    const client = async () => {
      while (next < RUNS) {
        const i = next++;
        const r = await call(nodes[i % 2]!, "POST", "/api/v1/orgs/acme/workflows/q/runs/", {
          token,
          raw: JSON.stringify({ i }),
          headers: { "content-type": "application/json", prefer: "respond-async" },
        });
        expect(r.status).toBe(202);
      }
    };
    await Promise.all(Array.from({ length: 16 }, client));
    const db = nodes[0]!.deps.db;
    const rows = () =>
      db.exec(allOf<{ status: string; n: number }>("SELECT status, count(*) AS n FROM runs GROUP BY status"));
    await until(async () => (await rows()).every((r) => r.status === "succeeded"), "every run to finish");
    expect(await rows()).toEqual([{ status: "succeeded", n: RUNS }]);
    // Claimed once each: a second claim would count a second attempt.
    expect(await db.exec(allOf("SELECT attempts, count(*) AS n FROM runs GROUP BY attempts"))).toEqual([
      { attempts: 1, n: RUNS },
    ]);
    // Both claimed, and what each node wrote is what each counted.
    const byNode = await db.exec(
      allOf<{ node_id: string; n: number }>(
        "SELECT node_id, count(*) AS n FROM runs GROUP BY node_id ORDER BY node_id",
      ),
    );
    expect(byNode.map((r) => r.node_id)).toEqual(["node-a", "node-b"]);
    const finished = async (s: RunningServer) => {
      const r = await call(s, "GET", "/metrics", { token });
      return Number(
        /^assay_runs_finished_total\{node="[^"]+",status="succeeded"\} (\d+)$/m.exec(r.text)?.[1] ?? 0,
      );
    };
    const counted = [await finished(nodes[0]!), await finished(nodes[1]!)];
    expect(counted[0]! + counted[1]!).toBe(RUNS);
    expect(counted).toEqual(byNode.map((r) => r.n));
  }, 600_000);
});
