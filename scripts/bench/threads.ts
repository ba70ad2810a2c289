// Measure 11 (issue #26): every core for sync runs. The same sync runs as measure 1 against three
// Assay servers on every core, with wrk unpinned too, in alternating rounds: everything on the
// main thread (1 HTTP thread, no writer thread); N HTTP threads (ASSAY_HTTP_THREADS, default: the
// machine's cores) and the writer thread; 1 HTTP thread and the writer thread (src/db/writer.ts). What is compared:
// req/s, and CPU µs per run over all threads (what scaling to more cores is projected from, since
// on a 2-core machine wrk takes a share of the cores the servers need). Which thread served what
// comes from the server's own counter, assay_http_thread_requests_total.
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import { type Round, type Side, sideOf } from "./http.ts";
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
    const load = (i: number) => ({
      url: `${servers[i]!.proc.url}/api/v1/orgs/bench/workflows/${WORKFLOWS.order.slug}/runs/`,
      body,
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${servers[i]!.token}` },
      connections: o.connections,
      dir,
    });
    const round = async (i: number): Promise<Round> => {
      const pid = servers[i]!.proc.pid;
      const before = cpuSeconds(pid);
      const threads = threadCpuSeconds(pid);
      const r = await runWrk(unpinned, { ...load(i), seconds: o.seconds });
      const after = threadCpuSeconds(pid);
      const threadSeconds = Object.fromEntries(
        Object.entries(after).map(([g, x]) => [g, x - (threads[g] ?? 0)]),
      );
      return { ...r, cpuSeconds: cpuSeconds(pid) - before, threadSeconds };
    };
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
    for (const s of servers) {
      const count = async (q: string) =>
        (await api<{ count: number }>(s.proc.url, s.token, "GET", `/api/v1/orgs/bench/runs/?page_size=1${q}`))
          .count;
      notSucceeded += (await count("")) - (await count("&status=succeeded"));
    }
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
    return {
      threads: o.threads,
      one,
      many: side,
      writer: sideOf(c),
      served,
      notSucceeded,
      writerUsPerRelayedRun,
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
