// Measure 11 (issue #26): every core for sync runs. The same sync runs as measure 1 against three
// Assay servers on every core, with wrk unpinned too, in alternating rounds: everything on the
// main thread (1 HTTP thread, no writer thread); N HTTP threads (ASSAY_HTTP_THREADS, default: the
// machine's cores) and the writer thread; 1 HTTP thread and the writer thread (src/db/writer.ts). What is compared:
// req/s, and CPU µs per run over all threads (what scaling to more cores is projected from, since
// on a 2-core machine wrk takes a share of the cores the servers need). Which thread served what
// comes from the server's own counter, assay_http_thread_requests_total.
//
// Then, where cores can be pinned, the same one-thread and writer-thread servers "placed": the
// main thread alone on the server core, every other thread of the process (the writer, the
// validation worker, the checkpoint thread, the JIT) moved to wrk's core after the warm-up — what
// a machine with a free core for the writer looks like, as far as 2 cores allow. Unplaced on 2
// cores the threads and wrk share both cores and the writer's gain cannot show (docs/benchmarks.md,
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
}

export interface ThreadsResult {
  threads: number;
  /** Everything on the main thread (ASSAY_HTTP_THREADS=1, ASSAY_WRITER_THREAD=off). */
  one: Side;
  /** N HTTP threads and the writer thread. */
  many: Side;
  /** One HTTP thread and the writer thread (src/db/writer.ts). */
  writer: Side;
  /** Requests served during the rounds by each HTTP thread of the N-thread server, and how. */
  served: Record<string, Record<string, number>>;
  notSucceeded: number;
  /** µs of the main thread per run the other threads served (its share as the one writer). */
  writerUsPerRelayedRun: number | null;
  /** The main thread alone on the server core, the rest of the process on wrk's; null when not pinned. */
  placed: { one: Side; writer: Side } | null;
}

async function threadCounts(url: string, token: string): Promise<Record<string, Record<string, number>>> {
  const r = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  const out: Record<string, Record<string, number>> = {};
  for (const m of (await r.text()).matchAll(/^assay_http_thread_requests_total\{([^}]*)\} (\d+)/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const t = labels.thread ?? "?";
    out[t] = { ...out[t], [labels.path ?? "?"]: Number(m[2]) };
  }
  return out;
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
    // 0: everything on the main thread; 1: N HTTP threads and the writer thread; 2: the writer
    // thread alone (src/db/writer.ts).
    const sides = [
      { n: 1, writer: "off" },
      { n: o.threads, writer: "on" },
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
    const load = (i: number) => syncRunLoad(servers[i]!, body, o.connections, dir);
    const round = (i: number) =>
      measuredRound(unpinned, servers[i]!.proc.pid, { ...load(i), seconds: o.seconds }, null);
    for (const i of [0, 1, 2]) await runWrk(unpinned, { ...load(i), seconds: o.warmupSeconds });
    const many = servers[1]!;
    const countsBefore = await threadCounts(many.proc.url, many.token);
    const a: Round[] = [];
    const b: Round[] = [];
    const c: Round[] = [];
    for (let k = 0; k < o.rounds; k++) {
      a.push(await round(0));
      b.push(await round(1));
      c.push(await round(2));
    }
    const served = diff(countsBefore, await threadCounts(many.proc.url, many.token));
    let notSucceeded = 0;
    for (const s of servers) notSucceeded += await notSucceededOn(s);
    const one = sideOf(a);
    const side = sideOf(b);
    // The main thread's CPU per run is C1 for the runs it served itself (the 1-thread server's
    // figure) plus W for each run another thread served (admission and the commit): solve for W.
    const runs = (t: string) => Object.values(served[t] ?? {}).reduce((x, y) => x + y, 0);
    const total = Object.keys(served).reduce((x, t) => x + runs(t), 0);
    const own = runs("0");
    const relayed = total - own;
    const mainSeconds = b.reduce((x, r) => x + (r.threadSeconds?.main ?? 0), 0);
    const writerUsPerRelayedRun =
      relayed > 0 ? ((mainSeconds - (own * (one.cpuUsByThread.main ?? 0)) / 1e6) / relayed) * 1e6 : null;
    const placed = m.pinned ? await measurePlaced(m, o, dir, servers) : null;
    if (placed) notSucceeded += placed.notSucceeded;
    return {
      threads: o.threads,
      one,
      many: side,
      writer: sideOf(c),
      served,
      notSucceeded,
      writerUsPerRelayedRun,
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
 * Runs/s a server of P HTTP threads could reach on P cores, bounded by the CPU a run costs on all
 * threads and by the main thread (it serves 1/P of the runs whole and is the writer for the rest).
 */
export function project(r: ThreadsResult, cores: number): number | null {
  const c = r.many.cpuUsPerRequest;
  const w = r.writerUsPerRelayedRun;
  const c1 = r.one.cpuUsByThread.main;
  if (w === null || c1 === undefined || !(c > 0)) return null;
  const mainPerRun = c1 / cores + (w * (cores - 1)) / cores;
  return Math.min((cores * 1e6) / c, 1e6 / mainPerRun);
}
