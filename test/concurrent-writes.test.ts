// Requests that check something and then write, arriving together: on PostgreSQL they run on
// separate connections (of one node, or of several nodes on one database), READ COMMITTED, so a
// check read before the other request's write commits must be taken under a lock; on SQLite the
// one writer runs them one after the other. Each case expects what one-after-the-other gives.
//
// On PostgreSQL the race is made exact: the test holds `LOCK TABLE … IN SHARE MODE` on the table
// the requests write, so every request reads (and takes its row locks) and then waits at its
// write, or waits for the lock the first one holds; the test lets them go once that many
// requests wait on a lock. On SQLite the requests are simply sent together.
import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_ACTIVE_TOKENS } from "../src/tokens/service.ts";
import { SYSTEM } from "../src/audit/actor.ts";
import { verifyChain } from "../src/audit/verify.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let root: string;
beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true });
  root = s.rootToken;
  await createWorkflow(s, root, HOLD_WORKFLOW);
});
afterAll(() => s.close());

type Answer = Awaited<ReturnType<typeof call>>;

/**
 * Sends the requests together; on PostgreSQL, holds their writes to `table` until all wait (sent
 * in order, each once the one before waits), then runs `meanwhile` (SQL) in the holding
 * transaction before letting them go. `mode` EXCLUSIVE
 * holds row locks (`FOR UPDATE`, a foreign key's check) on the table too.
 */
