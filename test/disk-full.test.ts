// A full disk under the SQLite database (or a quota) is the operator's to fix, not our bug: a write
// that cannot be stored is answered 503 service_unavailable with Retry-After and logged as a
// warning that says so, never 500 internal_error; once there is room again writes succeed.
// The full disk is SQLite's own: `PRAGMA max_page_count` at the file's size gives SQLITE_FULL
// ("database or disk is full") exactly as a full file system does.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { SqliteDb } from "../src/db/sqlite.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "w",
    allowed_file_types: ["JSON"],
    steps: [{ name: "s", validator: "json_schema", config: { schema: { type: "object" } } }],
  });
});
afterAll(() => s?.close());

test.skipIf(onPostgres)(
  "a full disk: run starts get 503 with Retry-After, never 500; room again, 201",
  async () => {
    const raw = (s.deps.db as SqliteDb).raw;
    const pages = (raw.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    raw.exec(`PRAGMA max_page_count = ${pages}`);
    const doc = JSON.stringify({ x: "a".repeat(100_000) });
    const post = () =>
      call(s, "POST", "/api/v1/orgs/acme/workflows/w/runs/", {
        token: s.rootToken,
        raw: doc,
        headers: { "content-type": "application/json" },
      });
    try {
      // The file's free pages take a few documents first; 100 KB each, 50 are far past them.
      let full: Awaited<ReturnType<typeof post>> | null = null;
      for (let i = 0; i < 50 && !full; i++) {
        const r = await post();
        expect([201, 503]).toContain(r.status);
        if (r.status === 503) full = r;
      }
      expect(full).not.toBeNull();
      expect(full!.json).toEqual(
        errorBody(503, "service_unavailable", "The database is not available right now; retry shortly."),
      );
      expect(Number(full!.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      raw.exec("PRAGMA max_page_count = 4294967294");
    }
    const again = await post();
    expect(again.status).toBe(201);
    expect(again.json.status).toBe("succeeded");
  },
);
