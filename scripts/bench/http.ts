// Measure 1: synchronous runs over HTTP (raw POST of a valid 1 KB JSON document, one JSON Schema
// step) against a bare Bun.serve under the same load and pinning. A third server, the floor
// (floor-server.ts), does only the work a sync run needs, hand-written on the same stack: what
// Assay's features cost is the distance from it, what the stack costs is its own ratio. All three
// stay up and wrk alternates between them round by round, so drift on a noisy machine hits all
// sides alike. The fourth, the peer (peer-fastify.mjs, issue #26), is the same work as a team
// would write it on Node with Fastify, Ajv and better-sqlite3; it is skipped, with a note, where
// Node or its packages are missing. Each side's CPU time per request (all threads of its process,
// from /proc) is read around every round.
import { readFileSync } from "node:fs";
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import type { Machine } from "./machine.ts";
import {
  type Proc,
  api,
  cpuSeconds,
  initDataDir,
  peerMissing,
  removeDir,
  startAssay,
  startBaseline,
  startFloor,
  startPeer,
  tempDir,
  threadCpuSeconds,
} from "./server.ts";
import { type WrkResult, runWrk } from "./wrk.ts";

export interface HttpOptions {
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** Compile better-sqlite3 for the Node peer when it is not yet (false in --quick). */
  compilePeer?: boolean;
}

export interface Side {
  rounds: WrkResult[];
  rps: number;
  /** Medians over the rounds. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  /** CPU µs of the server process (all threads) per request, over the rounds. */
  cpuUsPerRequest: number;
  /** The same by thread group (main, workers, jit+gc, other): where a run's CPU goes. */
  cpuUsByThread: Record<string, number>;
  /**
   * The share of the server's core left idle during the rounds (null when not pinned): a server
   * that waits (the group commit's window) is not bound by its CPU (docs/benchmarks.md, 14th pass).
   */
  coreIdle: number | null;
}

export interface HttpResult {
  baseline: Side;
  assay: Side;
  ratio: number;
  /** The same work hand-written on the same stack (floor-server.ts). */
  floor: Side;
  /** Fastify + Ajv + better-sqlite3 on Node (peer-fastify.mjs); null when skipped (`peerSkipped`). */
  peer: Side | null;
  peerSkipped: string | null;
  peakRssBytes: number;
  /** Final runs that did not succeed (must be 0: every document is valid). */
  notSucceeded: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** A round of wrk with the CPU seconds the server spent during it, and its core's idle and total ticks. */
export type Round = WrkResult & {
  cpuSeconds?: number;
  threadSeconds?: Record<string, number>;
  core?: { idle: number; total: number };
};

/** A core's idle and total clock ticks so far (/proc/stat's `cpuN` line). */
export function coreTicks(core: number): { idle: number; total: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8")
      .split("\n")
      .find((l) => l.startsWith(`cpu${core} `));
    if (!line) return null;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    return { idle: f[3]!, total: f.reduce((t, x) => t + x, 0) };
  } catch {
    return null;
  }
}

export function sideOf(rounds: Round[]): Side {
  const requests = rounds.reduce((t, r) => t + r.requests, 0);
  const cpu = rounds.reduce((t, r) => t + (r.cpuSeconds ?? Number.NaN), 0);
  const seconds = rounds.reduce((t, r) => t + r.seconds, 0);
  return {
    rounds,
    rps: requests / seconds,
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    maxMs: Math.max(...rounds.map((r) => r.maxMs)),
    errors: rounds.reduce((t, r) => t + r.non2xx + r.socketErrors, 0),
    cpuUsPerRequest: (cpu / requests) * 1e6,
    cpuUsByThread: Object.fromEntries(
      [...new Set(rounds.flatMap((r) => Object.keys(r.threadSeconds ?? {})))].map((g) => [
        g,
        (rounds.reduce((t, r) => t + (r.threadSeconds?.[g] ?? 0), 0) / requests) * 1e6,
      ]),
    ),
    coreIdle: rounds.every((r) => r.core)
      ? rounds.reduce((t, r) => t + r.core!.idle, 0) /
        Math.max(
          1,
          rounds.reduce((t, r) => t + r.core!.total, 0),
        )
      : null,
  };
}

const count = async (url: string, token: string, query: string) =>
  (await api<{ count: number }>(url, token, "GET", `/api/v1/orgs/bench/runs/?page_size=1${query}`)).count;