async function together(
  table: string,
  requests: (() => Promise<Answer>)[],
  meanwhile?: string,
  mode = "SHARE",
): Promise<Answer[]> {
  if (!s.databaseUrl) return Promise.all(requests.map((r) => r()));
  const sql = new SQL({ url: s.databaseUrl, max: 1 });
  try {
    const pending = await sql.begin(async (tx) => {
      await tx.unsafe(`LOCK TABLE ${table} IN ${mode} MODE`);
      // One at a time, each once the one before waits: the first sent is the first to write.
      const ps: Promise<Answer>[] = [];
      for (const r of requests) {
        const p = r();
        // Not awaited here: they finish only once this transaction ends.
        p.catch(() => {});
        ps.push(p);
        await until(async () => {
          const [w] = await s.sql<{ n: number | string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          return Number(w!.n) >= ps.length;
        }, `${ps.length} requests waiting on a lock`);
      }
      if (meanwhile) await tx.unsafe(meanwhile);
      return { ps };
    });
    return await Promise.all(pending.ps);
  } finally {
    await sql.close();
  }
}

const statuses = (rs: Answer[]) => rs.map((r) => r.status).sort();

describe("409 and one write, not two, when requests race", () => {
  test("usernames differing only in case, created together: one 201, one 409 naming the other", async () => {
    const rs = await together("users", [
      () => call(s, "POST", "/api/v1/admin/users/", { token: root, body: { username: "Twin" } }),
      () => call(s, "POST", "/api/v1/admin/users/", { token: root, body: { username: "twin" } }),
    ]);
    expect(statuses(rs)).toEqual([201, 409]);
    const won = rs.find((r) => r.status === 201)!.json.username as string;
    const lost = won === "Twin" ? "twin" : "Twin";
    const message = `The username "${lost}" is taken (as "${won}").`;
    expect(rs.find((r) => r.status === 409)!.json).toEqual(
      errorBody(409, "conflict", message, [{ field: "username", code: "unique", message }]),
    );
    expect(await s.count("users WHERE lower(username) = 'twin'")).toBe(1);
  });

  test("two token policies set together that contradict each other: the second is refused", async () => {
    const rs = await together("settings", [
      () =>
        call(s, "PATCH", "/api/v1/admin/settings/", { token: root, body: { token_default_ttl_days: 30 } }),
      () => call(s, "PATCH", "/api/v1/admin/settings/", { token: root, body: { token_max_ttl_days: 10 } }),
    ]);
    expect(statuses(rs)).toEqual([200, 400]);
    const settings = (await call(s, "GET", "/api/v1/admin/settings/", { token: root })).json;
    expect(settings.token_default_ttl_days === 30 && settings.token_max_ttl_days === 10).toBe(false);
    const refused = rs.find((r) => r.status === 400)!.json;
    expect(refused).toEqual(
      errorBody(400, "invalid_request", "Inconsistent token policies.", [
        {
          field: "token_default_ttl_days",
          code: "above_max",
          message: "The default lifetime (30 days) exceeds token_max_ttl_days (10).",
        },
      ]),
    );
    await call(s, "PATCH", "/api/v1/admin/settings/", {
      token: root,
      body: { token_default_ttl_days: null, token_max_ttl_days: null },
    });
  });

  test(`tokens created together by a user one short of ${MAX_ACTIVE_TOKENS}: one 201, the others 409`, async () => {
    const u = await s.user("collector");
    for (let i = 1; i < MAX_ACTIVE_TOKENS - 1; i++) await s.deps.tokens.create(u.id, `t${i}`, null, SYSTEM);
    const create = (name: string) => () =>
      call(s, "POST", "/api/v1/users/me/tokens/", { token: u.token, body: { name } });
    const rs = await together("api_tokens", [create("a"), create("b"), create("c")]);
    expect(statuses(rs)).toEqual([201, 409, 409]);
    expect(rs.find((r) => r.status === 409)!.json).toEqual(
      errorBody(
        409,
        "conflict",
        `A user may hold at most ${MAX_ACTIVE_TOKENS} active tokens; revoke unused ones first.`,
      ),
    );
    expect(await s.count(`api_tokens WHERE user_id = ${u.id}`)).toBe(MAX_ACTIVE_TOKENS);
  });

  test("an org deleted twice at once: both 204, one org.delete entry, the first deletion's time kept", async () => {
    await call(s, "POST", "/api/v1/admin/orgs/", { token: root, body: { org_slug: "gone" } });
    const del = () => call(s, "DELETE", "/api/v1/admin/orgs/gone/", { token: root });
    expect(statuses(await together("orgs", [del, del]))).toEqual([204, 204]);
    expect(await s.count("audit_log WHERE action = 'org.delete' AND target_name = 'gone'")).toBe(1);
    const entry = (await s.row<{ changes: string }>(
      "SELECT changes FROM audit_log WHERE action = 'org.delete' AND target_name = 'gone'",
    ))!;
    const org = (await call(s, "GET", "/api/v1/admin/orgs/gone/", { token: root })).json;
    expect(JSON.parse(entry.changes).after.deleted_at).toBe(org.deleted_at);
  });

  test("an org suspended as it is deleted: 409 when the deletion came first, never a suspended deleted org", async () => {
    await call(s, "POST", "/api/v1/admin/orgs/", { token: root, body: { org_slug: "doomed" } });
    const rs = await together("orgs", [
      () => call(s, "DELETE", "/api/v1/admin/orgs/doomed/", { token: root }),
      () => call(s, "POST", "/api/v1/admin/orgs/doomed/suspend/", { token: root }),
    ]);
    const actions = (
      await s.sql<{ action: string }>(
        "SELECT action FROM audit_log WHERE target_name = 'doomed' ORDER BY seq",
      )
    ).map((e) => e.action);
    if (rs[1]!.status === 409) {
      expect(rs[1]!.json).toEqual(
        errorBody(
          409,
          "conflict",
          'The organization "doomed" has been deleted; restore it first (POST /api/v1/admin/orgs/doomed/restore/).',
        ),
      );
      expect(actions).toEqual(["org.create", "org.delete"]);
    } else expect(actions).toEqual(["org.create", "org.suspend", "org.delete"]);
    if (onPostgres) expect(rs[1]!.status).toBe(409); // the deletion held the row first
    const org = (await call(s, "GET", "/api/v1/admin/orgs/doomed/", { token: root })).json;
    expect(org.deleted_at).not.toBeNull();
  });

  test("an org renamed twice at once: each entry's before is what the other left", async () => {
    await call(s, "POST", "/api/v1/admin/orgs/", { token: root, body: { org_slug: "named", name: "First" } });
    const rename = (name: string) => () =>
      call(s, "PATCH", "/api/v1/orgs/named/", { token: root, body: { name } });
    expect(statuses(await together("orgs", [rename("Second"), rename("Third")]))).toEqual([200, 200]);
    const entries = await s.sql<{ changes: string }>(
      "SELECT changes FROM audit_log WHERE action = 'org.update' AND target_name = 'named' ORDER BY seq",
    );
    const names = entries.map(
      (e) => JSON.parse(e.changes) as { before: { name: string }; after: { name: string } },
    );
    expect(names.length).toBe(2);
    expect(names[0]!.before.name).toBe("First");
    expect(names[1]!.before.name).toBe(names[0]!.after.name);
  });

  test("a webhook deleted twice at once: one 204 and one 404, one webhook.delete entry", async () => {
    const c = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: root,
      body: { url: "http://127.0.0.1:9/hook", events: ["ping"] },
    });
    expect(c.status).toBe(201);
    const del = () => call(s, "DELETE", `/api/v1/orgs/acme/webhooks/${c.json.id}/`, { token: root });
    const rs = await together("webhooks", [del, del]);
    expect(statuses(rs)).toEqual([204, 404]);
    expect(rs.find((r) => r.status === 404)!.json).toEqual(errorBody(404, "not_found", "Webhook not found."));
    expect(await s.count("audit_log WHERE action = 'webhook.delete'")).toBe(1);
  });

  test("a stored schema deleted twice at once: one 204 and one 404, one schema.delete entry", async () => {
    const c = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
      token: root,
      body: { uri: "urn:twice", kind: "json_schema", schema: {} },
    });
    expect(c.status).toBe(201);
    const del = () => call(s, "DELETE", `/api/v1/orgs/acme/schemas/${c.json.id}/`, { token: root });
    const rs = await together("org_schemas", [del, del]);
    expect(statuses(rs)).toEqual([204, 404]);
    expect(rs.find((r) => r.status === 404)!.json).toEqual(errorBody(404, "not_found", "Schema not found."));
    expect(await s.count("audit_log WHERE action = 'schema.delete'")).toBe(1);
  });
});

