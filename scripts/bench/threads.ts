// Measure 11 (issue #26): every core for sync runs. The same sync runs as measure 1 against
// Assay servers on every core, with wrk unpinned too, in alternating rounds: everything on the
// main thread (ASSAY_HTTP_THREADS=1, ASSAY_WRITER_THREAD=off); N HTTP threads (ASSAY_HTTP_THREADS,
// default: the machine's cores), each serving the sync runs it can finish itself on a connection
// of its own (src/http/threads/thread-runs.ts); 1 HTTP thread and the writer thread
// (src/db/writer.ts). The one-thread and N-thread servers take a second load too, at
// `highConnections` (64): on a 2-core machine whose other core wrk also needs, 16 connections
// leave each of two threads idle part of the time (a closed loop of 16 clients). What is
// compared: req/s, and CPU µs per run over all threads. Which thread served what comes from the
// server's own counter, assay_http_thread_requests_total, and the serial share of the writes from
// assay_db_write_lock_held_seconds_total (the SQLite write lock, held by one thread at a time).
//
// Then, where cores can be pinned, the one-thread and writer-thread servers "placed": the main
// thread alone on the server core, every other thread of the process (the writer, the validation
// worker, the checkpoint thread, the JIT) moved to wrk's core after the warm-up — what a machine
// with a free core for the writer looks like, as far as 2 cores allow (docs/benchmarks.md,
// seventeenth pass).
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import { type Round, type Side, coreTicks, sideOf } from "./http.ts";
import type { Machine } from "./machine.ts";
import {
  type Proc,
  api,
  cpuSeconds,
  initDataDir,
  removeDir,
  startAssay,
  tempDir,
  threadCpuSeconds,
} from "./server.ts";
import { readdirSync } from "node:fs";
import { runWrk } from "./wrk.ts";
import { portLockPath, removeStaleLockFile } from "../../src/http/threads/port-lock.ts";

export interface ThreadsOptions {
  threads: number;
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** The second load of the one-thread and N-thread servers. */
  highConnections: number;
}

export interface ThreadsResult {
  threads: number;
  connections: number;
  highConnections: number;
  /** Everything on the main thread (ASSAY_HTTP_THREADS=1, ASSAY_WRITER_THREAD=off). */
  one: Side;
  /** N HTTP threads, each serving its own sync runs. */
  many: Side;
  /** The same two servers under `highConnections`. */
  oneHigh: Side;
  manyHigh: Side;
  /** One HTTP thread and the writer thread (src/db/writer.ts). */
  writer: Side;
  /** Requests served during the rounds by each HTTP thread of the N-thread server, and how. */
  served: Record<string, Record<string, number>>;
  notSucceeded: number;
  /** µs the N-thread server's write lock was held per run, under `highConnections`: the serial share. */
  lockUsPerRun: number | null;
  /** The main thread alone on the server core, the rest of the process on wrk's; null when not pinned. */
  placed: { one: Side; writer: Side } | null;
}

/** The server's Prometheus text. */
async function metricsText(url: string, token: string): Promise<string> {
  return (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
}

async function threadCounts(url: string, token: string): Promise<Record<string, Record<string, number>>> {
  const out: Record<string, Record<string, number>> = {};
  for (const m of (await metricsText(url, token)).matchAll(
    /^assay_http_thread_requests_total\{([^}]*)\} (\d+)/gm,
  )) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const t = labels.thread ?? "?";
    out[t] = { ...out[t], [labels.path ?? "?"]: Number(m[2]) };
  }
  return out;
}

/** Seconds the server's write lock has been held (null without HTTP threads, or on PostgreSQL). */
async function lockHeld(url: string, token: string): Promise<number | null> {
  const m = /^assay_db_write_lock_held_seconds_total(?:\{[^}]*\})? (\S+)$/m.exec(
    await metricsText(url, token),
  );
  return m ? Number(m[1]) : null;
}
const diff = (a: Record<string, Record<string, number>>, b: Record<string, Record<string, number>>) =>
  Object.fromEntries(
    Object.entries(b).map(([t, paths]) => [
      t,
      Object.fromEntries(Object.entries(paths).map(([p, n]) => [p, n - (a[t]?.[p] ?? 0)])),
    ]),
  );

