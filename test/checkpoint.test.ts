// WAL checkpoints run on their own thread (src/db/checkpointer.ts), not inside the writer's commits.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { DB_FILE } from "../src/db/open.ts";
import type { SqliteDb } from "../src/db/sqlite.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  await createWorkflow(s, s.rootToken, {
    slug: "fast",
    allowed_file_types: ["JSON"],
    steps: [{ name: "schema", validator: "json_schema", config: { schema: { type: "object" } } }],
  });
});
afterAll(() => s.close());

// SQLite's own machinery: PostgreSQL checkpoints itself.
test.skipIf(onPostgres)(
  "the writer does not checkpoint; the checkpoint thread copies the WAL into the file",
  async () => {
    const auto = (s.deps.db as SqliteDb).raw.query("PRAGMA wal_autocheckpoint").get() as {
      wal_autocheckpoint: number;
    };
    expect(auto.wal_autocheckpoint).toBe(0);
    const file = join(s.dataDir, DB_FILE);
    const before = statSync(file).size;
    // ~300 runs with 8 KiB documents: well over a thousand new pages, all in the WAL at first.
    const doc = JSON.stringify({ pad: "x".repeat(8192) });
    for (let i = 0; i < 30; i++)
      await Promise.all(
        Array.from({ length: 10 }, () =>
          call(s, "POST", "/api/v1/orgs/acme/workflows/fast/runs/", {
            token: s.rootToken,
            raw: doc,
            headers: { "content-type": "application/json" },
          }).then((r) => expect(r.status).toBe(201)),
        ),
      );
    const deadline = Date.now() + 30_000;
    while (statSync(file).size < before + 300 * 8192 && Date.now() < deadline) await Bun.sleep(20);
    expect(statSync(file).size).toBeGreaterThanOrEqual(before + 300 * 8192);
  },
);
