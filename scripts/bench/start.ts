// Measure 5: from exec of the binary to the first 200 of /healthz, on an empty data dir and on
// one holding many finished runs (seeded directly, see seed.ts). Median of a few starts each.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Machine } from "./machine.ts";
import { seedRuns } from "./seed.ts";
import { removeDir, startAssay, tempDir } from "./server.ts";

export interface StartResult {
  emptyMs: number;
  fullMs: number;
  runs: number;
  seedSeconds: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function timeStart(m: Machine, dataDir: string): Promise<number> {
  const s = await startAssay({ dataDir, machine: m });
  await s.stop();
  return s.startMs;
}

export async function measureStart(m: Machine, o: { runs: number; repeats: number }): Promise<StartResult> {
  const dir = tempDir("start");
  try {
    const empty: number[] = [];
    for (let i = 0; i < o.repeats; i++) {
      const d = join(dir, `empty-${i}`);
      mkdirSync(d);
      empty.push(await timeStart(m, d));
    }
    const full = join(dir, "full");
    const seedSeconds = await seedRuns(m, full, o.runs);
    const fullTimes: number[] = [];
    for (let i = 0; i < o.repeats; i++) fullTimes.push(await timeStart(m, full));
    return { emptyMs: median(empty), fullMs: median(fullTimes), runs: o.runs, seedSeconds };
  } finally {
    removeDir(dir);
  }
}
