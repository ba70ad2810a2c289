// Which webhooks a run notifies is kept in memory on SQLite (src/webhooks/subscriptions.ts); it
// must act on the very next run after any change — made through the API or through another
// connection to the database (the `assay` CLI, another node) — exactly as the lookup it replaces.
// Each test first runs once so that the org's answer is cached, then changes it, then runs again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type OtherConnection, otherConnection } from "./helpers/backend.ts";
import { finalRun } from "./helpers/final-run.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let other: OtherConnection;
let orgId: number;
const HOOKS = "/api/v1/orgs/acme/webhooks/";
const JSON_CT = { "content-type": "application/json" };

/** A sync run of `slug`; returns the webhook ids its outbox rows were written for, sorted. */
async function notified(slug = "orders"): Promise<number[]> {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: "{}",
    headers: JSON_CT,
  });
  expect(r.status).toBe(201);
  expect(r.json.status).toBe("succeeded");
  const rows = await s.sql<{ webhook_id: number }>(
    "SELECT webhook_id FROM webhook_deliveries WHERE run_id = ? ORDER BY webhook_id",
    r.json.id,
  );
  return rows.map((x) => Number(x.webhook_id));
}

async function createHook(body: Record<string, unknown>): Promise<number> {
  const r = await call(s, "POST", HOOKS, {
    token: s.rootToken,
    body: { url: "http://127.0.0.1:9/h", ...body },
  });
  expect(r.status).toBe(201);
  return r.json.id;
}

const generation = async () =>
  Number((await other.sql<{ value: number }>("SELECT value FROM cache_generation"))[0]!.value);

