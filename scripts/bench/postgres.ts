// Measure 7: the same server on PostgreSQL. Sync runs (wrk, as measure 1) on Assay with
// PostgreSQL against Assay with SQLite, alternating round by round, and async intake and drain
// (as measure 2) on PostgreSQL. PostgreSQL is a throwaway cluster started here (Debian's
// postgresql package) with its defaults for durability (fsync and synchronous_commit on), left
// unpinned: on this 2-core machine it shares the cores with the server and the load generator.
import { SQL } from "bun";
import { startPgCluster } from "../../test/helpers/pg-cluster.ts";
import { type AsyncResult, measureAsync } from "./async.ts";
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import type { HttpOptions, Side } from "./http.ts";
import { sideOf } from "./http.ts";
import type { Machine } from "./machine.ts";
import { api, initDataDir, removeDir, startAssay, tempDir } from "./server.ts";
import { type WrkResult, runWrk } from "./wrk.ts";

export interface PgResult {
  sqlite: Side;
  postgres: Side;
  /** PostgreSQL ÷ SQLite throughput of sync runs. */
  ratio: number;
  async: AsyncResult;
}

export async function measurePostgres(m: Machine, o: HttpOptions & { runs: number }): Promise<PgResult> {
  const cluster = await startPgCluster({ fsync: true });
  const dir = tempDir("pg");
  try {
    const admin = new SQL(`${cluster.baseUrl}postgres`);
    await admin.unsafe("CREATE DATABASE bench_http");
    await admin.unsafe("CREATE DATABASE bench_async");
    await admin.close();
    const pgEnv = { ASSAY_DATABASE_URL: `${cluster.baseUrl}bench_http` };
    const body = orderDocument();
    const start = async (dataDir: string, env: Record<string, string>) => {
      const token = initDataDir(dataDir, "bench", env);
      const s = await startAssay({ dataDir, machine: m, env });
      await api(s.url, token, "POST", "/api/v1/orgs/bench/workflows/", WORKFLOWS.order);
      const load = {
        url: `${s.url}/api/v1/orgs/bench/workflows/${WORKFLOWS.order.slug}/runs/`,
        body,
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
        connections: o.connections,
        dir,
      };
      return { s, load };
    };
    const lite = await start(`${dir}/sqlite`, {});
    const pg = await start(`${dir}/pg`, pgEnv);
    const a: WrkResult[] = [];
    const b: WrkResult[] = [];
    try {
      await runWrk(m, { ...lite.load, seconds: o.warmupSeconds });
      await runWrk(m, { ...pg.load, seconds: o.warmupSeconds });
      for (let i = 0; i < o.rounds; i++) {
        a.push(await runWrk(m, { ...lite.load, seconds: o.seconds }));
        b.push(await runWrk(m, { ...pg.load, seconds: o.seconds }));
      }
    } finally {
      await lite.s.stop();
      await pg.s.stop();
    }
    const sqlite = sideOf(a);
    const postgres = sideOf(b);
    const async = await measureAsync(m, {
      runs: o.runs,
      connections: o.connections,
      env: { ASSAY_DATABASE_URL: `${cluster.baseUrl}bench_async` },
    });
    return { sqlite, postgres, ratio: postgres.rps / sqlite.rps, async };
  } finally {
    cluster.stop();
    removeDir(dir);
  }
}
