// The group commit's spacing on a real server (`commit_window_us`, src/runs/batch.ts): a sync
// run is answered only after its commit, and two commits of the main connection are at least the
// window apart — so a run sent right after another is answered no sooner than the window after
// the first was sent. A lower bound: a slower machine only makes the gap longer. SQLite only
// (PostgreSQL's groups are formed by the commits in flight, and ignore the setting).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const RUNS = "/api/v1/orgs/acme/workflows/linear/runs/";
const WINDOW_US = 100_000;
const SCHEMA = { type: "object", required: ["qty"], properties: { qty: { type: "integer", minimum: 1 } } };

describe.skipIf(onPostgres)("commit_window_us", () => {
  let s: TestServer;

  beforeAll(async () => {
    // The writer thread commits sync runs in groups of its own, without a window: off here.
    s = await startTestServer({ writer_thread: "off", commit_window_us: WINDOW_US });
    await createWorkflow(s, s.rootToken, {
      slug: "linear",
      allowed_file_types: ["JSON"],
      steps: [{ name: "schema", validator: "json_schema", config: { schema: SCHEMA } }],
    });
  });
  afterAll(() => s.close());

  const run = (qty: number) =>
    call(s, "POST", RUNS, {
      token: s.rootToken,
      raw: JSON.stringify({ qty }),
      headers: { "content-type": "application/json" },
    });

  test("a run sent right after another's 201 is committed the window after the first commit", async () => {
    const t0 = performance.now();
    const first = await run(1);
    const second = await run(2);
    const gapMs = performance.now() - t0;
    expect([first.status, second.status]).toEqual([201, 201]);
    expect([first.json.status, second.json.status]).toEqual(["succeeded", "succeeded"]);
    // The first commit came after t0, the second at least WINDOW_US after it (the default of
    // 1 ms answers both within a few ms).
    expect(gapMs).toBeGreaterThanOrEqual(WINDOW_US / 1000);
    const got = await call(s, "GET", new URL(second.json.url).pathname, { token: s.rootToken });
    expect(got.json).toEqual(second.json); // written as answered
  });
});