export async function measureThreads(m: Machine, o: ThreadsOptions): Promise<ThreadsResult> {
  const dir = tempDir("threads");
  const body = orderDocument();
  const unpinned = { ...m, pinned: false };
  const servers: Array<{ proc: Proc & { startMs: number }; token: string }> = [];
  try {
    // 0: everything on the main thread; 1: N HTTP threads; 2: the writer thread (src/db/writer.ts).
    const sides = [
      { n: 1, writer: "off" },
      { n: o.threads, writer: "off" },
      { n: 1, writer: "on" },
    ];
    for (const [i, { n, writer }] of sides.entries()) {
      const dataDir = `${dir}/data-${i}`;
      const token = initDataDir(dataDir, "bench");
      const proc = await startAssay({
        dataDir,
        machine: unpinned,
        pinned: false,
        env: { ASSAY_HTTP_THREADS: String(n), ASSAY_WORKERS: "1", ASSAY_WRITER_THREAD: writer },
      });
      servers.push({ proc, token });
      await api(proc.url, token, "POST", "/api/v1/orgs/bench/workflows/", WORKFLOWS.order);
    }
    const load = (i: number, connections: number) => syncRunLoad(servers[i]!, body, connections, dir);
    const round = (i: number, connections = o.connections) =>
      measuredRound(unpinned, servers[i]!.proc.pid, { ...load(i, connections), seconds: o.seconds }, null);
    for (const i of [0, 1, 2])
      await runWrk(unpinned, { ...load(i, o.connections), seconds: o.warmupSeconds });
    const many = servers[1]!;
    const countsBefore = await threadCounts(many.proc.url, many.token);
    const [a, b, c, aHigh, bHigh]: Round[][] = [[], [], [], [], []];
    let lockSeconds = 0;
    for (let k = 0; k < o.rounds; k++) {
      a.push(await round(0));
      b.push(await round(1));
      c.push(await round(2));
      aHigh.push(await round(0, o.highConnections));
      const held0 = await lockHeld(many.proc.url, many.token);
      bHigh.push(await round(1, o.highConnections));
      const held1 = await lockHeld(many.proc.url, many.token);
      lockSeconds += held0 === null || held1 === null ? Number.NaN : held1 - held0;
    }
    const served = diff(countsBefore, await threadCounts(many.proc.url, many.token));
    let notSucceeded = 0;
    for (const s of servers) notSucceeded += await notSucceededOn(s);
    const highRuns = bHigh.reduce((t, r) => t + r.requests, 0);
    const placed = m.pinned ? await measurePlaced(m, o, dir, servers) : null;
    if (placed) notSucceeded += placed.notSucceeded;
    return {
      threads: o.threads,
      connections: o.connections,
      highConnections: o.highConnections,
      one: sideOf(a),
      many: sideOf(b),
      oneHigh: sideOf(aHigh),
      manyHigh: sideOf(bHigh),
      writer: sideOf(c),
      served,
      notSucceeded,
      lockUsPerRun: Number.isFinite(lockSeconds) && highRuns > 0 ? (lockSeconds / highRuns) * 1e6 : null,
      placed: placed && { one: placed.one, writer: placed.writer },
    };
  } finally {
    for (const s of servers) {
      await s.proc.stop();
      // A server with HTTP threads leaves its port's lock file on purpose (port-lock.ts).
      const u = new URL(s.proc.url);
      removeStaleLockFile(portLockPath(u.hostname, Number(u.port)));
    }
    removeDir(dir);
  }
}

/** Runs of the server's org that did not succeed (every document is valid: must be 0). */
async function notSucceededOn(s: { proc: Proc; token: string }): Promise<number> {
  const count = async (q: string) =>
    (await api<{ count: number }>(s.proc.url, s.token, "GET", `/api/v1/orgs/bench/runs/?page_size=1${q}`))
      .count;
  return (await count("")) - (await count("&status=succeeded"));
}