beforeAll(async () => {
  // Receivers are never reached (port 9): the outbox rows are what is checked.
  s = await startTestServer({ webhook_allow_private: true });
  other = await otherConnection(s);
  for (const slug of ["orders", "invoices"])
    await createWorkflow(s, s.rootToken, {
      slug,
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
  orgId = Number((await s.row<{ id: number }>("SELECT id FROM orgs WHERE slug = 'acme'"))!.id);
});
afterAll(async () => {
  await other.close();
  await s.close();
});

describe("through the API", () => {
  test("a webhook created, disabled, enabled, refiltered and deleted acts on the next run", async () => {
    expect(await notified()).toEqual([]);
    expect(await notified()).toEqual([]); // cached: still none
    const id = await createHook({});
    expect(await notified()).toEqual([id]);
    expect(
      (await call(s, "PATCH", `${HOOKS}${id}/`, { token: s.rootToken, body: { is_active: false } })).status,
    ).toBe(200);
    expect(await notified()).toEqual([]);
    expect(
      (await call(s, "PATCH", `${HOOKS}${id}/`, { token: s.rootToken, body: { is_active: true } })).status,
    ).toBe(200);
    expect(await notified()).toEqual([id]);
    const filtered = { workflow_slugs: ["invoices"] };
    expect((await call(s, "PATCH", `${HOOKS}${id}/`, { token: s.rootToken, body: filtered })).status).toBe(
      200,
    );
    expect(await notified()).toEqual([]);
    expect(await notified("invoices")).toEqual([id]);
    expect(
      (await call(s, "PATCH", `${HOOKS}${id}/`, { token: s.rootToken, body: { events: ["run.failed"] } }))
        .status,
    ).toBe(200);
    expect(await notified("invoices")).toEqual([]);
    expect((await call(s, "DELETE", `${HOOKS}${id}/`, { token: s.rootToken })).status).toBe(204);
    expect(await notified("invoices")).toEqual([]);
  });

  test("a webhook filtered by workflow follows the workflow's renames on the next run", async () => {
    const id = await createHook({ workflow_slugs: ["orders"] });
    expect(await notified()).toEqual([id]);
    const rename = (from: string, to: string) =>
      call(s, "PATCH", `/api/v1/orgs/acme/workflows/${from}/`, { token: s.rootToken, body: { slug: to } });
    expect((await rename("orders", "renamed")).status).toBe(200);
    // The filter names the workflow by its new slug (rewritten with the rename): still notified.
    expect((await call(s, "GET", `${HOOKS}${id}/`, { token: s.rootToken })).json.workflow_slugs).toEqual([
      "renamed",
    ]);
    expect(await notified("renamed")).toEqual([id]);
    expect((await rename("renamed", "orders")).status).toBe(200);
    expect(await notified()).toEqual([id]);
    expect((await call(s, "DELETE", `${HOOKS}${id}/`, { token: s.rootToken })).status).toBe(204);
    expect(await notified()).toEqual([]);
  });
});

describe("through another connection (the CLI, another node)", () => {
  const insertHook = async (events: string, slugs = "[]") => {
    const ts = new Date().toISOString();
    const rows = await other.sql<{ id: number }>(
      "INSERT INTO webhooks (org_id, url, events, workflow_slugs, is_active, secret, created_at, updated_at) VALUES (?, 'http://127.0.0.1:9/o', ?, ?, 1, 'whsec_x', ?, ?) RETURNING id",
      orgId,
      events,
      slugs,
      ts,
      ts,
    );
    return Number(rows[0]!.id);
  };

  test("a webhook inserted, disabled, refiltered and deleted elsewhere acts on the next run", async () => {
    expect(await notified()).toEqual([]);
    const id = await insertHook('["run.completed"]');
    expect(await notified()).toEqual([id]);
    await other.sql("UPDATE webhooks SET is_active = 0 WHERE id = ?", id);
    expect(await notified()).toEqual([]);
    await other.sql("UPDATE webhooks SET is_active = 1, workflow_slugs = '[\"invoices\"]' WHERE id = ?", id);
    expect(await notified()).toEqual([]);
    expect(await notified("invoices")).toEqual([id]);
    await other.sql("UPDATE webhooks SET events = '[\"run.error\"]' WHERE id = ?", id);
    expect(await notified("invoices")).toEqual([]);
    await other.sql(
      "UPDATE webhooks SET events = '[\"run.completed\"]', workflow_slugs = '[]' WHERE id = ?",
      id,
    );
    expect(await notified()).toEqual([id]);
    await other.sql("DELETE FROM webhooks WHERE id = ?", id);
    expect(await notified()).toEqual([]);
  });

  test("a webhook moved to another org elsewhere stops notifying this org's runs", async () => {
    const id = await insertHook('["run.completed"]');
    expect(await notified()).toEqual([id]);
    await s.user("olga", "elsewhere", "admin");
    const elsewhere = await s.row<{ id: number }>("SELECT id FROM orgs WHERE slug = 'elsewhere'");
    await other.sql("UPDATE webhooks SET org_id = ? WHERE id = ?", Number(elsewhere!.id), id);
    expect(await notified()).toEqual([]);
    await other.sql("DELETE FROM webhooks WHERE id = ?", id);
  });

  test("the delivery path's streak updates and a secret rotation leave the generation alone", async () => {
    const id = await createHook({});
    const before = await generation();
    await other.sql(
      "UPDATE webhooks SET failed_streak = failed_streak + 1, failing_since = ? WHERE id = ?",
      "2026-01-01T00:00:00.000Z",
      id,
    );
    await other.sql("UPDATE webhooks SET failed_streak = 0, failing_since = NULL WHERE id = ?", id);
    const rotated = await call(s, "POST", `${HOOKS}${id}/rotate-secret/`, { token: s.rootToken, body: {} });
    expect(rotated.status).toBe(200);
    expect(await generation()).toBe(before);
    await other.sql("UPDATE webhooks SET is_active = 0 WHERE id = ?", id);
    expect(await generation()).toBeGreaterThan(before);
    expect(await notified()).toEqual([]);
    await other.sql("DELETE FROM webhooks WHERE id = ?", id);
  });
});

// A group commit's runs after the first skip the outbox's program when the transaction already
// knows their org has no webhook (subscriptions.idle): runs of several orgs, interleaved, must
// each still get exactly their own org's rows, whichever org comes first in the group.
describe("runs of several orgs in one group commit", () => {
  let n = 0;
  /** Writes final runs of these orgs in one turn (one group commit on SQLite); their outbox rows. */
  async function group(orgs: { orgId: number; workflowId: number; userId: number }[]): Promise<number[][]> {
    const ids = orgs.map(() => `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`);
    await Promise.all(
      orgs.map((o, i) => {
        const [run, final] = finalRun({
          id: ids[i]!,
          ...o,
          user: { id: o.userId, username: "x" },
          doc: "{}",
        });
        return s.deps.runs.createFinal(
          run,
          final,
          s.deps.executor.inFinalTx({
            runId: ids[i]!,
            orgId: o.orgId,
            workflowId: o.workflowId,
            status: "succeeded",
            finishedAt: final.finishedAt,
          }),
        );
      }),
    );
    const out: number[][] = [];
    for (const id of ids) {
      const rows = await s.sql<{ webhook_id: number }>(
        "SELECT webhook_id FROM webhook_deliveries WHERE run_id = ? ORDER BY webhook_id",
        id,
      );
      out.push(rows.map((r) => Number(r.webhook_id)));
    }
    return out;
  }

  test("each run gets its own org's webhooks, before and after a webhook is added elsewhere", async () => {
    const quinn = await s.user("quinn", "quiet", "admin");
    await createWorkflow(
      s,
      quinn.token,
      {
        slug: "orders",
        allowed_file_types: ["JSON"],
        steps: [{ name: "syntax", validator: "syntax", config: {} }],
      },
      "quiet",
    );
    const wf = async (org: string) =>
      (await s.row<{ id: number; org_id: number }>(
        "SELECT w.id, w.org_id FROM workflows w JOIN orgs o ON o.id = w.org_id WHERE o.slug = ? AND w.slug = 'orders'",
        org,
      ))!;
    const [a, q] = [await wf("acme"), await wf("quiet")];
    const acme = { orgId: Number(a.org_id), workflowId: Number(a.id), userId: quinn.id };
    const quiet = { orgId: Number(q.org_id), workflowId: Number(q.id), userId: quinn.id };
    const hook = await createHook({ events: ["run.completed"] });
    const QUIET: number[] = [];
    // The quiet org first, then after the org with a webhook; and the other way round.
    expect(await group([quiet, quiet, acme, quiet, acme, quiet])).toEqual([
      QUIET,
      QUIET,
      [hook],
      QUIET,
      [hook],
      QUIET,
    ]);
    expect(await group([acme, quiet, quiet, acme])).toEqual([[hook], QUIET, QUIET, [hook]]);
    // A webhook of the quiet org inserted by another connection: the next group's runs see it.
    const ts = new Date().toISOString();
    const added = Number(
      (
        await other.sql<{ id: number }>(
          "INSERT INTO webhooks (org_id, url, events, workflow_slugs, is_active, secret, created_at, updated_at) VALUES (?, 'http://127.0.0.1:9/q', '[\"run.completed\"]', '[]', 1, 'whsec_x', ?, ?) RETURNING id",
          quiet.orgId,
          ts,
          ts,
        )
      )[0]!.id,
    );
    expect(await group([acme, quiet, quiet])).toEqual([[hook], [added], [added]]);
    await other.sql("DELETE FROM webhooks WHERE id IN (?, ?)", hook, added);
    expect(await group([quiet, acme, quiet])).toEqual([QUIET, QUIET, QUIET]);
  });
});
