// A 409 that depends on the resource's state comes before If-Match / If-None-Match (RFC 9110
// §13.2.1: a server MUST ignore the preconditions when the answer without them would not be a 2xx):
// the last admin of an org or of the instance. Both are judged in the transaction that writes, the
// admins' rows locked, and the refusal after them in that transaction (src/orgs/store.ts,
// src/users/store.ts). Until 2026-11-29 these requests were a 412. The rest of the 412s:
// test/preconditions.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { until } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { type Receiver, holdAnswers, startReceiver } from "./helpers/webhook-receiver.ts";
import { EXISTS, NO_TAG, malformed } from "./helpers/preconditions.ts";

let s: TestServer;
let rx: Receiver;
const A = "/api/v1/orgs/acme";

beforeAll(async () => {
  rx = startReceiver();
  s = await startTestServer({ webhook_allow_private: true });
});
afterAll(async () => {
  await s?.close();
  await rx?.stop();
});

const FALSE_CONDITIONS: Record<string, string>[] = [
  { "if-match": '"x"' },
  { "if-none-match": "*" },
  { "if-match": "*", "if-none-match": "*" },
  // A malformed header is judged with them, after the 409 too.
  { "if-match": "x" },
];

const rows = async () =>
  JSON.stringify([
    await s.sql("SELECT org_id, user_id, role FROM memberships ORDER BY org_id, user_id"),
    await s.sql("SELECT id, username, is_admin FROM users ORDER BY id"),
    await s.sql("SELECT count(*) AS n FROM audit_log"),
  ]);

describe("the last admin's 409 comes before a false If-Match or If-None-Match: *", () => {
  const cases = [
    {
      name: "removing the org's last admin",
      method: "DELETE",
      path: `${A}/members/root/`,
      body: undefined,
      answer: errorBody(
        409,
        "conflict",
        "The last admin of an organization cannot be removed; make another member admin first.",
      ),
    },
    {
      name: "demoting the org's last admin",
      method: "PATCH",
      path: `${A}/members/root/`,
      body: { role: "viewer" },
      answer: errorBody(
        409,
        "conflict",
        "The last admin of an organization cannot be demoted; make another member admin first.",
      ),
    },
    {
      name: "deleting the instance's last administrator",
      method: "DELETE",
      path: "/api/v1/admin/users/root/",
      body: undefined,
      answer: errorBody(
        409,
        "conflict",
        "The last instance administrator cannot be deleted; make another user admin first.",
      ),
    },
  ];
  for (const c of cases)
    test(c.name, async () => {
      const before = await rows();
      for (const headers of [{}, ...FALSE_CONDITIONS]) {
        const r = await call(s, c.method, c.path, { token: s.rootToken, body: c.body, headers });
        expect([headers, r.status, r.json]).toEqual([headers, 409, c.answer]);
      }
      expect(await rows()).toBe(before);
    });
});

describe("with another admin, the same requests are the 412 and change nothing", () => {
  const expected = [NO_TAG, EXISTS, EXISTS, malformed("If-Match")];

  test("an org admin removed or demoted, an instance admin deleted: 412 (or 400), then the write", async () => {
    await s.user("ada", "acme", "admin", { is_admin: true });
    const requests = [
      { method: "DELETE", path: `${A}/members/ada/`, body: undefined, done: 204 },
      { method: "PATCH", path: `${A}/members/ada/`, body: { role: "viewer" }, done: 200 },
      { method: "DELETE", path: "/api/v1/admin/users/ada/", body: undefined, done: 204 },
    ];
    for (const q of requests) {
      const before = await rows();
      for (const [i, headers] of FALSE_CONDITIONS.entries()) {
        const r = await call(s, q.method, q.path, { token: s.rootToken, body: q.body, headers });
        expect([headers, r.status, r.json]).toEqual([headers, expected[i]?.status, expected[i]]);
      }
      expect(await rows()).toBe(before);
      // Conditions that hold: the write is made.
      const ok = await call(s, q.method, q.path, {
        token: s.rootToken,
        body: q.body,
        headers: { "if-match": "*", "if-none-match": '"x"' },
      });
      expect(ok.status).toBe(q.done);
      if (q.method === "DELETE" && q.path.includes("/members/")) {
        const back = await call(s, "POST", `${A}/members/`, {
          token: s.rootToken,
          body: { username: "ada", role: "admin" },
        });
        expect(back.status).toBe(201);
      }
    }
    expect(await s.sql("SELECT id FROM users WHERE username = 'ada'")).toEqual([]);
  });
});

