// Measure 7: the same server on PostgreSQL. Sync runs (wrk, as measure 1) on Assay with
// PostgreSQL against Assay with SQLite, alternating round by round, and async intake and drain
// (as measure 2) on PostgreSQL. PostgreSQL is a throwaway cluster started here (Debian's
// postgresql package) with its defaults for durability (fsync and synchronous_commit on), left
// unpinned: on this 2-core machine it shares the cores with the server and the load generator.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { startPgCluster } from "../../test/helpers/pg-cluster.ts";
import { type AsyncResult, measureAsync } from "./async.ts";
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import type { HttpOptions, Round, Side } from "./http.ts";
import { sideOf } from "./http.ts";
import type { Machine } from "./machine.ts";
import { api, cpuSeconds, initDataDir, removeDir, startAssay, tempDir } from "./server.ts";
import { runWrk } from "./wrk.ts";

/** A counter of the server's /metrics (the sum of its series). */
export async function metric(url: string, token: string, name: string): Promise<number> {
  const text = await (
    await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  ).text();
  let n = 0;
  for (const line of text.split("\n"))
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      n += Number(line.slice(line.lastIndexOf(" ") + 1));
  return n;
}

/** CPU seconds of the cluster's postmaster and its live processes (the backends, the WAL writer, …). */
export function clusterCpuSeconds(dir: string): number {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return Number.NaN;
  }
  const children = Bun.spawnSync(["pgrep", "-P", String(pid)])
    .stdout.toString()
    .trim()
    .split(/\s+/);
  let total = 0;
  for (const p of [String(pid), ...children].filter(Boolean)) {
    try {
      total += cpuSeconds(Number(p));
    } catch {
      // A process that ended between the listing and the read.
    }
  }
  return total;
}

export interface PgResult {
  sqlite: Side;
  postgres: Side;
  /** What a sync run on PostgreSQL costs, over the rounds: statements and transactions sent, CPU µs of PostgreSQL's processes. */
  perRun: { statements: number; transactions: number; pgCpuUs: number };
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
      return { s, load, token };
    };
    const lite = await start(`${dir}/sqlite`, {});
    const pg = await start(`${dir}/pg`, pgEnv);
    const a: Round[] = [];
    const b: Round[] = [];
    const sent = { statements: 0, transactions: 0, pgCpu: 0 };
    // One round with the server's CPU time (all threads) and, on PostgreSQL, what it sent and what
    // PostgreSQL's processes spent (they share the machine's cores with the server and wrk).
    const round = async (side: typeof lite, onPg: boolean): Promise<Round> => {
      const counts = async () =>
        onPg
          ? {
              s: await metric(side.s.url, side.token, "assay_db_statements_total"),
              t: await metric(side.s.url, side.token, "assay_db_transactions_total"),
              c: clusterCpuSeconds(cluster.dir),
            }
          : { s: 0, t: 0, c: 0 };
      const before = await counts();
      const c0 = cpuSeconds(side.s.pid);
      const r = await runWrk(m, { ...side.load, seconds: o.seconds });
      const cpu = cpuSeconds(side.s.pid) - c0;
      const after = await counts();
      sent.statements += after.s - before.s;
      sent.transactions += after.t - before.t;
      sent.pgCpu += after.c - before.c;
      return { ...r, cpuSeconds: cpu };
    };
    try {
      await runWrk(m, { ...lite.load, seconds: o.warmupSeconds });
      await runWrk(m, { ...pg.load, seconds: o.warmupSeconds });
      for (let i = 0; i < o.rounds; i++) {
        a.push(await round(lite, false));
        b.push(await round(pg, true));
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
    const runs = b.reduce((t, r) => t + r.requests, 0);
    const perRun = {
      statements: sent.statements / runs,
      transactions: sent.transactions / runs,
      pgCpuUs: (sent.pgCpu / runs) * 1e6,
    };
    return { sqlite, postgres, perRun, ratio: postgres.rps / sqlite.rps, async };
  } finally {
    cluster.stop();
    removeDir(dir);
  }
}
