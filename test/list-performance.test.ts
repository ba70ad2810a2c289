// The run list stays fast on a big table: 200,000 runs (seeded with SQL, as scripts/list-bench.ts
// does for 1,000,000) and GET …/runs/ over real HTTP with each filter. The bound is generous
// for slow CI machines; docs/limits.md has the measured numbers.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SEED_STEP_MS, seedRuns } from "../scripts/list-bench.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

// PostgreSQL: a tenth as many (seeding goes over the network, 500 rows a statement).
const RUNS = onPostgres ? 20_000 : 200_000;
const BOUND_MS = 500;
const LIST = "/api/v1/orgs/acme/runs/";

let s: TestServer;
let slugs: string[];
beforeAll(async () => {
  s = await startTestServer();
  slugs = [];
  const ids: number[] = [];
  for (let i = 0; i < 20; i++) {
    const wf = await createWorkflow(s, s.rootToken, {
      slug: `wf-${i}`,
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    slugs.push(wf.slug);
    ids.push(wf.id);
  }
  const root = (await s.deps.users.getByUsername("root"))!;
  await seedRuns(s.deps.db, { orgId: await s.org("acme"), workflowIds: ids, user: root, count: RUNS });
  // Another org's runs share the table and indexes, and must not slow acme's list.
  const otherWf = await s.deps.workflows.create(
    await s.org("other"),
    {
      slug: "wf",
      name: "wf",
      allowed_file_types: ["JSON"],
      steps: [],
    },
    SYSTEM,
  );
  await seedRuns(s.deps.db, {
    orgId: await s.org("other"),
    workflowIds: [otherWf.workflow.id],
    user: root,
    count: RUNS / 10,
  });
}, 120_000);
afterAll(() => s.close());

/** The median time of 3 requests, after one to warm the statement cache. */
async function timed(query: string) {
  const times: number[] = [];
  let last: Awaited<ReturnType<typeof call>> | null = null;
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now();
    last = await call(s, "GET", `${LIST}?${query}`, { token: s.rootToken });
    if (i > 0) times.push(performance.now() - t0);
  }
  expect(last!.status).toBe(200);
  return { ms: times.sort((a, b) => a - b)[1]!, body: last!.json };
}

describe(`GET …/runs/ over ${RUNS.toLocaleString("en")} runs`, () => {
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * SEED_STEP_MS).toISOString();
  const cases: [string, () => string, (count: number) => boolean][] = [
    ["no filter", () => "page_size=50", (n) => n === RUNS],
    ["status=failed", () => "status=failed", (n) => n > RUNS / 6 && n < RUNS / 4],
    ["workflow", () => `workflow=${slugs[3]}`, (n) => n === RUNS / 20],
    [
      "a 30-day range",
      () => `created_after=${at(60 * 24 * 60)}&created_before=${at(30 * 24 * 60)}`,
      (n) => n > 40_000,
    ],
    ["workflow and status", () => `workflow=${slugs[3]}&status=failed`, (n) => n > 1000],
    ["page 200", () => "page=200", (n) => n === RUNS],
  ];
  for (const [label, query, countOk] of cases)
    test(`${label}: page of 50 in under ${BOUND_MS} ms, with the right count`, async () => {
      const { ms, body } = await timed(query());
      expect(countOk(body.count)).toBe(true);
      expect(body.results).toHaveLength(50);
      expect(ms).toBeLessThan(BOUND_MS);
    });

  test("newest first, and page 2 continues where page 1 ended", async () => {
    const p1 = (await timed("page_size=200")).body;
    const p2 = (await call(s, "GET", p1.next.slice(s.url.length), { token: s.rootToken })).json;
    const times = [...p1.results, ...p2.results].map((r: { created_at: string }) => r.created_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(new Set([...p1.results, ...p2.results].map((r: { id: string }) => r.id)).size).toBe(400);
  });
});
