// A SQLite server's start frees the Idempotency-Keys its previous life left in progress before it
// listens (releaseAbandoned): both of its statements read the partial index of keys in progress
// (migration 22), not every key of the last 24 hours. PostgreSQL carries the same index.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DB_FILE } from "../src/db/open.ts";
import { all, run } from "../src/db/program.ts";
import { FREE_ABANDONED, KEEP_LINKED } from "../src/runs/idempotency.ts";
import { onPostgres } from "./helpers/backend.ts";
import { startTestServer } from "./helpers/server.ts";

describe("the start's release of Idempotency-Keys left in progress", () => {
  test.skipIf(onPostgres)(
    "SQLite reads the keys in progress from their partial index, not the table",
    async () => {
      const s = await startTestServer();
      // A connection of the test's own: bun:sqlite leaves an EXPLAIN of a DELETE in progress after
      // all(), which would hold up the server's next commit on its connection.
      const raw = new Database(join(s.dataDir, DB_FILE), { readonly: true, strict: true });
      try {
        for (const sql of [KEEP_LINKED, FREE_ABANDONED]) {
          const plan = (raw.query(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map(
            (r) => r.detail,
          );
          expect(plan).toEqual(["SCAN idempotency_keys USING INDEX idempotency_keys_in_progress"]);
        }
      } finally {
        raw.close();
        await s.close();
      }
    },
  );

  test.if(onPostgres)("PostgreSQL can read the keys in progress from the same index", async () => {
    const s = await startTestServer();
    try {
      for (const sql of [KEEP_LINKED, FREE_ABANDONED]) {
        // An empty table is read whole whatever its indexes; without that choice the plan shows
        // the index serves the predicate.
        const plan = await s.deps.db.tx(function* () {
          yield* run("SET LOCAL enable_seqscan = off");
          return yield* all<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`);
        });
        const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
        expect(text).toMatch(
          /(Bitmap Index|Index|Index Only) Scan (using|on) idempotency_keys_in_progress\b/,
        );
        expect(text).not.toMatch(/Seq Scan/);
      }
    } finally {
      await s.close();
    }
  });
});
