// Measure 8: several nodes on one PostgreSQL database (docs/scaling.md). For 1, 2 and 3 nodes
// (the compiled binary, unpinned: on a 2-core machine they share the cores with PostgreSQL and
// the client), the same burst of async runs is submitted round-robin and drained; runs/s from
// the first submission to the last final state, the ratio to one node, and what each run cost
// the database: statements (each a round trip) and transactions, read from the nodes' metrics.
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SQL } from "bun";
import { startPgCluster } from "../../test/helpers/pg-cluster.ts";
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import type { Machine } from "./machine.ts";
import { type Proc, api, initDataDir, removeDir, startAssay, tempDir } from "./server.ts";

export interface NodesRow {
  nodes: number;
  runs: number;
  runsPerSecond: number;
  statementsPerRun: number;
  transactionsPerRun: number;
}

export interface NodesResult {
  rows: NodesRow[];
}

const metric = async (url: string, token: string, name: string) => {
  const text = await (
    await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  ).text();
  return Number(new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
};

async function submitAll(urls: string[], n: number, bodyFile: string, headers: Record<string, string>) {
  const script = resolve(import.meta.dir, "submit.ts");
  const per = Math.ceil(n / urls.length);
  await Promise.all(
    urls.map(async (url) => {
      const p = Bun.spawn(
        [
          process.execPath,
          script,
          url,
          String(per),
          String(Math.max(2, 16 / urls.length)),
          bodyFile,
          JSON.stringify(headers),
        ],
        {
          stdout: "pipe",
          stderr: "inherit",
        },
      );
      await new Response(p.stdout).text();
      if ((await p.exited) !== 0) throw new Error("the submission client failed");
    }),
  );
  return per * urls.length;
}

export async function measureNodes(m: Machine, o: { runs: number; counts: number[] }): Promise<NodesResult> {
  const cluster = await startPgCluster({ fsync: true });
  const dir = tempDir("nodes");
  const bodyFile = join(dir, "order.json");
  writeFileSync(bodyFile, orderDocument());
  const rows: NodesRow[] = [];
  try {
    const admin = new SQL(`${cluster.baseUrl}postgres`);
    for (const count of o.counts) {
      const name = `bench_nodes_${count}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      const env = {
        ASSAY_DATABASE_URL: `${cluster.baseUrl}${name}`,
        ASSAY_MAX_QUEUE: String(2 * o.runs + 1000),
      };
      const token = initDataDir(join(dir, `init-${count}`), "bench", env);
      const procs: Proc[] = [];
      try {
        for (let i = 0; i < count; i++)
          procs.push(
            await startAssay({
              dataDir: join(dir, `n${count}-${i}`),
              machine: { ...m, pinned: false },
              env: { ...env, ASSAY_NODE_ID: `bench-${i}` },
            }),
          );
        await api(procs[0]!.url, token, "POST", "/api/v1/orgs/bench/workflows/", WORKFLOWS.order);
        const urls = procs.map((p) => `${p.url}/api/v1/orgs/bench/workflows/${WORKFLOWS.order.slug}/runs/`);
        const headers = {
          "content-type": "application/json",
          authorization: `Bearer ${token}`,
          prefer: "respond-async",
        };
        const pending = async () => {
          let n = 0;
          for (const st of ["queued", "running"])
            n += (
              await api<{ count: number }>(
                procs[0]!.url,
                token,
                "GET",
                `/api/v1/orgs/bench/runs/?page_size=1&status=${st}`,
              )
            ).count;
          return n;
        };
        const drained = async () => {
          const deadline = Date.now() + 600_000;
          while ((await pending()) > 0) {
            if (Date.now() > deadline) throw new Error("the queue did not drain in time");
            await Bun.sleep(20);
          }
        };
        await submitAll(urls, Math.min(300, o.runs), bodyFile, headers); // warm-up
        await drained();
        const before = { s: 0, t: 0 };
        for (const p of procs) {
          before.s += await metric(p.url, token, "assay_db_statements_total");
          before.t += await metric(p.url, token, "assay_db_transactions_total");
        }
        const t0 = performance.now();
        const runs = await submitAll(urls, o.runs, bodyFile, headers);
        await drained();
        const seconds = (performance.now() - t0) / 1000;
        const after = { s: 0, t: 0 };
        for (const p of procs) {
          after.s += await metric(p.url, token, "assay_db_statements_total");
          after.t += await metric(p.url, token, "assay_db_transactions_total");
        }
        rows.push({
          nodes: count,
          runs,
          runsPerSecond: runs / seconds,
          // The drain's polling (2 list reads every 20 ms) is in these counts too: an upper bound.
          statementsPerRun: (after.s - before.s) / runs,
          transactionsPerRun: (after.t - before.t) / runs,
        });
      } finally {
        for (const p of procs) await p.stop();
      }
    }
    await admin.close();
    return { rows };
  } finally {
    cluster.stop();
    removeDir(dir);
  }
}
