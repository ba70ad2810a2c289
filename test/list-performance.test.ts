// The run list stays fast on a big table: 200,000 runs (seeded with SQL, as scripts/list-bench.ts
// does for 1,000,000) and GET …/runs/ over real HTTP with each filter. Fast is checked as the
// plan SQLite chooses for each statement, not as a time: a time bound either fails on a busy or
// slower machine or is too loose to catch anything. What made the list slow before (a scan of the
// runs table, an index that does not cover the filter, sorting the matches) shows in the plan on
// any machine. `npm run bench` (scripts/list-bench.ts) measures the time; docs/limits.md.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { SEED_STEP_MS, seedRuns } from "../scripts/list-bench.ts";
import type { Program } from "../src/db/program.ts";
import type { SqliteDb } from "../src/db/sqlite.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

// PostgreSQL: a tenth as many (seeding goes over the network, 500 rows a statement).
const RUNS = onPostgres ? 20_000 : 200_000;
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

/** The list's answer, and the statements on the runs table it ran (their SQL). */
async function listed(query: string) {
  const db = s.deps.db;
  const statements: string[] = [];
  const exec0 = db.exec;
  const read0 = db.read;
  // Every statement a program yields passes through here on its way to the driver (exec or
  // read: the list's count and page are one statement, countedPage).
  const spy = (run: typeof db.exec) =>
    (<T>(p: Program<T>) =>
      run.call(
        db,
        (function* (): Program<T> {
          let r = p.next();
          while (!r.done) {
            if ("sql" in r.value && /\bFROM runs r\b/.test(r.value.sql)) statements.push(r.value.sql);
            r = p.next(yield r.value);
          }
          return r.value;
        })(),
      )) as typeof db.exec;
  db.exec = spy(exec0);
  db.read = spy(read0);
  let r: Awaited<ReturnType<typeof call>>;
  try {
    r = await call(s, "GET", `${LIST}?${query}`, { token: s.rootToken });
  } finally {
    db.exec = exec0;
    db.read = read0;
  }
  expect(r.status).toBe(200);
  expect(statements.length).toBeGreaterThan(0);
  return { body: r.json, statements };
}

/** SQLite's plan of each statement, one line per step. */
function plans(statements: string[]): string[][] {
  const raw = (s.deps.db as SqliteDb).raw;
  return statements.map((sql) => {
    const explain = raw.prepare(`EXPLAIN QUERY PLAN ${sql}`);
    try {
      return (explain.all() as { detail: string }[]).map((p) => p.detail);
    } finally {
      explain.finalize();
    }
  });
}

/**
 * Every read of the runs table is a search in an index that covers it, constrained on each
 * filtered column (or a primary-key lookup of a page's rows); only the final page is sorted.
 */
function expectIndexed(plans: string[][], columns: string[]) {
  for (const plan of plans) {
    for (const line of plan.filter((l) => /^(SCAN|SEARCH) r\b/.test(l))) {
      if (line === "SEARCH r USING PRIMARY KEY (id=?)") continue;
      expect(line).toStartWith("SEARCH r USING COVERING INDEX ");
      for (const c of columns) expect(line).toContain(c);
    }
    const sorts = plan.filter((l) => l.includes("TEMP B-TREE"));
    expect(sorts.length <= 1 && (sorts.length === 0 || plan.at(-1) === sorts[0])).toBe(true);
  }
}

describe(`GET …/runs/ over ${RUNS.toLocaleString("en")} runs`, () => {
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * SEED_STEP_MS).toISOString();
  const cases: [string, () => string, (count: number) => boolean, string[]][] = [
    ["no filter", () => "page_size=50", (n) => n === RUNS, ["org_id=?", "status=?"]],
    ["status=failed", () => "status=failed", (n) => n > RUNS / 6 && n < RUNS / 4, ["org_id=?", "status=?"]],
    [
      "workflow",
      () => `workflow=${slugs[3]}`,
      (n) => n === RUNS / 20,
      ["org_id=?", "workflow_id=?", "status=?"],
    ],
    [
      "a range of dates",
      // A quarter of the minutes seeded (one run a minute), whatever their number.
      () => `created_after=${at(RUNS * 0.45)}&created_before=${at(RUNS * 0.2)}`,
      (n) => n > RUNS / 5,
      ["org_id=?", "status=?", "created_at>?", "created_at<?"],
    ],
    [
      "workflow and status",
      () => `workflow=${slugs[3]}&status=failed`,
      (n) => n > RUNS / 200,
      ["org_id=?", "workflow_id=?", "status=?"],
    ],
    ["page 200", () => "page=200", (n) => n === RUNS, ["org_id=?", "status=?"]],
  ];
  for (const [label, query, countOk, columns] of cases)
    test(`${label}: a page of 50 from covering index searches, with the right count`, async () => {
      const { body, statements } = await listed(query());
      expect(countOk(body.count)).toBe(true);
      expect(body.results).toHaveLength(50);
      // The plans are SQLite's; PostgreSQL plans by its own statistics (docs/postgres.md).
      if (!onPostgres) expectIndexed(plans(statements), columns);
    });

  test("newest first, and page 2 continues where page 1 ended", async () => {
    const p1 = (await listed("page_size=200")).body;
    const p2 = (await call(s, "GET", p1.next.slice(s.url.length), { token: s.rootToken })).json;
    const times = [...p1.results, ...p2.results].map((r: { created_at: string }) => r.created_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(new Set([...p1.results, ...p2.results].map((r: { id: string }) => r.id)).size).toBe(400);
  });
});