// A user deleted (through another node, or the CLI) after the request looked it up and before
// its transaction wrote the row that names it: the answer the request gets when the deletion
// came first, never a 500 from the foreign key. Exact on PostgreSQL only (the deletion is made
// in the test's transaction while the request waits at its write); on SQLite the one writer
// leaves no such window to hold open.
describe.skipIf(!onPostgres)("a user deleted while a request that names it writes", () => {
  const deleteUser = (id: number) => `DELETE FROM users WHERE id = ${id}`;

  test("400 not_found for the member being added", async () => {
    const u = await s.user("leaving");
    const [r] = await together(
      "memberships",
      [
        () =>
          call(s, "POST", "/api/v1/orgs/acme/members/", {
            token: root,
            body: { username: "leaving", role: "viewer" },
          }),
      ],
      deleteUser(u.id),
    );
    expect(r!.json).toEqual(
      errorBody(400, "invalid_request", "No such user.", [
        { field: "username", code: "not_found", message: 'There is no user "leaving".' },
      ]),
    );
  });

  test("400 not_found for an org's first Admin; no org left behind", async () => {
    const u = await s.user("founder");
    const [r] = await together(
      "orgs",
      [
        () =>
          call(s, "POST", "/api/v1/admin/orgs/", {
            token: root,
            body: { org_slug: "founded", admin: "founder" },
          }),
      ],
      deleteUser(u.id),
    );
    expect(r!.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for admin.", [
        { field: "admin", code: "not_found", message: 'There is no user "founder".' },
      ]),
    );
    expect(await s.count("orgs WHERE slug = 'founded'")).toBe(0);
  });

  test("404 for a token of a user deleted since the request was authenticated", async () => {
    const u = await s.user("fading");
    const [r] = await together(
      "users",
      [() => call(s, "POST", "/api/v1/users/me/tokens/", { token: u.token, body: { name: "late" } })],
      deleteUser(u.id),
      "EXCLUSIVE",
    );
    expect(r!.json).toEqual(errorBody(404, "not_found", "User not found."));
  });
});

// Each node (and each HTTP thread) remembers its own last use of a token and writes it every 30 s:
// a node whose last use is older than the one another node wrote must not set the time back.
test("a token's last use written by a node is not set back by another node's older one", async () => {
  const u = await s.user("roamer");
  expect((await call(s, "GET", "/api/v1/users/me/", { token: u.token })).status).toBe(200);
  // Another node used the token later and wrote that use first.
  const later = new Date(Date.now() + 60_000).toISOString();
  await s.sql("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", later, u.tokenId);
  // This node shows the later time too, though its own last use (this request) is older.
  const own = await call(s, "GET", `/api/v1/users/me/tokens/${u.tokenId}/`, { token: u.token });
  expect(own.json.last_used_at).toBe(later);
  await s.deps.tokens.flush();
  const row = await s.row<{ last_used_at: string }>(
    "SELECT last_used_at FROM api_tokens WHERE id = ?",
    u.tokenId,
  );
  expect(row!.last_used_at).toBe(later);
});

