// A retry with the same Idempotency-Key after its workflow was renamed, or deleted, and its slug
// taken by a new workflow that refuses runs: the URL still names the slug the first request used.
// The run exists, so the retry gets the first answer, as after a plain delete (docs/decisions.md,
// "An idempotent retry after a change"); it was a 404 (renamed), or the new workflow's 409
// workflow_inactive or 400 no_workflow_steps. Found by test/model-fuzz.test.ts.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let token: string;
const WF = (slug: string) => ({
  slug,
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
});
const start = (wf: string, key: string, raw = '{"id":1}') =>
  call(s, "POST", `/api/v1/orgs/acme/workflows/${wf}/runs/`, {
    token,
    raw,
    headers: { "content-type": "application/json", "idempotency-key": key },
  });
const rename = (from: string, to: string) =>
  call(s, "PATCH", `/api/v1/orgs/acme/workflows/${from}/`, { token: s.rootToken, body: { slug: to } });

beforeAll(async () => {
  s = await startTestServer();
  token = (await s.user("exec", "acme", "executor")).token;
});
afterAll(() => s.close());

test("renamed: the retry at the old slug replays; another body is the 404 of the old slug", async () => {
  await createWorkflow(s, s.rootToken, WF("old-name"));
  const first = await start("old-name", "k-rename");
  expect(first.status).toBe(201);
  expect((await rename("old-name", "new-name")).status).toBe(200);
  const before = await s.count("runs");

  const retry = await start("old-name", "k-rename");
  expect([retry.status, retry.headers.get("idempotent-replayed"), retry.headers.get("location")]).toEqual([
    201,
    "true",
    first.json.url,
  ]);
  expect(retry.json).toEqual(first.json);

  const other = await start("old-name", "k-rename", '{"id":2}');
  expect([other.status, other.json]).toEqual([404, errorBody(404, "not_found", "Workflow not found.")]);
  expect(await s.count("runs")).toBe(before);
});

test("renamed and its old slug taken by a new workflow: the retry still replays the first run", async () => {
  await createWorkflow(s, s.rootToken, WF("taken"));
  const first = await start("taken", "k-taken");
  expect(first.status).toBe(201);
  expect((await rename("taken", "moved")).status).toBe(200);
  await createWorkflow(s, s.rootToken, WF("taken"));
  const before = await s.count("runs");

  const retry = await start("taken", "k-taken");
  expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
  expect(retry.json).toEqual(first.json);
  // At the new slug too: the same workflow.
  const atNew = await start("moved", "k-taken");
  expect([atNew.status, atNew.json]).toEqual([201, first.json]);
  expect(await s.count("runs")).toBe(before);
});

test.each([
  ["inactive", { status: "inactive" }, errorBody(409, "workflow_inactive")],
  ["without an active step", { steps: [] }, errorBody(400, "no_workflow_steps")],
])(
  "deleted and its slug taken by a new workflow %s: the retry replays; another body gets the new one's refusal",
  async (name, change, refusal) => {
    const slug = `gone-${name.length}`;
    await createWorkflow(s, s.rootToken, WF(slug));
    const first = await start(slug, `k-${slug}`);
    expect(first.status).toBe(201);
    expect(
      (await call(s, "DELETE", `/api/v1/orgs/acme/workflows/${slug}/`, { token: s.rootToken })).status,
    ).toBe(204);
    await createWorkflow(s, s.rootToken, { ...WF(slug), ...change });
    const before = await s.count("runs");

    const retry = await start(slug, `k-${slug}`);
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    expect(retry.json).toEqual(first.json);
    const other = await start(slug, `k-${slug}`, '{"id":2}');
    expect([other.status, other.json]).toEqual([refusal.status, refusal]);
    expect(await s.count("runs")).toBe(before);
  },
);
