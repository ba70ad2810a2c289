// A/B of two source trees under measure 1's load (`npm run bench:ab -- <dirA> <dirB>`): both
// servers run at once, pinned to the same core, and wrk alternates between them in short rounds,
// so both see the host's drift in the same minutes — on a shared machine whose speed changes by
// 2× within minutes, the only comparison of two changes that means something. Prints each side's
// CPU µs per run, req/s and p99 per round and their medians, and the paired CPU difference.
// ROUNDS (default 12) and SECS (default 4) set the rounds, CONNS wrk's connections (default 16),
// AB_UNPINNED=1 puts both servers and wrk on every core (measure 11's setting, for HTTP threads and
// the writer thread); it also prints each round's req/s ratio B ÷ A. AB_ENV_A and AB_ENV_B add variables to
// one side's environment ("K=V K2=V2": the same tree twice compares settings such as the
// allocator's). Source trees, not binaries: each is run with `bun <dir>/src/main.ts` (a worktree
// with node_modules).
// Read endpoints: AB_GET=<path under /api/v1/orgs/bench/> (e.g. "runs/?page_size=50" or
// "workflows/") loads that GET instead, after AB_SEED_RUNS sync runs (default 100) and
// AB_SEED_WORKFLOWS more workflows (default 20) are created through the API on each side.
// AB_PG=1 keeps both sides' state in PostgreSQL: a throwaway cluster started here (fsync on, as
// measure 7), one database per side, unpinned (it shares the cores with the servers and wrk); it
// also prints per round each side's statements a run (the server's assay_db_statements_total) and
// the CPU µs a run of the cluster's processes (only one side is loaded at a time), and the paired
// differences of that CPU and of the server's and PostgreSQL's together.
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { SQL } from "bun";
import { type PgCluster, startPgCluster } from "../../test/helpers/pg-cluster.ts";
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import { describeMachine } from "./machine.ts";
import { clusterCpuSeconds, metric } from "./postgres.ts";
import { announced, api, cpuSeconds, initDataDir, pin, tempDir, waitHealthy } from "./server.ts";
import { runWrk } from "./wrk.ts";

const dirs = process.argv.slice(2).map((d) => resolve(d));
if (dirs.length !== 2) {
  console.error("usage: npm run bench:ab -- <source dir A> <source dir B>");
  process.exit(2);
}
const rounds = Number(process.env.ROUNDS ?? 12);
const secs = Number(process.env.SECS ?? 4);
// AB_UNPINNED=1: servers and wrk on every core (HTTP threads, the writer thread: measure 11's setting).
const machine = process.env.AB_UNPINNED === "1" ? { ...describeMachine(), pinned: false } : describeMachine();

interface Side {
  dir: string;
  proc: ReturnType<typeof Bun.spawn>;
  load: Parameters<typeof runWrk>[1];
  cpu: number[];
  /** AB_PG: the cluster's CPU µs and the statements sent, a run. */
  pgCpu: number[];
  statements: number[];
  token: string;
  url: string;
  rps: number[];
  p99: number[];
}

/** "K=V K2=V2" → { K: "V", K2: "V2" }. */
function envOf(spec: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of (spec ?? "").split(/\s+/).filter(Boolean)) {
    const at = kv.indexOf("=");
    if (at < 1) throw new Error(`AB_ENV_*: "${kv}" is not K=V`);
    out[kv.slice(0, at)] = kv.slice(at + 1);
  }
  return out;
}

const get = process.env.AB_GET;
const cluster: PgCluster | null = process.env.AB_PG === "1" ? await startPgCluster({ fsync: true }) : null;
let databases = 0;

/** A new database in the cluster, as the side's ASSAY_DATABASE_URL (none without AB_PG). */
async function databaseEnv(): Promise<Record<string, string>> {
  if (!cluster) return {};
  const name = `ab_${++databases}`;
  const admin = new SQL(`${cluster.baseUrl}postgres`);
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  return { ASSAY_DATABASE_URL: `${cluster.baseUrl}${name}` };
}

