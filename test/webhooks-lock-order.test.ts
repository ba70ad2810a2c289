// A webhook's filter change takes the org's row first, as a workflow's rename does (PostgreSQL,
// src/webhooks/store.ts, lockForRename). A group commit of runs (src/runs/batch.ts) holds a
// webhook's row (FOR KEY SHARE: the outbox read of a run that ended) and then takes the org's
// row (FOR KEY SHARE: the foreign key of a run created in the same group). With the org's row
// locked FOR UPDATE, which a foreign key's share waits for, and the webhook's row then waited
// for, the two deadlocked: PostgreSQL aborted one after deadlock_timeout (the group, retried
// write by write, or the change). Held exact here: the test's transaction is the group.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true });
});
afterAll(() => s.close());

const WORKFLOW = (slug: string) => ({
  slug,
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
});

describe.skipIf(!onPostgres)("a run group holding a webhook's row, then the org's (PostgreSQL)", () => {
  for (const [what, change] of [
    [
      "a filter change",
      (slug: string, hookId: number) =>
        call(s, "PATCH", `/api/v1/orgs/acme/webhooks/${hookId}/`, {
          token: s.rootToken,
          body: { workflow_slugs: [slug] },
        }),
    ],
    [
      "a rename",
      (slug: string) =>
        call(s, "PATCH", `/api/v1/orgs/acme/workflows/${slug}/`, {
          token: s.rootToken,
          body: { slug: `${slug}-x` },
        }),
    ],
  ] as const) {
    test(`${what} meanwhile does not deadlock with it`, async () => {
      const slug = `wf-${what.length}`;
      await createWorkflow(s, s.rootToken, WORKFLOW(slug));
      const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
        token: s.rootToken,
        body: { url: "http://127.0.0.1:9/", workflow_slugs: [slug] },
      });
      expect(hook.status).toBe(201);
      const [org] = await s.sql<{ id: number }>("SELECT id FROM orgs WHERE slug = ?", "acme");
      const sql = new SQL({ url: s.databaseUrl!, max: 1 });
      const watch = new SQL({ url: s.databaseUrl!, max: 1 });
      let answer: Promise<Awaited<ReturnType<typeof call>>> | undefined;
      try {
        await sql.begin(async (tx) => {
          // Found at once if there is one (the server's own transactions keep the default).
          await tx.unsafe("SET LOCAL deadlock_timeout = '100ms'");
          await tx.unsafe(`SELECT id FROM webhooks WHERE id = ${Number(hook.json.id)} FOR KEY SHARE`);
          let answered = false;
          answer = change(slug, Number(hook.json.id));
          void answer.then(
            () => (answered = true),
            () => (answered = true),
          );
          // The change holds the org's row: answered, or waiting for the webhook's row.
          await until(async () => {
            if (answered) return true;
            const [w] = await watch.unsafe(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            );
            return Number(w.n) >= 1;
          }, "the change answered or waiting on a lock");
          await tx.unsafe(`SELECT id FROM orgs WHERE id = ${Number(org!.id)} FOR KEY SHARE`);
        });
      } finally {
        await sql.close();
        await watch.close();
      }
      expect((await answer!).status).toBe(200);
    });
  }
});
