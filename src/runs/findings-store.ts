// SQL for a run's findings (migration 0007). They are stored apart from the run row, in chunks of
// FINDINGS_CHUNK per step, in order: the first findings of a run, or one page of them, parse a few
// rows, never all of a run's findings — a list or a run answer costs the same for a run of three
// findings and one of 100,000 (issue #19). Writes happen inside the run store's transactions.
import { type Db, type Program, all, run } from "../db/program.ts";
import type { Statement } from "../db/writer-protocol.ts";
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

export function createFindingStore(db: Db) {
  const INSERT = "INSERT INTO run_findings (run_id, step_index, chunk, findings) VALUES (?, ?, ?, ?)";
  // Bound through CAST: SQLite keeps the plan of a statement whose parameters are all cast.
  const CHUNKS_OF_STEP =
    "SELECT chunk, findings FROM run_findings WHERE run_id = CAST(? AS TEXT) AND step_index = CAST(? AS INTEGER) AND chunk >= CAST(? AS INTEGER) AND chunk <= CAST(? AS INTEGER) ORDER BY chunk";

  const statements = (runId: string, chunks: readonly Chunk[]): Statement[] =>
    chunks.map((c) => ({ sql: INSERT, params: [runId, c.step, c.chunk, c.json] }));
  function* insertAll(runId: string, chunks: readonly Chunk[]): Program<void> {
    for (const st of statements(runId, chunks)) yield* run(st.sql, ...st.params);
  }

  /** Findings [from, to) of one step, from the chunks that hold them. */
  function* slice(runId: string, stepIndex: number, from: number, to: number): Program<Finding[]> {
    if (to <= from) return [];
    const rows = yield* all<{ chunk: number; findings: string }>(
      CHUNKS_OF_STEP,
      runId,
      stepIndex,
      Math.floor(from / FINDINGS_CHUNK),
      Math.floor((to - 1) / FINDINGS_CHUNK),
    );
    const out: Finding[] = [];
    for (const row of rows) {
      const part = JSON.parse(row.findings) as Finding[];
      const base = Number(row.chunk) * FINDINGS_CHUNK;
      const end = Math.min(part.length, to - base);
      for (let k = Math.max(0, from - base); k < end; k++) out.push(part[k]!);
    }
    return out;
  }

  return {
    /**
     * Each step's findings as JSON chunks, made before the write's transaction. The common run (a
     * few findings, or none) is serialized at once and synchronously: no await on the hot path.
     */
    serialize(steps: readonly RunStep[]): Chunk[] | Promise<Chunk[]> {
      let total = 0;
      for (const s of steps) total += s.findings.length;
      // A passing run has none: no generator for it (every sync run of the inline lane).
      if (total === 0) return [];
      return total > SERIALIZE_IN_ONE_GO ? serializeInSlices(steps) : [...chunksOf(steps)];
    },
    /** A new run's chunks (inside the caller's transaction). */
    insert: insertAll,
    /** The same rows as statements (for the writer thread, src/db/writer.ts). */
    statements,
    /** A run's final chunks; rows of an earlier write would be stale (inside the transaction). */
    *replace(runId: string, chunks: readonly Chunk[]): Program<void> {
      yield* run("DELETE FROM run_findings WHERE run_id = ?", runId);
      yield* insertAll(runId, chunks);
    },
    /**
     * The run with its first findings, at most `limit` in all, first steps first: only the chunks
     * that hold them are read (each step's findings_count says how far to go).
     */
    async first(r: Run, limit: number): Promise<Run> {
      const wanted: [number, number][] = [];
      let left = limit;
      for (let i = 0; i < r.steps.length && left > 0; i++) {
        const n = Math.min(r.steps[i]!.findings_count ?? 0, left);
        if (n > 0) wanted.push([i, n]);
        left -= n;
      }
      if (!wanted.length) return r;
      const found = await db.exec(
        (function* () {
          const out: Finding[][] = [];
          for (const [i, n] of wanted) out.push(yield* slice(r.id, i, 0, n));
          return out;
        })(),
      );
      const steps = r.steps.map((s) => ({ ...s, findings: [] as Finding[] }));
      wanted.forEach(([i], k) => {
        steps[i]!.findings = found[k]!;
      });
      return { ...r, steps };
    },
    /**
     * Findings [offset, offset + limit) of one step (its index in the run's steps), read from the
     * chunks that hold them: at most limit / FINDINGS_CHUNK + 2 rows, whatever the run holds.
     */
    async page(runId: string, stepIndex: number, offset: number, limit: number): Promise<Finding[]> {
      return db.exec(slice(runId, stepIndex, offset, offset + limit));
    },
  };
}
