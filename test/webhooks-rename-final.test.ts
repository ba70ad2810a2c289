// A run that ends while its workflow is renamed notifies the webhooks whose filter names the
// workflow: the rename rewrites the filter and the slug together (docs/webhooks.md), so the run's
// final transaction must compare the filter and the slug as of one moment. On PostgreSQL it read
// them in two statements, and a rename committed between them left the run without its delivery.
// Made exact there: the test holds the workflows table while the run's final write reads it, and
// commits the rename's two writes in that hold. On both backends a batch of runs then ends while
// the workflow is renamed through the API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let root: string;
let n = 0;
beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true, workers: 4 }); // a held run holds a worker
  root = s.rootToken;
});
afterAll(() => s.close());

const JSON_ASYNC = { "content-type": "application/json", prefer: "respond-async" };
/** A workflow of one held step, a webhook whose filter names it, and `count` runs held in it. */
async function heldRuns(count: number) {
  const slug = `held-${++n}`;
  await createWorkflow(s, root, {
    slug,
    allowed_file_types: ["JSON"],
    steps: [{ name: "hold", validator: "test_hold", config: {} }],
  });
  const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
    token: root,
    body: { url: "http://127.0.0.1:9/", workflow_slugs: [slug] },
  });
  const gates = Array.from({ length: count }, () => s.gates.gate());
  const runs = await Promise.all(
    gates.map(
      async (g) =>
        (
          await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
            token: root,
            raw: g.doc(),
            headers: JSON_ASYNC,
          })
        ).json,
    ),
  );
  await Promise.all(gates.map((g) => g.held()));
  return { slug, hookId: hook.json.id as number, gates, runs };
}
const deliveries = async (runId: string) =>
  (
    await s.sql<{ webhook_id: number }>("SELECT webhook_id FROM webhook_deliveries WHERE run_id = ?", runId)
  ).map((d) => Number(d.webhook_id));

describe.skipIf(!onPostgres)("the rename committed while the run's final write reads (PostgreSQL)", () => {
  test("the run is delivered to the webhook, under the new slug", async () => {
    const { slug, hookId, gates, runs } = await heldRuns(1);
    const sql = new SQL({ url: s.databaseUrl!, max: 1 });
    const watch = new SQL({ url: s.databaseUrl!, max: 1 });
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe("LOCK TABLE workflows IN ACCESS EXCLUSIVE MODE");
        gates[0]!.open();
        // The run's final transaction has begun and waits to read the workflow's slug.
        await until(async () => {
          const [w] = await watch.unsafe(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%slug%'",
          );
          return Number(w.n) >= 1;
        }, "the final write waiting on the workflows table");
        // The rename's own two writes (src/workflows/store.ts, renameInFilters), committed now.
        await tx.unsafe(`UPDATE workflows SET slug = '${slug}-x' WHERE slug = '${slug}'`);
        await tx.unsafe(`UPDATE webhooks SET workflow_slugs = '["${slug}-x"]' WHERE id = ${hookId}`);
      });
    } finally {
      await sql.close();
      await watch.close();
    }
    const run = await waitForRun(s, root, runs[0].url);
    expect(run.status).toBe("succeeded");
    expect(await deliveries(run.id)).toEqual([hookId]);
  });
});

test("4 runs ending as their workflow is renamed through the API: each delivered once", async () => {
  const { slug, hookId, gates, runs } = await heldRuns(4);
  const renamed = call(s, "PATCH", `/api/v1/orgs/acme/workflows/${slug}/`, {
    token: root,
    body: { slug: `${slug}-x` },
  });
  for (const g of gates) g.open();
  expect((await renamed).status).toBe(200);
  for (const r of runs) {
    expect((await waitForRun(s, root, r.url)).status).toBe("succeeded");
    expect(await deliveries(r.id)).toEqual([hookId]);
  }
});
