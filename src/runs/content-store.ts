// SQL for large submitted content (migration 0007): more than SLICED_ABOVE_BYTES is stored in
// slices of CONTENT_CHUNK_BYTES, each written in its own short transaction, so no single write holds the
// HTTP thread (the only writer) for long — one INSERT of 24 MB did (issue #19). Reads come a slice
// at a time as well, with other requests served in between. Content up to 1 MiB stays in
// submissions.content, in the same transaction as its run: the common run is unchanged.
import { type Db, type Program, get, run } from "../db/program.ts";
import type { WriteBatcher } from "./batch.ts";
import type { FileType } from "../validators/types.ts";

/** Content larger than this is sliced; never a run executed from memory (DIRECT_MAX_BYTES). */
export const SLICED_ABOVE_BYTES = 1024 * 1024;
/**
 * One slice: one write of at most this much. 256 KiB is ~1 ms of SQLite on a quiet core and
 * ~15 ms on a saturated 2-core VM (1 MiB slices: 15–70 ms there, docs/benchmarks.md).
 */
export const CONTENT_CHUNK_BYTES = 256 * 1024;

export const isSliced = (bytes: number) => bytes > SLICED_ABOVE_BYTES;

/** Slices one orphan statement reads at most (a range of content_chunks' key). */
export const ORPHAN_SCAN = 2_000;
/** The orphan sweep's statements, exported for the test of their plans. */
export const ORPHANS =
  "DELETE FROM content_chunks WHERE content_chunks.run_id >= CAST(? AS TEXT) AND content_chunks.run_id < CAST(? AS TEXT) AND NOT EXISTS (SELECT 1 FROM runs r JOIN submissions s ON s.id = r.submission_id WHERE r.id = content_chunks.run_id AND s.content_chunks > 0)";
export const ORPHAN_RANGE_END =
  "SELECT run_id FROM content_chunks WHERE run_id > CAST(? AS TEXT) AND run_id < CAST(? AS TEXT) ORDER BY run_id LIMIT 1 OFFSET CAST(? AS INTEGER)";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createContentStore(db: Db, batch: WriteBatcher) {
  const SLICE =
    "SELECT bytes FROM content_chunks WHERE run_id = CAST(? AS TEXT) AND seq = CAST(? AS INTEGER)";
  const REMOVE = "DELETE FROM content_chunks WHERE run_id = ?";
  const slice = (runId: string, seq: number) => db.exec(get<{ bytes: Uint8Array }>(SLICE, runId, seq));

  return {
    /**
     * Writes the content of a future run in slices, each in its own group commit; returns their
     * count. The run's own rows are written afterwards (a crash in between leaves slices without
     * a run, which the next start deletes).
     */
    async write(runId: string, bytes: Uint8Array): Promise<number> {
      const count = Math.ceil(bytes.byteLength / CONTENT_CHUNK_BYTES);
      try {
        for (let seq = 0; seq < count; seq++) {
          const part = bytes.subarray(seq * CONTENT_CHUNK_BYTES, (seq + 1) * CONTENT_CHUNK_BYTES);
          await batch.write(() =>
            run("INSERT INTO content_chunks (run_id, seq, bytes) VALUES (?, ?, ?)", runId, seq, part),
          );
        }
      } catch (e) {
        await batch.write(() => run(REMOVE, runId)).catch(() => {});
        throw e;
      }
      return count;
    },
    /** The slices of a run that will not be created after all (refused once they were written). */
    async remove(runId: string): Promise<void> {
      await batch.write(() => run(REMOVE, runId));
    },
    /** The whole content, read a slice per turn of the event loop. */
    async read(runId: string, count: number, size: number): Promise<Uint8Array | null> {
      const out = new Uint8Array(size);
      let at = 0;
      for (let seq = 0; seq < count; seq++) {
        if (seq) await turn();
        const row = await slice(runId, seq);
        if (!row || at + row.bytes.byteLength > size) return null; // purged meanwhile
        out.set(row.bytes, at);
        at += row.bytes.byteLength;
      }
      return at === size ? out : null;
    },
    /**
     * The content as a stream of its slices (the download of GET …/content/). A slice missing
     * before the last one was purged by retention during the download: the stream fails, so the
     * connection is cut and the client sees an error, not a shorter file that ended cleanly.
     */
    stream(runId: string, count: number): ReadableStream<Uint8Array> {
      let seq = 0;
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (seq >= count) return controller.close();
          const row = await slice(runId, seq++);
          if (row) controller.enqueue(new Uint8Array(row.bytes));
          else controller.error(new Error("the content was purged during the download"));
        },
      });
    },
    /**
     * Slices no submission counts on — their run was never written (a crash between the two
     * writes), or its content was purged meanwhile — among those of the runs from `from` up to
     * `to` (by id, `to` excluded), all below the sweep's `before`: the slices of a run created
     * from `before` on may be a submission being written right now. Run ids are UUIDv7: they sort by time. A range at a
     * time (ORPHAN_SCAN slices, found by orphanRangeEnd), never the whole table: over 300,000
     * slices one statement held the start 1.5 s warm and 4.3–4.7 s from a cold cache (2026-11-30).
     */
    *removeOrphans(from: string, to: string): Program<number> {
      return yield* run(ORPHANS, from, to);
    },
    /**
     * The end (excluded) of the range from `from`: the slices of `from` and about `scan` after
     * them, up to the next run id (always past `from`, so a sweep moves on whatever one run
     * holds), or `before` when fewer remain below it.
     */
    *orphanRangeEnd(from: string, before: string, scan = ORPHAN_SCAN): Program<string> {
      const row = yield* get<{ run_id: string }>(ORPHAN_RANGE_END, from, before, scan);
      return row?.run_id ?? before;
    },
  };
}
export type ContentStore = ReturnType<typeof createContentStore>;

/**
 * What a HEAD of a run's content needs (its name, its size, how GET frames it, whether retention
 * purged it), from the submission's row alone: no byte of the content is read (src/http/head.ts).
 */
export function readContentHead(
  db: Db,
  orgId: number,
  runId: string,
): Promise<{
  purged: boolean;
  sliced: boolean;
  size: number;
  filename: string | null;
  file_type: FileType;
  /** The content's SHA-256 (hex), its entity tag. */
  sha256: string;
} | null> {
  return db
    .exec(
      get<{
        purged: number;
        chunks: number;
        size: number;
        filename: string | null;
        file_type: FileType;
        sha256: string;
      }>(
        "SELECT CASE WHEN s.content IS NULL AND s.content_chunks = 0 THEN 1 ELSE 0 END AS purged, s.content_chunks AS chunks, s.size, s.filename, s.file_type, s.sha256 FROM runs r JOIN submissions s ON s.id = r.submission_id WHERE r.id = CAST(? AS TEXT) AND r.org_id = CAST(? AS INTEGER)",
        runId,
        orgId,
      ),
    )
    .then((r) =>
      r
        ? {
            purged: Number(r.purged) === 1,
            sliced: Number(r.chunks) > 0,
            size: Number(r.size),
            filename: r.filename,
            file_type: r.file_type,
            sha256: r.sha256,
          }
        : null,
    );
}

/** The smallest UUIDv7 of the millisecond `ms`: every run id created before it sorts below it. */
export function uuidv7Floor(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-7000-0000-000000000000`;
}
