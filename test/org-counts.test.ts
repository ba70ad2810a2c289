// The count of an org's live workflows and stored schemas (docs/limits.md, 2026-11-29; was
// unbounded). Each refusal is the whole error object, and nothing is stored or logged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { MAX_SCHEMAS_PER_ORG } from "../src/schemas/service.ts";
import { MAX_WORKFLOWS_PER_ORG } from "../src/workflows/service.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { savedRowCounts } from "./helpers/row-counts.ts";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
  await s.org("full");
  await s.org("fullschemas");
});
afterAll(() => s.close());

const post = (path: string, raw: string, token: string, headers: Record<string, string> = {}) =>
  call(s, "POST", path, { token, raw, headers: { "content-type": "application/json", ...headers } });

/** The rows a refused request must leave as they were. */
const counts = () => savedRowCounts(s);

describe("an org's count of workflows and stored schemas is bounded", () => {
  test(`409 for the ${MAX_WORKFLOWS_PER_ORG + 1}st workflow, before its check and any If-None-Match; a deletion makes room`, async () => {
    const orgId = await s.org("full");
    const fay = (await s.user("fay", "full", "author")).token;
    // Seeded through the service (no HTTP), as the test helpers seed users.
    for (let i = 0; i < MAX_WORKFLOWS_PER_ORG; i++)
      await s.deps.workflows.create(
        orgId,
        { slug: `w${i}`, name: `W${i}`, allowed_file_types: ["JSON"], steps: [] },
        SYSTEM,
      );
    const before = await counts();
    const full = errorBody(
      409,
      "conflict",
      `An organization can have at most ${MAX_WORKFLOWS_PER_ORG} workflows; delete unused ones first.`,
      [],
    );
    const ok = '{"slug":"one-more","name":"One more","allowed_file_types":["JSON"],"steps":[]}';
    const r = await post("/api/v1/orgs/full/workflows/", ok, fay);
    expect(r.status).toBe(409);
    expect(r.json).toEqual(full);
    // Its draft is not looked at (an unknown validator would be a 400 with room), nor a condition.
    const bad = await post(
      "/api/v1/orgs/full/workflows/",
      '{"slug":"bad","name":"B","allowed_file_types":["JSON"],"steps":[{"name":"s","validator":"nope","config":{}}]}',
      fay,
    );
    const cond = await post("/api/v1/orgs/full/workflows/", ok, fay, { "if-none-match": "*" });
    for (const x of [bad, cond]) {
      expect(x.status).toBe(409);
      expect(x.json).toEqual(full);
    }
    expect(await counts()).toEqual(before);
    // A viewer is told 403 as before: the count is no business of theirs.
    const viewer = (await s.user("vic", "full", "viewer")).token;
    const refused = await post("/api/v1/orgs/full/workflows/", ok, viewer);
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual(
      errorBody(403, "permission_denied", "This action needs the author role or higher."),
    );
    // Deleted workflows do not count.
    expect((await call(s, "DELETE", "/api/v1/orgs/full/workflows/w0/", { token: fay })).status).toBe(204);
    expect((await post("/api/v1/orgs/full/workflows/", ok, fay)).status).toBe(201);
    expect((await post("/api/v1/orgs/full/workflows/", ok.replace("one-more", "two-more"), fay)).status).toBe(
      409,
    );
  }, 120_000);

  test(`409 for the ${MAX_SCHEMAS_PER_ORG + 1}st stored schema, before its check and any If-None-Match; a deletion makes room`, async () => {
    const orgId = await s.org("fullschemas");
    const token = (await s.user("sam", "fullschemas", "author")).token;
    // Seeded in one statement (both dialects): 2,000 checks through the service would take long.
    const ts = new Date().toISOString();
    await s.sql(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${MAX_SCHEMAS_PER_ORG})
       INSERT INTO org_schemas (org_id, uri, kind, target_namespace, schema, created_at, updated_at)
       SELECT ?, 'urn:seed:' || CAST(i AS TEXT), 'json_schema', NULL, '{}', ?, ? FROM n`,
      orgId,
      ts,
      ts,
    );
    const before = await counts();
    const full = errorBody(
      409,
      "conflict",
      `An organization can have at most ${MAX_SCHEMAS_PER_ORG} stored schemas; delete unused ones first.`,
      [],
    );
    const ok = '{"uri":"urn:one-more","kind":"json_schema","schema":{"type":"object"}}';
    const r = await post("/api/v1/orgs/fullschemas/schemas/", ok, token);
    const bad = await post(
      "/api/v1/orgs/fullschemas/schemas/",
      '{"uri":"urn:bad","kind":"json_schema","schema":{"type":"nope"}}',
      token,
    );
    const cond = await post("/api/v1/orgs/fullschemas/schemas/", ok, token, { "if-none-match": "*" });
    for (const x of [r, bad, cond]) {
      expect(x.status).toBe(409);
      expect(x.json).toEqual(full);
    }
    expect(await counts()).toEqual(before);
    const list = await call(s, "GET", "/api/v1/orgs/fullschemas/schemas/?page_size=1", { token });
    const first = list.json.results[0];
    expect((await call(s, "DELETE", `/api/v1/orgs/fullschemas/schemas/${first.id}/`, { token })).status).toBe(
      204,
    );
    expect((await post("/api/v1/orgs/fullschemas/schemas/", ok, token)).status).toBe(201);
    expect(
      (await post("/api/v1/orgs/fullschemas/schemas/", ok.replace("one-more", "two"), token)).status,
    ).toBe(409);
  }, 120_000);
});
