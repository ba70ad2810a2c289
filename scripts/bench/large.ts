// Measure 3 (and the second half of 4): large documents. For each kind, a fresh server (so its
// peak RSS belongs to that document alone), a raw POST that waits for the result, and the step's
// own duration as the server reports it (steps[].duration_ms). JSON is compared with decoding +
// JSON.parse of the same bytes on the same core; XML and CSV are reported in MB/s.
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { WORKFLOWS, csvDocument, jsonArrayDocument, xmlDocument } from "./fixtures.ts";
import type { Machine } from "./machine.ts";
import { api, initDataDir, pin, removeDir, startAssay, tempDir } from "./server.ts";

export interface LargeDoc {
  kind: "JSON" | "XML" | "CSV";
  bytes: number;
  /** Median server-side step time over the repeats, ms. */
  stepMs: number;
  /** Wall time of the whole request (upload, intake, commit, run, answer), median, ms. */
  requestMs: number;
  mbPerSec: number;
  peakRssBytes: number;
  status: string;
}

export interface LargeResult {
  docs: LargeDoc[];
  /** decode + JSON.parse of the JSON document, median, ms (pinned to the server core, between runs). */
  parseMs: number;
  /** stepMs of the JSON document ÷ parseMs. */
  jsonRatio: number;
}

const KINDS = [
  { kind: "JSON", wf: WORKFLOWS.jsonArray, type: "application/json", make: jsonArrayDocument },
  { kind: "XML", wf: WORKFLOWS.xml, type: "application/xml", make: xmlDocument },
  { kind: "CSV", wf: WORKFLOWS.csv, type: "text/csv", make: csvDocument },
] as const;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

interface RunOut {
  status: string;
  steps: { duration_ms: number | null }[];
}

export async function measureLarge(m: Machine, o: { bytes: number; repeats: number }): Promise<LargeResult> {
  const dir = tempDir("large");
  const docs: LargeDoc[] = [];
  let parseMs = Number.NaN;
  try {
    for (const k of KINDS) {
      const text = k.make(o.bytes);
      const file = join(dir, `doc.${k.kind.toLowerCase()}`);
      writeFileSync(file, text);
      const body = Buffer.from(text);
      const parses: number[] = [];
      // Interleaved with the server's runs, so load drift on the machine hits both alike.
      const parse = () => {
        if (k.kind !== "JSON") return;
        const p = Bun.spawnSync([
          ...pin(m, m.serverCore),
          process.execPath,
          resolve(import.meta.dir, "parse-baseline.ts"),
          file,
        ]);
        parses.push(Number(p.stdout.toString().trim()));
      };
      const dataDir = join(dir, `data-${k.kind}`);
      const token = initDataDir(dataDir, "bench");
      const s = await startAssay({ dataDir, machine: m });
      try {
        await api(s.url, token, "POST", "/api/v1/orgs/bench/workflows/", k.wf);
        const steps: number[] = [];
        const walls: number[] = [];
        let status = "";
        for (let i = 0; i < o.repeats; i++) {
          parse();
          const t = performance.now();
          const res = await fetch(`${s.url}/api/v1/orgs/bench/workflows/${k.wf.slug}/runs/`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": k.type, prefer: "wait=60" },
            body,
          });
          const run = (await res.json()) as RunOut;
          walls.push(performance.now() - t);
          if (res.status !== 201)
            throw new Error(`${k.kind}: ${res.status} ${JSON.stringify(run).slice(0, 300)}`);
          status = run.status;
          steps.push(run.steps[0]?.duration_ms ?? Number.NaN);
        }
        if (parses.length) parseMs = median(parses);
        const stepMs = median(steps);
        docs.push({
          kind: k.kind,
          bytes: body.byteLength,
          stepMs,
          requestMs: median(walls),
          mbPerSec: body.byteLength / 2 ** 20 / (stepMs / 1000),
          peakRssBytes: s.peakRss(),
          status,
        });
      } finally {
        await s.stop();
      }
    }
  } finally {
    removeDir(dir);
  }
  const json = docs.find((d) => d.kind === "JSON")!;
  return { docs, parseMs, jsonRatio: json.stepMs / parseMs };
}