/** Measure 1's sync runs against one of these servers. */
function syncRunLoad(s: { proc: Proc; token: string }, body: string, connections: number, dir: string) {
  return {
    url: `${s.proc.url}/api/v1/orgs/bench/workflows/${WORKFLOWS.order.slug}/runs/`,
    body,
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${s.token}` },
    connections,
    dir,
  };
}

/** One wrk round with the CPU the server spent by thread group, and `core`'s idle ticks when given. */
async function measuredRound(
  m: Machine,
  pid: number,
  load: Parameters<typeof runWrk>[1],
  core: number | null,
): Promise<Round> {
  const before = cpuSeconds(pid);
  const threads = threadCpuSeconds(pid);
  const core0 = core === null ? null : coreTicks(core);
  const r = await runWrk(m, load);
  const core1 = core === null ? null : coreTicks(core);
  const after = threadCpuSeconds(pid);
  const threadSeconds = Object.fromEntries(Object.entries(after).map(([g, x]) => [g, x - (threads[g] ?? 0)]));
  const ticks =
    core0 && core1 ? { idle: core1.idle - core0.idle, total: core1.total - core0.total } : undefined;
  return { ...r, cpuSeconds: cpuSeconds(pid) - before, threadSeconds, core: ticks };
}

/** Moves every thread of `pid` but its main thread to `core` (taskset -p), the main thread to `main`. */
function place(pid: number, main: number, core: number) {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const to = tid === String(pid) ? main : core;
    const r = Bun.spawnSync(["taskset", "-p", "-c", String(to), tid], { stdout: "ignore", stderr: "pipe" });
    // A thread that ended between the listing and the call is no failure.
    if (r.exitCode !== 0 && readdirSync(`/proc/${pid}/task`).includes(tid))
      throw new Error(`taskset -p ${tid}: ${r.stderr.toString().trim()}`);
  }
}

/** The one-thread and writer-thread servers with the threads placed (see the head of this file). */
async function measurePlaced(
  m: Machine,
  o: ThreadsOptions,
  dir: string,
  servers: Array<{ proc: Proc & { startMs: number }; token: string }>,
): Promise<{ one: Side; writer: Side; notSucceeded: number }> {
  const body = orderDocument();
  const placed: typeof servers = [];
  for (const [i, writer] of ["off", "on"].entries()) {
    const dataDir = `${dir}/placed-${i}`;
    const token = initDataDir(dataDir, "bench");
    const proc = await startAssay({
      dataDir,
      machine: m,
      env: { ASSAY_HTTP_THREADS: "1", ASSAY_WORKERS: "1", ASSAY_WRITER_THREAD: writer },
    });
    // Stopped with the others (measureThreads' finally).
    servers.push({ proc, token });
    placed.push({ proc, token });
    await api(proc.url, token, "POST", "/api/v1/orgs/bench/workflows/", WORKFLOWS.order);
  }
  const load = (i: number) => syncRunLoad(placed[i]!, body, o.connections, dir);
  // Warm-up first: the JIT's threads exist by then, and are placed with the rest.
  for (const i of [0, 1]) {
    await runWrk(m, { ...load(i), seconds: o.warmupSeconds });
    place(placed[i]!.proc.pid, m.serverCore, m.loadCore);
  }
  const round = (i: number) =>
    measuredRound(m, placed[i]!.proc.pid, { ...load(i), seconds: o.seconds }, m.serverCore);
  const a: Round[] = [];
  const b: Round[] = [];
  for (let k = 0; k < o.rounds; k++) {
    a.push(await round(0));
    b.push(await round(1));
  }
  let notSucceeded = 0;
  for (const s of placed) notSucceeded += await notSucceededOn(s);
  return { one: sideOf(a), writer: sideOf(b), notSucceeded };
}

/**
 * Runs/s a server of P HTTP threads could reach on P cores: bounded by the CPU a run costs on all
 * threads (under the high load, where the threads are busiest) and by the write lock, which one
 * thread holds at a time (10⁶ ÷ its µs per run). A projection, not a measurement: it assumes the
 * threads contend for nothing else.
 */
export function project(r: ThreadsResult, cores: number): number | null {
  const c = r.manyHigh.cpuUsPerRequest;
  const w = r.lockUsPerRun;
  if (w === null || !(w > 0) || !(c > 0)) return null;
  return Math.min((cores * 1e6) / c, 1e6 / w);
}
