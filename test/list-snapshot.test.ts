// A list's `count` and its page are read on one snapshot (countedPage in src/db/program.ts: one
// statement on PostgreSQL, two back to back on one connection on SQLite): a page never contradicts
// itself while items are created or deleted, e.g. `count: 1` beside two results, or `next: null`
// beside a count that says there is more. On PostgreSQL each of two statements read its own
// snapshot, and it did (54 of 600 lists in the churn below, 2026-11-29). Made exact there: the test
// holds the table only the page reads (`steps`, for each workflow's step count) while a workflow is
// deleted. Two statements read the count before the deletion and the page after it (count 3 beside
// a and c); one snapshot reads both before it or both after it, whichever the database takes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let root: string;
beforeAll(async () => {
  s = await startTestServer();
  root = s.rootToken;
});
afterAll(() => s.close());

const wf = (slug: string) => ({
  slug,
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
});

describe.skipIf(!onPostgres)("a workflow deleted between the list's count and its page (PostgreSQL)", () => {
  test("the page is the one the count was taken on, though a deletion commits while it is read", async () => {
    await s.org("snap");
    const admin = await s.user("snap-admin", "snap", "admin");
    for (const slug of ["a", "b", "c"]) await createWorkflow(s, admin.token, wf(slug), "snap");
    const sql = new SQL({ url: s.databaseUrl!, max: 1 });
    const watch = new SQL({ url: s.databaseUrl!, max: 1 });
    let list: ReturnType<typeof call> | undefined;
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe("LOCK TABLE steps IN ACCESS EXCLUSIVE MODE");
        list = call(s, "GET", "/api/v1/orgs/snap/workflows/", { token: admin.token });
        await until(async () => {
          const [w] = await watch.unsafe(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%FROM steps s%'",
          );
          return Number(w.n) >= 1;
        }, "the list's page waiting on the steps table");
        await tx.unsafe(
          "UPDATE workflows SET deleted_at = '2026-11-29T00:00:00.000Z' WHERE slug = 'b' AND org_id = (SELECT id FROM orgs WHERE slug = 'snap')",
        );
      });
    } finally {
      await sql.close();
      await watch.close();
    }
    const r = await list!;
    expect(r.status).toBe(200);
    expect([
      { count: 3, slugs: ["a", "b", "c"] },
      { count: 2, slugs: ["a", "c"] },
    ]).toContainEqual({ count: r.json.count, slugs: r.json.results.map((w: { slug: string }) => w.slug) });
    expect((await call(s, "GET", "/api/v1/orgs/snap/workflows/", { token: admin.token })).json.count).toBe(2);
  });
});

test("workflows and runs listed while others are created, run and deleted: count and page agree", async () => {
  let stop = false;
  const churn = Array.from({ length: 2 }, async (_, c) => {
    for (let k = 0; !stop; k++) {
      const slug = `churn-${c}-${k}`;
      await createWorkflow(s, root, wf(slug));
      await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
        token: root,
        raw: "{}",
        headers: { "content-type": "application/json" },
      });
      if (k % 2) await call(s, "DELETE", `/api/v1/orgs/acme/workflows/${slug}/`, { token: root });
    }
  });
  const seen: { path: string; count: number; results: number }[] = [];
  try {
    for (let i = 0; i < 100; i++)
      for (const path of [
        "/api/v1/orgs/acme/workflows/?page_size=200",
        "/api/v1/orgs/acme/runs/?page_size=200",
      ]) {
        const r = await call(s, "GET", path, { token: root });
        expect(r.status).toBe(200);
        if (r.json.count <= 200) seen.push({ path, count: r.json.count, results: r.json.results.length });
      }
  } finally {
    stop = true;
    await Promise.all(churn);
  }
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.filter((x) => x.count !== x.results)).toEqual([]);
});