test("the audit log's chain is whole after every race above", async () => {
  const v = await verifyChain(s.deps.db);
  expect({ ok: v.ok, broken: v.broken }).toEqual({ ok: true, broken: null });
  expect(v.checked).toBe(await s.count("audit_log"));
});

// A queued run canceled through this node while another node claims it: the cancel's conditional
// write (still queued?) finds it running elsewhere, and must follow it there, not answer 200 with
// the run still running. Exact on PostgreSQL: the claim is written in the test's transaction while
// the cancel waits at its write.
describe.skipIf(!onPostgres)("a queued run canceled as another node claims it", () => {
  test("200 canceled: the cancel follows the run to the node that took it", async () => {
    await createWorkflow(s, root, {
      slug: "quick",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const async = { "content-type": "application/json", prefer: "respond-async" };
    // As many held runs as this node takes at once (its workers' and their pipelines'): the next
    // run of the org stays queued.
    const gates = Array.from({ length: s.deps.executor.stats().capacity }, () => s.gates.gate());
    for (const g of gates)
      expect(
        (
          await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
            token: root,
            raw: g.doc(),
            headers: async,
          })
        ).status,
      ).toBe(202);
    await until(
      async () => (await s.count("runs WHERE status = 'running'")) === gates.length,
      "every held run claimed",
    );
    const queued = await call(s, "POST", "/api/v1/orgs/acme/workflows/quick/runs/", {
      token: root,
      raw: "{}",
      headers: async,
    });
    expect(queued.json.status).toBe("queued");
    // No node to hand the cancel to (the claim below is made up): this node writes it.
    s.deps.executor.useCancelChannel(async () => false);
    const sql = new SQL({ url: s.databaseUrl!, max: 1 });
    try {
      const pending = await sql.begin(async (tx) => {
        await tx.unsafe("LOCK TABLE runs IN SHARE MODE");
        const p = call(s, "POST", `/api/v1/orgs/acme/runs/${queued.json.id}/cancel/`, { token: root });
        p.catch(() => {});
        await until(async () => {
          const [w] = await s.sql<{ n: number | string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE runs SET status = $1, steps%'",
          );
          return Number(w!.n) >= 1;
        }, "the cancel waiting at its write");
        // Another node claims the run meanwhile.
        const at = new Date().toISOString();
        const until30s = new Date(Date.now() + 30_000).toISOString();
        await tx.unsafe(
          `UPDATE runs SET status = 'running', node_id = 'elsewhere', attempts = attempts + 1, started_at = '${at}', lease_until = '${until30s}' WHERE id = '${queued.json.id}'`,
        );
        return { p };
      });
      const r = await pending.p;
      expect([r.status, r.json.status, r.json.error]).toEqual([200, "canceled", "Canceled by root."]);
      expect(await s.count(`audit_log WHERE action = 'run.cancel' AND target_id = '${queued.json.id}'`)).toBe(
        1,
      );
    } finally {
      await sql.close();
      for (const g of gates) g.open();
    }
  });
});

// Held by a gate, so exact on both backends: the run executes while its user is deleted.
test("a sync run whose user is deleted while it executes: 401 to the request (its token died in flight), the run kept without its user", async () => {
  const u = await s.user("runaway", "acme", "author");
  const g = s.gates.gate();
  const r = call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
    token: u.token,
    raw: g.doc(),
    headers: { "content-type": "application/json" },
  });
  await g.held();
  expect((await call(s, "DELETE", "/api/v1/admin/users/runaway/", { token: root })).status).toBe(204);
  g.open();
  // The spec: in-flight requests with a token that stopped working fail with 401. Before, the
  // run's write failed on the deleted user (500, then 409) and the run was lost.
  expect((await r).json).toEqual(errorBody(401, "authentication_required", "Invalid token."));
  // …and the run is stored as the deletion leaves an async run of that user: without its id.
  const list = await call(s, "GET", "/api/v1/orgs/acme/runs/?workflow=hold", { token: root });
  const kept = list.json.results.filter(
    (x: { created_by: { username: string } }) => x.created_by.username === "runaway",
  );
  expect(kept).toHaveLength(1);
  expect(kept[0]).toMatchObject({ status: "succeeded", created_by: { id: null, username: "runaway" } });
});
