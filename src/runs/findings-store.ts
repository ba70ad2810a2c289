// SQL for a run's findings (migration 0007). They are stored apart from the run row, in chunks of
// FINDINGS_CHUNK per step, in order: the first findings of a run, or one page of them, parse a few
// rows, never all of a run's findings — a list or a run answer costs the same for a run of three
// findings and one of 100,000 (issue #19). Writes happen inside the run store's transactions.
import type { Database } from "bun:sqlite";
import type { Finding } from "../validators/types.ts";
import type { Run, RunStep } from "./types.ts";

export const FINDINGS_CHUNK = 200;

export interface Chunk {
  step: number;
  chunk: number;
  json: string;
}

/**
 * Beyond this many findings a run's chunks are serialized a slice at a time, yielding to other
 * requests in between: 100,000 findings are ~50 ms of JSON.stringify, which must not be one block.
 */
const SERIALIZE_IN_ONE_GO = 5000;

function* chunksOf(steps: readonly RunStep[]): Generator<Chunk> {
  for (let i = 0; i < steps.length; i++) {
    const f = steps[i]!.findings;
    for (let c = 0; c * FINDINGS_CHUNK < f.length; c++)
      yield {
        step: i,
        chunk: c,
        json: JSON.stringify(f.slice(c * FINDINGS_CHUNK, (c + 1) * FINDINGS_CHUNK)),
      };
  }
}

async function serializeInSlices(steps: readonly RunStep[]): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for (const c of chunksOf(steps)) {
    out.push(c);
    if (out.length % (SERIALIZE_IN_ONE_GO / FINDINGS_CHUNK) === 0) await new Promise((r) => setImmediate(r));
  }
  return out;
}

export function createFindingStore(db: Database) {
  const insertChunk = db.prepare<never, [string, number, number, string]>(
    "INSERT INTO run_findings (run_id, step_index, chunk, findings) VALUES (?, ?, ?, ?)",
  );
  const deleteChunks = db.prepare<never, [string]>("DELETE FROM run_findings WHERE run_id = ?");
  const chunksOfRun = db.prepare<{ step_index: number; chunk: number; findings: string }, [string]>(
    "SELECT step_index, chunk, findings FROM run_findings WHERE run_id = CAST(? AS TEXT) ORDER BY step_index, chunk",
  );
  const chunksOfStep = db.prepare<{ chunk: number; findings: string }, [string, number, number, number]>(
    "SELECT chunk, findings FROM run_findings WHERE run_id = CAST(? AS TEXT) AND step_index = CAST(? AS INTEGER) AND chunk >= CAST(? AS INTEGER) AND chunk <= CAST(? AS INTEGER) ORDER BY chunk",
  );

  return {
    /**
     * Each step's findings as JSON chunks, made before the write's transaction. The common run (a
     * few findings, or none) is serialized at once and synchronously: no await on the hot path.
     */
    serialize(steps: readonly RunStep[]): Chunk[] | Promise<Chunk[]> {
      let total = 0;
      for (const s of steps) total += s.findings.length;
      return total > SERIALIZE_IN_ONE_GO ? serializeInSlices(steps) : [...chunksOf(steps)];
    },
    /** A new run's chunks (inside the caller's transaction). */
    insert(runId: string, chunks: readonly Chunk[]) {
      for (const c of chunks) insertChunk.run(runId, c.step, c.chunk, c.json);
    },
    /** A run's final chunks; rows of an earlier write would be stale (inside the transaction). */
    replace(runId: string, chunks: readonly Chunk[]) {
      deleteChunks.run(runId);
      for (const c of chunks) insertChunk.run(runId, c.step, c.chunk, c.json);
    },
    /** The run with its first findings, at most `limit` in all, first steps first. */
    first(run: Run, limit: number): Run {
      let left = limit;
      if (left <= 0 || !run.steps.some((s) => (s.findings_count ?? 0) > 0)) return run;
      const steps = run.steps.map((s) => ({ ...s, findings: [] as Finding[] }));
      // Rows come in (step, chunk) order; reading stops as soon as the budget is spent.
      for (const row of chunksOfRun.iterate(run.id)) {
        const step = steps[row.step_index];
        if (!step) continue;
        const part = JSON.parse(row.findings) as Finding[];
        const take = Math.min(part.length, left);
        for (let k = 0; k < take; k++) step.findings.push(part[k]!);
        left -= take;
        if (left <= 0) break;
      }
      return { ...run, steps };
    },
    /**
     * Findings [offset, offset + limit) of one step (its index in the run's steps), read from the
     * chunks that hold them: at most limit / FINDINGS_CHUNK + 2 rows, whatever the run holds.
     */
    async page(runId: string, stepIndex: number, offset: number, limit: number): Promise<Finding[]> {
      if (limit <= 0) return [];
      const first = Math.floor(offset / FINDINGS_CHUNK);
      const last = Math.floor((offset + limit - 1) / FINDINGS_CHUNK);
      const out: Finding[] = [];
      for (const row of chunksOfStep.iterate(runId, stepIndex, first, last)) {
        const part = JSON.parse(row.findings) as Finding[];
        const base = row.chunk * FINDINGS_CHUNK;
        const to = Math.min(part.length, offset + limit - base);
        for (let k = Math.max(0, offset - base); k < to; k++) out.push(part[k]!);
      }
      return out;
    },
  };
}