describe("the other 409s a request gets from the state of its target, whatever its content, come first", () => {
  const ifMatch = { "if-match": '"x"' };
  const noneStar = { "if-none-match": "*" };
  /** The request with each false condition: the answer without them, and nothing changed. */
  async function firstAnswer(
    method: string,
    path: string,
    answer: Record<string, unknown>,
    opts: { token?: string; body?: unknown } = {},
  ) {
    const before = await rows();
    const tables = async () =>
      JSON.stringify([
        await s.sql("SELECT * FROM webhook_deliveries ORDER BY id"),
        await s.sql("SELECT id, revoked_at FROM api_tokens ORDER BY id"),
        await s.sql("SELECT id, status, deleted_at FROM orgs ORDER BY id"),
        await s.sql("SELECT count(*) AS n FROM runs"),
        await s.sql("SELECT count(*) AS n FROM webhooks"),
      ]);
    const also = await tables();
    for (const headers of [{}, ifMatch, noneStar]) {
      const r = await call(s, method, path, { token: opts.token ?? s.rootToken, body: opts.body, headers });
      expect([headers, r.status, r.json]).toEqual([headers, answer.status, answer]);
    }
    expect(await rows()).toBe(before);
    expect(await tables()).toBe(also);
  }

  test("a ping, a redelivery of an inactive webhook", async () => {
    const hook = await call(s, "POST", `${A}/webhooks/`, {
      token: s.rootToken,
      body: { url: "http://127.0.0.1:9/h", is_active: false },
    });
    expect([hook.status, hook.json.is_active]).toEqual([201, false]);
    const inactive = errorBody(
      409,
      "conflict",
      "The webhook is inactive; activate it first (PATCH is_active: true).",
    );
    await firstAnswer("POST", `${A}/webhooks/${hook.json.id}/ping/`, inactive);
    // A delivery made, then its webhook turned off: a redelivery would make it pending again.
    const live = await call(s, "POST", `${A}/webhooks/`, {
      token: s.rootToken,
      body: { url: `${rx.url}/h` },
    });
    expect(live.status).toBe(201);
    const ping = await call(s, "POST", `${A}/webhooks/${live.json.id}/ping/`, { token: s.rootToken });
    expect(ping.status).toBe(202);
    const delivery = `${A}/webhooks/${live.json.id}/deliveries/${ping.json.id}/`;
    await until(
      async () => (await call(s, "GET", delivery, { token: s.rootToken })).json.status === "succeeded",
      "the ping delivered",
    );
    const off = await call(s, "PATCH", `${A}/webhooks/${live.json.id}/`, {
      token: s.rootToken,
      body: { is_active: false },
    });
    expect(off.status).toBe(200);
    await firstAnswer("POST", `${delivery}redeliver/`, inactive);
  });

  test("a redelivery of a delivery still pending", async () => {
    // The receiver holds the attempt: the delivery stays pending until the test releases it.
    const release = holdAnswers(rx);
    try {
      const hook = await call(s, "POST", `${A}/webhooks/`, {
        token: s.rootToken,
        body: { url: `${rx.url}/held` },
      });
      const ping = await call(s, "POST", `${A}/webhooks/${hook.json.id}/ping/`, { token: s.rootToken });
      expect(ping.status).toBe(202);
      const delivery = `${A}/webhooks/${hook.json.id}/deliveries/${ping.json.id}/`;
      await until(() => rx.received.some((r) => r.path === "/held"), "the attempt under way");
      const pending = await call(s, "GET", delivery, { token: s.rootToken });
      expect(pending.json.status).toBe("pending");
      const next = pending.json.next_attempt_at;
      await firstAnswer(
        "POST",
        `${delivery}redeliver/`,
        errorBody(
          409,
          "conflict",
          `The delivery is still pending; it is retried on its own schedule${next ? ` (next attempt at ${next})` : ""}.`,
        ),
      );
    } finally {
      release();
      rx.respond(() => new Response("ok"));
    }
  });

  test("a new webhook of an org that has its 20", async () => {
    const have = Number((await s.sql<{ n: number }>("SELECT count(*) AS n FROM webhooks"))[0]?.n);
    for (let i = have; i < 20; i++) {
      const r = await call(s, "POST", `${A}/webhooks/`, {
        token: s.rootToken,
        body: { url: `http://127.0.0.1:9/h${i}` },
      });
      expect(r.status).toBe(201);
    }
    await firstAnswer(
      "POST",
      `${A}/webhooks/`,
      errorBody(409, "conflict", "An organization can have at most 20 webhooks."),
      { body: { url: "http://127.0.0.1:9/one-more" } },
    );
  });

  test("a new token of a user who holds their 100", async () => {
    const tok = (await s.user("tina")).token;
    for (let i = 1; i < 100; i++) {
      const r = await call(s, "POST", "/api/v1/users/me/tokens/", { token: tok, body: { name: `t${i}` } });
      expect(r.status).toBe(201);
    }
    await firstAnswer(
      "POST",
      "/api/v1/users/me/tokens/",
      errorBody(409, "conflict", "A user may hold at most 100 active tokens; revoke unused ones first."),
      { token: tok, body: { name: "one more" } },
    );
  });

  test("the suspension of a deleted org", async () => {
    await s.org("gone");
    expect((await call(s, "DELETE", "/api/v1/admin/orgs/gone/", { token: s.rootToken })).status).toBe(204);
    await firstAnswer(
      "POST",
      "/api/v1/admin/orgs/gone/suspend/",
      errorBody(
        409,
        "conflict",
        'The organization "gone" has been deleted; restore it first (POST /api/v1/admin/orgs/gone/restore/).',
      ),
    );
  });

  test("a run of a workflow with no active step: its 400", async () => {
    const bare = await call(s, "POST", `${A}/workflows/`, {
      token: s.rootToken,
      body: { slug: "bare", name: "bare", allowed_file_types: ["JSON"] },
    });
    expect(bare.status).toBe(201);
    await firstAnswer(
      "POST",
      `${A}/workflows/bare/runs/`,
      errorBody(400, "no_workflow_steps", "The workflow has no active steps."),
      { body: { a: 1 } },
    );
  });

  test("a run of an inactive workflow, of a version it does not have", async () => {
    const wf = await call(s, "POST", `${A}/workflows/`, {
      token: s.rootToken,
      body: {
        slug: "off",
        name: "off",
        status: "inactive",
        allowed_file_types: ["JSON"],
        steps: [{ name: "syntax", validator: "syntax", config: {} }],
      },
    });
    expect(wf.status).toBe(201);
    await firstAnswer(
      "POST",
      `${A}/workflows/off/runs/`,
      errorBody(409, "workflow_inactive", "The workflow is inactive; re-enable it to accept runs."),
      { body: { a: 1 } },
    );
    const on = await call(s, "POST", `${A}/workflows/`, {
      token: s.rootToken,
      body: {
        slug: "on",
        name: "on",
        allowed_file_types: ["JSON"],
        steps: [{ name: "syntax", validator: "syntax", config: {} }],
      },
    });
    expect(on.status).toBe(201);
    await firstAnswer(
      "POST",
      `${A}/workflows/on/runs/?version=9`,
      errorBody(
        409,
        "workflow_version_unavailable",
        'Workflow "on" has no version 9: its versions are 1 to 1.',
        [{ field: "version", code: "unavailable", message: "No version 9." }],
      ),
      { body: { a: 1 } },
    );
  });
});