export async function measureHttp(m: Machine, o: HttpOptions): Promise<HttpResult> {
  const dir = tempDir("http");
  const body = orderDocument();
  const dataDir = `${dir}/data`;
  const token = initDataDir(dataDir, "bench");
  const base = await startBaseline(m);
  const floor = await startFloor(m, `${dir}/floor`, token);
  let peerSkipped = peerMissing(o.compilePeer ?? true);
  let peer: Proc | null = null;
  if (!peerSkipped)
    try {
      peer = await startPeer(m, `${dir}/peer`, token, WORKFLOWS.order.steps[0].config.schema);
    } catch (e) {
      peerSkipped = `it did not start: ${(e as Error).message}`;
    }
  if (peerSkipped) process.stderr.write(`bench: the Node peer is skipped: ${peerSkipped}\n`);
  const s = await startAssay({ dataDir, machine: m });
  // One wrk round against `p`, with the CPU its process used meanwhile.
  const round = async (p: Proc, load: Parameters<typeof runWrk>[1]): Promise<Round> => {
    const before = cpuSeconds(p.pid);
    const threads = threadCpuSeconds(p.pid);
    const core0 = m.pinned ? coreTicks(m.serverCore) : null;
    const r = await runWrk(m, load);
    const core1 = core0 && coreTicks(m.serverCore);
    const after = threadCpuSeconds(p.pid);
    const threadSeconds = Object.fromEntries(
      Object.entries(after).map(([g, x]) => [g, x - (threads[g] ?? 0)]),
    );
    const core =
      core0 && core1 ? { idle: core1.idle - core0.idle, total: core1.total - core0.total } : undefined;
    return { ...r, cpuSeconds: cpuSeconds(p.pid) - before, threadSeconds, core };
  };
  try {
    await api(s.url, token, "POST", "/api/v1/orgs/bench/workflows/", WORKFLOWS.order);
    const baseLoad = { url: `${base.url}/`, body, headers: {}, connections: o.connections, dir };
    const assayLoad = {
      url: `${s.url}/api/v1/orgs/bench/workflows/${WORKFLOWS.order.slug}/runs/`,
      body,
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      connections: o.connections,
      dir,
    };
    const floorLoad = { ...assayLoad, url: `${floor.url}/` };
    const peerLoad = peer && { ...assayLoad, url: `${peer.url}/` };
    // Warm-up: JIT tiers (the optimizing tier compiles the hot path for ~10 s), the compiled
    // schema, SQLite's page cache.
    await runWrk(m, { ...baseLoad, seconds: o.warmupSeconds });
    await runWrk(m, { ...floorLoad, seconds: o.warmupSeconds });
    if (peerLoad) await runWrk(m, { ...peerLoad, seconds: o.warmupSeconds });
    await runWrk(m, { ...assayLoad, seconds: o.warmupSeconds });
    const b: Round[] = [];
    const f: Round[] = [];
    const p: Round[] = [];
    const a: Round[] = [];
    for (let i = 0; i < o.rounds; i++) {
      b.push(await round(base, { ...baseLoad, seconds: o.seconds }));
      f.push(await round(floor, { ...floorLoad, seconds: o.seconds }));
      if (peer && peerLoad) p.push(await round(peer, { ...peerLoad, seconds: o.seconds }));
      a.push(await round(s, { ...assayLoad, seconds: o.seconds }));
    }
    const peakRssBytes = s.peakRss();
    // wrk stops with requests in flight: let their runs finish before counting outcomes.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await count(s.url, token, "&status=queued")) > 0) await Bun.sleep(50);
    while (Date.now() < deadline && (await count(s.url, token, "&status=running")) > 0) await Bun.sleep(50);
    const notSucceeded = (await count(s.url, token, "")) - (await count(s.url, token, "&status=succeeded"));
    const assay = sideOf(a);
    const baseline = sideOf(b);
    return {
      baseline,
      assay,
      ratio: assay.rps / baseline.rps,
      floor: sideOf(f),
      peer: peer ? sideOf(p) : null,
      peerSkipped,
      peakRssBytes,
      notSucceeded,
    };
  } finally {
    await s.stop();
    await peer?.stop();
    await floor.stop();
    await base.stop();
    removeDir(dir);
  }
}
