// Two creations racing for an org's last workflow place (docs/limits.md): the count the save's
// transaction takes again, under the org's row lock, is what refuses the second. The race is made
// exact with the store's beforeSave hook: the competing creation lands after this request's own
// counts passed, just before its transaction.
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { MAX_WORKFLOWS_PER_ORG } from "../src/workflows/service.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("rae", "race", "author")).token;
});
afterEach(() => {
  s.deps.workflowStore.hooks.beforeSave = undefined;
});
afterAll(() => s.close());

const create = (slug: string) =>
  call(s, "POST", "/api/v1/orgs/race/workflows/", {
    token: author,
    body: { slug, name: slug, allowed_file_types: ["JSON"], steps: [] },
  });

test("the last place taken by another creation meanwhile: 409, nothing of this one stored", async () => {
  const orgId = await s.org("race");
  // All places but one taken, in one statement (both dialects): only their count matters here.
  const ts = new Date().toISOString();
  await s.sql(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${MAX_WORKFLOWS_PER_ORG - 1})
     INSERT INTO workflows (org_id, slug, name, description, status, allowed_file_types, fail_fast, version, created_at, updated_at)
     SELECT ?, 'seed-' || CAST(i AS TEXT), 'Seed', '', 'active', '["JSON"]', 1, 1, ?, ? FROM n`,
    orgId,
    ts,
    ts,
  );
  let other: Awaited<ReturnType<typeof create>> | null = null;
  let done = false;
  s.deps.workflowStore.hooks.beforeSave = async () => {
    if (done) return;
    done = true;
    other = await create("other");
  };
  const r = await create("mine");
  expect(other!.status).toBe(201);
  expect(r.status).toBe(409);
  expect(r.json).toEqual(
    errorBody(
      409,
      "conflict",
      `An organization can have at most ${MAX_WORKFLOWS_PER_ORG} workflows; delete unused ones first.`,
      [],
    ),
  );
  expect(await s.row("SELECT id FROM workflows WHERE slug = ?", "mine")).toBeNull();
  const live = await s.row<{ n: number | string }>(
    "SELECT count(*) AS n FROM workflows WHERE org_id = ? AND deleted_at IS NULL",
    orgId,
  );
  expect(Number(live!.n)).toBe(MAX_WORKFLOWS_PER_ORG);
});
