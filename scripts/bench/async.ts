// Measure 2: async intake and drain. N submissions with `Prefer: respond-async` over 16
// connections while the worker drains the queue; then the time until every run is final. The
// baseline is the same client, count and pinning against the bare Bun.serve.
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import type { Machine } from "./machine.ts";
import { api, initDataDir, pin, removeDir, startAssay, startBaseline, tempDir } from "./server.ts";

export interface AsyncResult {
  runs: number;
  baselineRps: number;
  /** 202 answers per second while the worker drains. */
  submitRps: number;
  /** Runs final per second, from the first submission to the last final state. */
  completedRps: number;
  /** Seconds the queue took to empty after the last submission was answered. */
  drainTailSeconds: number;
  accepted: number;
  peakRssBytes: number;
}

interface Submitted {
  seconds: number;
  statuses: Record<string, number>;
}

async function submit(
  m: Machine,
  url: string,
  n: number,
  connections: number,
  bodyFile: string,
  headers: Record<string, string>,
): Promise<Submitted> {
  const script = resolve(import.meta.dir, "submit.ts");
  const p = Bun.spawn(
    [
      ...pin(m, m.loadCore),
      process.execPath,
      script,
      url,
      String(n),
      String(connections),
      bodyFile,
      JSON.stringify(headers),
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error("the submission client failed");
  return JSON.parse(out.trim().split("\n").at(-1)!) as Submitted;
}

export async function measureAsync(
  m: Machine,
  o: { runs: number; connections: number; env?: Record<string, string> },
): Promise<AsyncResult> {
  const dir = tempDir("async");
  const bodyFile = join(dir, "order.json");
  writeFileSync(bodyFile, orderDocument());
  try {
    const base = await startBaseline(m);
    let baselineRps: number;
    try {
      await submit(m, `${base.url}/`, Math.min(2000, o.runs), o.connections, bodyFile, {});
      const b = await submit(m, `${base.url}/`, o.runs, o.connections, bodyFile, {});
      baselineRps = o.runs / b.seconds;
    } finally {
      await base.stop();
    }
    const dataDir = join(dir, "data");
    const token = initDataDir(dataDir, "bench", o.env);
    // The whole burst must fit the queue: the measure is throughput, not backpressure.
    const s = await startAssay({
      dataDir,
      machine: m,
      env: { ...o.env, ASSAY_MAX_QUEUE: String(2 * o.runs + 1000) },
    });
    try {
      await api(s.url, token, "POST", "/api/v1/orgs/bench/workflows/", WORKFLOWS.order);
      const url = `${s.url}/api/v1/orgs/bench/workflows/${WORKFLOWS.order.slug}/runs/`;
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
              s.url,
              token,
              "GET",
              `/api/v1/orgs/bench/runs/?page_size=1&status=${st}`,
            )
          ).count;
        return n;
      };
      const drained = async (deadlineMs: number) => {
        while ((await pending()) > 0) {
          if (Date.now() > deadlineMs) throw new Error("the queue did not drain in time");
          await Bun.sleep(20);
        }
      };
      // Warm-up, drained before the clock starts.
      await submit(m, url, Math.min(500, o.runs), o.connections, bodyFile, headers);
      await drained(Date.now() + 120_000);
      const t0 = performance.now();
      const sub = await submit(m, url, o.runs, o.connections, bodyFile, headers);
      const answered = performance.now();
      await drained(Date.now() + 600_000);
      const done = performance.now();
      return {
        runs: o.runs,
        baselineRps,
        submitRps: o.runs / sub.seconds,
        completedRps: o.runs / ((done - t0) / 1000),
        drainTailSeconds: (done - answered) / 1000,
        accepted: sub.statuses["202"] ?? 0,
        peakRssBytes: s.peakRss(),
      };
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dir);
  }
}
