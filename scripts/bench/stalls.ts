// Measure 8 (issue #19): does any request hold the HTTP thread? /healthz is probed every 10 ms
// (scripts/bench/probe.ts, its own process) while the server is under one of two loads, and its
// p99 compared with the same probe on the idle server:
//   a. 10 viewers list runs without pause, over runs of 100,000 findings each (10 text_rules steps,
//      max_findings 10,000): a list must answer from step summaries, never parse findings;
//   b. 4 clients send 24 MB envelopes whose content is a JSON array: the envelope is parsed,
//      serialized and hashed on the intake thread, not the HTTP thread.
// Targets: p99 ≤ 50 ms under a, ≤ 100 ms under b. Rate limits are off (trusted benchmark).
import { join, resolve } from "node:path";
import type { Machine } from "./machine.ts";
import { api, initDataDir, pin, removeDir, startAssay, startUploadFloor, tempDir } from "./server.ts";

export interface Probe {
  n: number;
  failures: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface ListStall {
  runs: number;
  findingsPerRun: number;
  viewers: number;
  seedSeconds: number;
  lists: number;
  listP50Ms: number;
  listP99Ms: number;
  idle: Probe;
  loaded: Probe;
}

export interface EnvelopeStall {
  clients: number;
  bytes: number;
  sent: number;
  statuses: Record<string, number>;
  requestP50Ms: number;
  idle: Probe;
  loaded: Probe;
  /** The same uploads to a bare server that only reads them (upload-floor.ts). */
  floor: { sent: number; loaded: Probe };
}

export interface StallResult {
  list: ListStall;
  envelopes: EnvelopeStall;
}

/**
 * The server is not pinned to one core here: what is measured is whether its HTTP thread stays
 * free while other threads (intake, validation, checkpoints) work, and on a 2-core machine those
 * threads need the other core. ASSAY_BENCH_PIN_STALLS=1 pins it like measures 1–5.
 */
const PINNED = process.env.ASSAY_BENCH_PIN_STALLS === "1";

const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! : Number.NaN;

async function probe(m: Machine, url: string, seconds: number): Promise<Probe> {
  const p = Bun.spawn(
    [
      ...pin(m, m.loadCore),
      process.execPath,
      resolve(import.meta.dir, "probe.ts"),
      url,
      String(seconds),
      "10",
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const out = await new Response(p.stdout).text();
  await p.exited;
  const { latencies, failures } = JSON.parse(out.trim()) as { latencies: number[]; failures: number };
  return {
    n: latencies.length,
    failures,
    p50Ms: pct(latencies, 0.5),
    p99Ms: pct(latencies, 0.99),
    maxMs: latencies.at(-1) ?? Number.NaN,
  };
}

/** Runs `worker` in `n` loops until `stop` resolves; returns each request's duration (ms). */
async function loops(n: number, stop: Promise<unknown>, worker: () => Promise<string>) {
  let done = false;
  void stop.then(() => {
    done = true;
  });
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (!done) {
        const t = performance.now();
        const status = await worker().catch((e) => `error: ${(e as Error).message}`);
        times.push(performance.now() - t);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { times: times.sort((a, b) => a - b), statuses };
}

/** A text document that breaks max_line_length 1 on every one of its `lines` lines. */
const linesDocument = (lines: number) => "xx\n".repeat(lines);

export async function measureListStall(
  m: Machine,
  o: { runs: number; findingsPerStep: number; viewers: number; seconds: number },
): Promise<ListStall> {
  const dir = tempDir("stall-list");
  try {
    const dataDir = join(dir, "data");
    const token = initDataDir(dataDir, "bench");
    const s = await startAssay({ dataDir, machine: m, pinned: PINNED });
    try {
      const step = (i: number) => ({
        name: `lines ${i}`,
        validator: "text_rules",
        config: { max_line_length: 1, max_findings: o.findingsPerStep },
      });
      await api(s.url, token, "POST", "/api/v1/orgs/bench/workflows/", {
        slug: "many-findings",
        name: "Bench: 10 steps of findings",
        allowed_file_types: ["TEXT"],
        fail_fast: false,
        steps: Array.from({ length: 10 }, (_, i) => step(i + 1)),
      });
      const t0 = performance.now();
      const body = linesDocument(o.findingsPerStep);
      for (let i = 0; i < o.runs; i++) {
        const res = await fetch(`${s.url}/api/v1/orgs/bench/workflows/many-findings/runs/`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "text/plain", prefer: "wait=60" },
          body,
        });
        const run = (await res.json()) as { status: string; summary: { errors: number } };
        if (res.status !== 201 || run.summary.errors !== 10 * o.findingsPerStep)
          throw new Error(`seeding: ${res.status} ${JSON.stringify(run).slice(0, 200)}`);
      }
      const seedSeconds = (performance.now() - t0) / 1000;
      const idle = await probe(m, s.url, Math.min(5, o.seconds));
      const list = () =>
        fetch(`${s.url}/api/v1/orgs/bench/runs/?page_size=${Math.min(200, o.runs)}`, {
          headers: { authorization: `Bearer ${token}` },
        }).then(async (r) => {
          await r.arrayBuffer();
          return String(r.status);
        });
      const probing = probe(m, s.url, o.seconds);
      const load = await loops(o.viewers, probing, list);
      const loaded = await probing;
      if (Object.keys(load.statuses).some((k) => k !== "200"))
        throw new Error(`run lists: ${JSON.stringify(load.statuses)}`);
      return {
        runs: o.runs,
        findingsPerRun: 10 * o.findingsPerStep,
        viewers: o.viewers,
        seedSeconds,
        lists: load.times.length,
        listP50Ms: pct(load.times, 0.5),
        listP99Ms: pct(load.times, 0.99),
        idle,
        loaded,
      };
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dir);
  }
}

/** A JSON envelope of about `bytes` whose content is an array of small records. */
export function envelopeDocument(bytes: number): Uint8Array<ArrayBuffer> {
  const head = '{"content_type":"application/json","filename":"big.json","content":[';
  const parts: string[] = [head];
  let size = head.length + 2;
  for (let i = 0; size < bytes - 100; i++) {
    const rec = `${i ? "," : ""}{"id":${i},"name":"item ${i}","tags":["a","b"],"ok":true}`;
    parts.push(rec);
    size += rec.length;
  }
  parts.push("]}");
  return new TextEncoder().encode(parts.join(""));
}

export async function measureEnvelopeStall(
  m: Machine,
  o: { clients: number; bytes: number; seconds: number },
): Promise<EnvelopeStall> {
  const dir = tempDir("stall-envelope");
  try {
    const dataDir = join(dir, "data");
    const token = initDataDir(dataDir, "bench");
    const s = await startAssay({ dataDir, machine: m, pinned: PINNED });
    try {
      await api(s.url, token, "POST", "/api/v1/orgs/bench/workflows/", {
        slug: "big-json",
        name: "Bench: large JSON envelopes",
        allowed_file_types: ["JSON"],
        steps: [{ name: "syntax", validator: "syntax", config: {} }],
      });
      const body = envelopeDocument(o.bytes);
      const floor = await uploadFloor(m, body, o);
      const idle = await probe(m, s.url, Math.min(5, o.seconds));
      const send = () =>
        fetch(`${s.url}/api/v1/orgs/bench/workflows/big-json/runs/`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body,
        }).then(async (r) => {
          await r.arrayBuffer();
          return String(r.status);
        });
      const probing = probe(m, s.url, o.seconds);
      const load = await loops(o.clients, probing, send);
      const loaded = await probing;
      return {
        clients: o.clients,
        bytes: body.byteLength,
        sent: load.times.length,
        statuses: load.statuses,
        requestP50Ms: pct(load.times, 0.5),
        idle,
        loaded,
        floor,
      };
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dir);
  }
}

/** The same clients and bodies against the bare reading server, probed the same way. */
async function uploadFloor(
  m: Machine,
  body: Uint8Array<ArrayBuffer>,
  o: { clients: number; seconds: number },
) {
  const f = await startUploadFloor(m, PINNED);
  try {
    const send = () =>
      fetch(`${f.url}/upload`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }).then(async (r) => {
        await r.arrayBuffer();
        return String(r.status);
      });
    const probing = probe(m, f.url, o.seconds);
    const load = await loops(o.clients, probing, send);
    return { sent: load.times.length, loaded: await probing };
  } finally {
    await f.stop();
  }
}
