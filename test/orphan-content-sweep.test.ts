// Content slices left without a run (a crash between a submission's slices and its run) are
// removed after the server listens, a range of content_chunks' key per statement
// (src/runs/orphan-sweep.ts): over the whole table, before listening, the sweep held every start
// 1.5–4.7 s at 300,000 slices (docs/deploy.md, "Start time"). These tests hold what it removes,
// what it keeps, and that SQLite reads one range by the key.
import { describe, expect, test } from "bun:test";
import { all } from "../src/db/program.ts";
import { createLogger } from "../src/lib/log.ts";
import { uuidv7 } from "../src/lib/uuid.ts";
import { ORPHANS, ORPHAN_RANGE_END, SLICED_ABOVE_BYTES, uuidv7Floor } from "../src/runs/content-store.ts";
import { sweepOrphanContent } from "../src/runs/orphan-sweep.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, restartTestServer, startTestServer } from "./helpers/server.ts";

const slices = async (s: TestServer, runId: string) =>
  Number((await s.row<{ n: number }>("SELECT count(*) AS n FROM content_chunks WHERE run_id = ?", runId))!.n);
const putSlices = async (s: TestServer, runId: string, n: number) => {
  for (let seq = 0; seq < n; seq++)
    await s.sql(
      "INSERT INTO content_chunks (run_id, seq, bytes) VALUES (?, ?, ?)",
      runId,
      seq,
      new Uint8Array(8),
    );
};
// Run ids of a past millisecond (UUIDv7 sorts by time): no run of the server has them.
const orphanId = (ms: number, n: number) =>
  `${uuidv7Floor(ms).slice(0, 19)}-8000-${n.toString(16).padStart(12, "0")}`;

describe("slices without a run", () => {
  test("are removed once the server listens, in ranges of 1 slice too; a run's own and a younger id's stay", async () => {
    let s = await startTestServer();
    try {
      await createWorkflow(s, s.rootToken, {
        slug: "t",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "syntax", config: {} }],
      });
      const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/t/runs/", {
        token: s.rootToken,
        raw: "{}",
        headers: { "content-type": "application/json" },
      });
      expect(r.status).toBe(201);
      // The run is made to count on slices of its own (as a run of content over 1 MiB does).
      const sub = (await s.row<{ id: number }>(
        "SELECT submission_id AS id FROM runs WHERE id = ?",
        r.json.id,
      ))!;
      await s.sql("UPDATE submissions SET content_chunks = 2 WHERE id = ?", sub.id);
      await putSlices(s, r.json.id, 2);
      const past = Date.now() - 86_400_000;
      const orphans = [orphanId(past, 1), orphanId(past, 2), orphanId(past + 1, 3)];
      for (const id of orphans) await putSlices(s, id, 3);
      s = await restartTestServer(s);
      // The start does not wait for it: the sweep the start began, awaited here.
      expect(await s.deps.executor.orphanSweep()).toBe(9);
      for (const id of orphans) expect(await slices(s, id)).toBe(0);
      expect(await slices(s, r.json.id)).toBe(2);

      // One slice per range; a run id from `before` on may be a submission being written now.
      for (const id of orphans) await putSlices(s, id, 3);
      const younger = orphanId(Date.now() + 60_000, 4);
      await putSlices(s, younger, 1);
      const store = s.deps.runs;
      expect(await sweepOrphanContent(store, createLogger("silent"), Date.now(), () => false, 1)).toBe(9);
      for (const id of orphans) expect(await slices(s, id)).toBe(0);
      expect(await slices(s, r.json.id)).toBe(2);
      expect(await slices(s, younger)).toBe(1);
      // A stop between two ranges ends it there: the next start sweeps the rest.
      await putSlices(s, orphans[0]!, 1);
      expect(await sweepOrphanContent(store, createLogger("silent"), Date.now(), () => true, 1)).toBe(0);
      expect(await slices(s, orphans[0]!)).toBe(1);
    } finally {
      await s.close();
    }
  });

  test("a run created after the start sorts after it even when the clock steps back, so the start's sweep spares its slices", async () => {
    let s = await startTestServer();
    const realNow = Date.now;
    try {
      await createWorkflow(s, s.rootToken, {
        slug: "text",
        allowed_file_types: ["TEXT"],
        steps: [{ name: "size", validator: "text_rules", config: { max_bytes: 100_000_000 } }],
      });
      const startedBy = realNow();
      s = await restartTestServer(s);
      await s.deps.executor.orphanSweep();
      // An NTP step back, an hour, before this process made any id: the start's sweep removes
      // slices of ids below its start, and a sliced run's slices are written before its run.
      Date.now = () => realNow() - 3_600_000;
      const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/text/runs/", {
        token: s.rootToken,
        raw: new Uint8Array(SLICED_ABOVE_BYTES + 1).fill(0x61),
        headers: { "content-type": "text/plain", prefer: "respond-async" },
      });
      expect(r.status).toBe(202);
      expect(r.json.id >= uuidv7Floor(startedBy)).toBe(true);
      // A submission between its slices and its run, as the sweep the start began finds it.
      const id = uuidv7();
      await s.deps.runs.writeContent(id, new Uint8Array(SLICED_ABOVE_BYTES + 1));
      expect(await sweepOrphanContent(s.deps.runs, createLogger("silent"), startedBy, () => false)).toBe(0);
      expect(await slices(s, id)).toBe(5);
    } finally {
      Date.now = realNow;
      await s.close();
    }
  });

  test.skipIf(onPostgres)(
    "SQLite reads one range of content_chunks' key per statement, never the whole table",
    async () => {
      const s = await startTestServer();
      try {
        for (const sql of [ORPHANS, ORPHAN_RANGE_END]) {
          const plan = await s.deps.db.exec(all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`));
          const details = plan.map((p) => p.detail);
          expect(
            details.some((d) => /^SEARCH content_chunks USING .*\(run_id>\? AND run_id<\?\)$/.test(d)),
          ).toBe(true);
          expect(details.some((d) => /^SCAN content_chunks\b/.test(d))).toBe(false);
        }
      } finally {
        await s.close();
      }
    },
  );
});
