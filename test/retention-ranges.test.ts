// Retention reads the runs a range of their key at a time (src/runs/retention.ts): on SQLite its
// candidate query runs on the thread that serves requests, and over the whole table it held that
// thread 430–670 ms a sweep at 1,000,000 runs. These tests hold the two halves of that: a sweep in
// many ranges purges exactly what one range did, and SQLite reads one range by the runs' key.
import { describe, expect, test } from "bun:test";
import { all } from "../src/db/program.ts";
import { createLogger } from "../src/lib/log.ts";
import { CANDIDATES_SQL, createRetention } from "../src/runs/retention.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { call, startTestServer } from "./helpers/server.ts";

const JSON_CT = { "content-type": "application/json" };

const TWO_DAYS_AGO = () => new Date(Date.now() - 2 * 86_400_000).toISOString();

describe("retention in ranges of the runs' key", () => {
  test("a sweep in ranges of 2 runs purges every old run's content and nothing else", async () => {
    const s = await startTestServer();
    // The server's own sweeps (2 s after its start, then hourly) stopped: on a slow machine the
    // first one came while this test aged its runs, and purged some of them itself.
    s.retention.stop();
    try {
      const steps = [{ name: "s", validator: "syntax", config: {} }];
      await createWorkflow(s, s.rootToken, {
        slug: "short",
        retention_days: 1,
        allowed_file_types: ["JSON"],
        steps,
      });
      await createWorkflow(s, s.rootToken, { slug: "keep", allowed_file_types: ["JSON"], steps });
      const start = async (slug: string) => {
        const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
          token: s.rootToken,
          raw: "{}",
          headers: JSON_CT,
        });
        expect(r.status).toBe(201);
        return r.json as { id: string; submission: { id: number } };
      };
      const old: string[] = [];
      const young: string[] = [];
      // Interleaved, so old and young runs share ranges whatever the key's order.
      for (let i = 0; i < 7; i++) {
        const o = await start("short");
        await s.sql("UPDATE submissions SET created_at = ? WHERE id = ?", TWO_DAYS_AGO(), o.submission.id);
        old.push(o.id);
        young.push((await start("short")).id);
        const k = await start("keep");
        await s.sql("UPDATE submissions SET created_at = ? WHERE id = ?", TWO_DAYS_AGO(), k.submission.id);
        young.push(k.id);
      }
      const retention = createRetention(s.deps.db, createLogger("error"), 0, async () => null, 2);
      expect(await retention.sweep()).toBe(7);
      const purged = await s.sql<{ id: string }>(
        "SELECT r.id FROM runs r JOIN submissions s ON s.id = r.submission_id WHERE s.purged_at IS NOT NULL ORDER BY r.id",
      );
      expect(purged.map((r) => r.id)).toEqual([...old].sort());
      for (const id of young) {
        const c = await call(s, "GET", `/api/v1/orgs/acme/runs/${id}/content/`, { token: s.rootToken });
        expect(c.status).toBe(200);
      }
      // A second sweep finds nothing more.
      expect(await retention.sweep()).toBe(0);
    } finally {
      await s.close();
    }
  });

  test.skipIf(onPostgres)(
    "SQLite reads one range by the runs' primary key, not the whole table",
    async () => {
      const s = await startTestServer();
      try {
        for (const sql of [CANDIDATES_SQL.ranged, CANDIDATES_SQL.last]) {
          const plan = await s.deps.db.exec(all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`));
          const details = plan.map((p) => p.detail);
          expect(details.some((d) => /^SEARCH r USING PRIMARY KEY \(id>\?( AND id<\?)?\)$/.test(d))).toBe(
            true,
          );
          expect(details.some((d) => /^SCAN r\b/.test(d))).toBe(false);
        }
      } finally {
        await s.close();
      }
    },
  );
});