/** The state a list reads: sync runs and workflows, through the API, 8 at a time. */
async function seed(url: string, token: string) {
  const runs = Number(process.env.AB_SEED_RUNS ?? 100);
  const workflows = Number(process.env.AB_SEED_WORKFLOWS ?? 20);
  const body = orderDocument();
  const path = `/api/v1/orgs/bench/workflows/${WORKFLOWS.order.slug}/runs/`;
  const jobs: (() => Promise<unknown>)[] = [];
  for (let i = 0; i < workflows; i++)
    jobs.push(() =>
      api(url, token, "POST", "/api/v1/orgs/bench/workflows/", {
        ...WORKFLOWS.order,
        slug: `${WORKFLOWS.order.slug}-${i}`,
        name: `${WORKFLOWS.order.name} ${i}`,
      }),
    );
  for (let i = 0; i < runs; i++)
    jobs.push(async () => {
      const r = await fetch(`${url}${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
        body,
      });
      await r.arrayBuffer();
      if (r.status !== 201) throw new Error(`seeding a run: ${r.status}`);
    });
  const next = async () => {
    for (let job = jobs.shift(); job; job = jobs.shift()) await job();
  };
  await Promise.all(Array.from({ length: 8 }, next));
}

async function start(dir: string, extra: Record<string, string>): Promise<Side> {
  const data = tempDir("ab");
  const db = await databaseEnv();
  // Each side's data dir is made by its own tree: a schema the other side's code wrote is refused.
  const token = initDataDir(`${data}/d`, "bench", db, [process.execPath, `${dir}/src/main.ts`]);
  const proc = Bun.spawn(
    [
      ...pin(machine, machine.serverCore),
      process.execPath,
      `${dir}/src/main.ts`,
      "serve",
      ...(cluster ? [] : ["--data-dir", `${data}/d`]),
      "--port",
      "0",
    ],
    {
      env: {
        ...process.env,
        ASSAY_RATE_LIMIT_DISABLED: "true",
        ASSAY_LOG_LEVEL: "warn",
        ASSAY_WORKERS: "1",
        NODE_ENV: "production",
        ...db,
        ...extra,
      },
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  const url = await announced(proc.stdout as ReadableStream<Uint8Array>, /listening on (http:\/\/\S+)/);
  await waitHealthy(url, performance.now());
  await api(url, token, "POST", "/api/v1/orgs/bench/workflows/", WORKFLOWS.order);
  if (get) await seed(url, token);
  const load = {
    url: get
      ? `${url}/api/v1/orgs/bench/${get}`
      : `${url}/api/v1/orgs/bench/workflows/${WORKFLOWS.order.slug}/runs/`,
    method: get ? ("GET" as const) : ("POST" as const),
    body: orderDocument(),
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    connections: Number(process.env.CONNS ?? 16),
    seconds: secs,
    dir: data,
  };
  return { dir, proc, load, cpu: [], pgCpu: [], statements: [], token, url, rps: [], p99: [] };
}

const median = (a: number[]) => {
  const b = [...a].sort((x, y) => x - y);
  return b.length % 2 ? b[(b.length - 1) / 2]! : (b[b.length / 2 - 1]! + b[b.length / 2]!) / 2;
};

const envs = [envOf(process.env.AB_ENV_A), envOf(process.env.AB_ENV_B)];
let sides: Side[];
try {
  sides = [await start(dirs[0]!, envs[0]!), await start(dirs[1]!, envs[1]!)];
} catch (e) {
  cluster?.stop();
  throw e;
}
try {
  for (const s of sides) await runWrk(machine, { ...s.load, seconds: 6 }); // warm-up
  for (let i = 0; i < rounds; i++) {
    for (const s of i % 2 ? [...sides].reverse() : sides) {
      const sent0 = cluster ? await metric(s.url, s.token, "assay_db_statements_total") : 0;
      const g0 = cluster ? clusterCpuSeconds(cluster.dir) : 0;
      const c0 = cpuSeconds(s.proc.pid);
      const r = await runWrk(machine, s.load);
      const c1 = cpuSeconds(s.proc.pid);
      if (cluster) {
        s.pgCpu.push(((clusterCpuSeconds(cluster.dir) - g0) * 1e6) / r.requests);
        s.statements.push(((await metric(s.url, s.token, "assay_db_statements_total")) - sent0) / r.requests);
      }
      if (r.non2xx) throw new Error(`${s.dir}: ${r.non2xx} answers outside 2xx`);
      s.cpu.push(((c1 - c0) * 1e6) / r.requests);
      s.rps.push(r.rps);
      s.p99.push(r.p99Ms);
    }
  }
  for (const [name, s] of [
    ["A", sides[0]!],
    ["B", sides[1]!],
  ] as const) {
    const round = (a: number[], d = 0) => a.map((x) => x.toFixed(d)).join(" ");
    const extra = process.env[`AB_ENV_${name}`];
    console.log(`${name} ${s.dir}${extra ? ` with ${extra}` : ""}`);
    console.log(`  CPU µs/${get ? "request" : "run"} ${round(s.cpu)} · median ${median(s.cpu).toFixed(0)}`);
    if (cluster) {
      console.log(`  statements/run ${round(s.statements, 2)} · median ${median(s.statements).toFixed(2)}`);
      console.log(`  PostgreSQL CPU µs/run ${round(s.pgCpu)} · median ${median(s.pgCpu).toFixed(0)}`);
    }
    console.log(
      `  req/s ${round(s.rps)} · median ${median(s.rps).toFixed(0)} · p99 ms ${round(s.p99, 1)} · median ${median(s.p99).toFixed(1)}`,
    );
  }
  const ratio = sides[0]!.rps.map((a, i) => sides[1]!.rps[i]! / a);
  console.log(
    `paired req/s ratio B ÷ A per round: ${ratio.map((x) => x.toFixed(2)).join(" ")} · median ${median(ratio).toFixed(2)}`,
  );
  const diff = sides[0]!.cpu.map((a, i) => sides[1]!.cpu[i]! - a);
  const m = median(diff);
  console.log(
    `paired CPU difference B − A per round: ${diff.map((x) => x.toFixed(0)).join(" ")} · median ${m.toFixed(0)} µs (${((m / median(sides[0]!.cpu)) * 100).toFixed(1)} %)`,
  );
  if (cluster) {
    const [a, b] = sides as [Side, Side];
    const pg = a.pgCpu.map((x, i) => b.pgCpu[i]! - x);
    const both = a.pgCpu.map((x, i) => b.pgCpu[i]! + b.cpu[i]! - x - a.cpu[i]!);
    console.log(
      `paired PostgreSQL CPU difference B − A per round: ${pg.map((x) => x.toFixed(0)).join(" ")} · median ${median(pg).toFixed(0)} µs`,
    );
    console.log(
      `paired server + PostgreSQL CPU difference B − A per round: ${both.map((x) => x.toFixed(0)).join(" ")} · median ${median(both).toFixed(0)} µs`,
    );
  }
} finally {
  for (const s of sides) s.proc.kill("SIGINT");
  await Promise.all(sides.map((s) => s.proc.exited));
  for (const s of sides) rmSync(s.load.dir, { recursive: true, force: true });
  cluster?.stop();
}
