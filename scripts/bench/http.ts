// Measure 1: synchronous runs over HTTP (raw POST of a valid 1 KB JSON document, one JSON Schema
// step) against a bare Bun.serve under the same load and pinning. A third server, the floor
// (floor-server.ts), does only the work a sync run needs, hand-written on the same stack: what
// Assay's features cost is the distance from it, what the stack costs is its own ratio. All three
// stay up and wrk alternates between them round by round, so drift on a noisy machine hits all
// sides alike.
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import type { Machine } from "./machine.ts";
import { api, initDataDir, removeDir, startAssay, startBaseline, startFloor, tempDir } from "./server.ts";
import { type WrkResult, runWrk } from "./wrk.ts";

export interface HttpOptions {
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

export interface Side {
  rounds: WrkResult[];
  rps: number;
  /** Medians over the rounds. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
}

export interface HttpResult {
  baseline: Side;
  assay: Side;
  ratio: number;
  /** The same work hand-written on the same stack (floor-server.ts). */
  floor: Side;
  peakRssBytes: number;
  /** Final runs that did not succeed (must be 0: every document is valid). */
  notSucceeded: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export function sideOf(rounds: WrkResult[]): Side {
  const requests = rounds.reduce((t, r) => t + r.requests, 0);
  const seconds = rounds.reduce((t, r) => t + r.seconds, 0);
  return {
    rounds,
    rps: requests / seconds,
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    maxMs: Math.max(...rounds.map((r) => r.maxMs)),
    errors: rounds.reduce((t, r) => t + r.non2xx + r.socketErrors, 0),
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
  const s = await startAssay({ dataDir, machine: m });
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
    // Warm-up: JIT tiers (the optimizing tier compiles the hot path for ~10 s), the compiled
    // schema, SQLite's page cache.
    await runWrk(m, { ...baseLoad, seconds: o.warmupSeconds });
    await runWrk(m, { ...floorLoad, seconds: o.warmupSeconds });
    await runWrk(m, { ...assayLoad, seconds: o.warmupSeconds });
    const b: WrkResult[] = [];
    const f: WrkResult[] = [];
    const a: WrkResult[] = [];
    for (let i = 0; i < o.rounds; i++) {
      b.push(await runWrk(m, { ...baseLoad, seconds: o.seconds }));
      f.push(await runWrk(m, { ...floorLoad, seconds: o.seconds }));
      a.push(await runWrk(m, { ...assayLoad, seconds: o.seconds }));
    }
    const peakRssBytes = s.peakRss();
    // wrk stops with requests in flight: let their runs finish before counting outcomes.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await count(s.url, token, "&status=queued")) > 0) await Bun.sleep(50);
    while (Date.now() < deadline && (await count(s.url, token, "&status=running")) > 0) await Bun.sleep(50);
    const notSucceeded = (await count(s.url, token, "")) - (await count(s.url, token, "&status=succeeded"));
    const assay = sideOf(a);
    const baseline = sideOf(b);
    return { baseline, assay, ratio: assay.rps / baseline.rps, floor: sideOf(f), peakRssBytes, notSucceeded };
  } finally {
    await s.stop();
    await floor.stop();
    await base.stop();
    removeDir(dir);
  }
}
