// What suspending, deleting and restoring an organization does to work already under way
// (docs/webhooks.md, "Suspended and deleted organizations"): its webhooks' pending deliveries
// wait, neither sent nor failed, until the org is restored.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RECHECK_AFTER_MS } from "../src/runs/service.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.ts";

let s: TestServer;
const receivers: Receiver[] = [];
const JSON_CT = { "content-type": "application/json" };

beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true, webhook_retry_delays_ms: "100,100" });
});
afterAll(async () => {
  for (const r of receivers) await r.stop();
  await s.close();
});

/** Org `org` with Admin `admin`, workflow "w" and a webhook to a new receiver. */
async function orgWithHook(org: string) {
  const { token } = await s.user(`${org}-admin`, org, "admin");
  await createWorkflow(
    s,
    token,
    { slug: "w", allowed_file_types: ["JSON"], steps: [{ name: "syntax", validator: "syntax", config: {} }] },
    org,
  );
  const rx = startReceiver();
  receivers.push(rx);
  const hook = await call(s, "POST", `/api/v1/orgs/${org}/webhooks/`, {
    token,
    body: { url: `${rx.url}/hook`, events: ["run.completed"] },
  });
  expect(hook.status).toBe(201);
  const run = () =>
    call(s, "POST", `/api/v1/orgs/${org}/workflows/w/runs/`, { token, raw: "{}", headers: JSON_CT });
  return { token, rx, hookId: hook.json.id as number, run };
}

type Delivery = { status: string; tries: number; next_attempt_at: string; claimed_at: string | null };
const delivery = (hookId: number) =>
  s.row<Delivery>(
    "SELECT status, tries, next_attempt_at, claimed_at FROM webhook_deliveries WHERE webhook_id = ?",
    hookId,
  );

describe("a webhook's pending deliveries while its organization is not active", () => {
  for (const [how, method, path] of [
    ["suspended", "POST", "suspend/"],
    ["deleted", "DELETE", ""],
  ] as const)
    test(`${how}: a due retry is not sent; the restore sends it`, async () => {
      const org = `held-${how}`;
      const a = await orgWithHook(org);
      // The first attempt is answered only after the org is suspended or deleted, with a 500: the
      // delivery is then pending, its retry due 100 ms later.
      let release = () => {};
      const answered = new Promise<void>((r) => {
        release = r;
      });
      a.rx.respond(async (_req, n) => {
        if (n > 1) return new Response("ok");
        await answered;
        return new Response("down", { status: 500 });
      });
      expect((await a.run()).status).toBe(201);
      await a.rx.waitFor((r) => r.length === 1);
      const change = await call(s, method, `/api/v1/admin/orgs/${org}/${path}`, { token: s.rootToken });
      expect(change.status).toBe(method === "DELETE" ? 204 : 200);
      release();
      await until(async () => (await delivery(a.hookId))?.claimed_at === null, "the first attempt recorded");
      const first = (await delivery(a.hookId))!;
      expect([first.status, first.tries]).toEqual(["pending", 1]);
      await until(() => Date.now() > Date.parse(first.next_attempt_at) + 50, "the retry to be due");

      // A delivery of another org, claimed after the retry fell due: the dispatcher's pass that
      // took it would have taken the held retry too.
      const b = await orgWithHook(`live-${how}`);
      expect((await b.run()).status).toBe(201);
      await b.rx.waitFor((r) => r.length === 1);
      await until(async () => (await delivery(b.hookId))?.status === "succeeded", "the other org's delivery");
      expect(a.rx.received.length).toBe(1);
      expect(await delivery(a.hookId)).toEqual({ ...first, claimed_at: null });

      const restored = await call(s, "POST", `/api/v1/admin/orgs/${org}/restore/`, { token: s.rootToken });
      expect(restored.status).toBe(200);
      await a.rx.waitFor((r) => r.length === 2);
      await until(async () => (await delivery(a.hookId))?.status === "succeeded", "the held delivery sent");
      const log = await call(s, "GET", `/api/v1/orgs/${org}/webhooks/${a.hookId}/deliveries/`, {
        token: a.token,
      });
      expect(log.status).toBe(200);
      expect(
        log.json.results.map((d: { status: string; attempts: unknown[] }) => [d.status, d.attempts.length]),
      ).toEqual([["succeeded", 2]]);
    });

  test("a run that ends while its org is suspended notifies no webhook, then or after the restore", async () => {
    const org = "quiet-suspended";
    const a = await orgWithHook(org);
    // Suspended between the run's start and its end: held by a gate.
    const gate = s.gates.gate();
    await createWorkflow(
      s,
      a.token,
      {
        slug: "hold",
        allowed_file_types: ["JSON"],
        steps: [{ name: "hold", validator: "test_hold", config: {} }],
      },
      org,
    );
    const started = await call(s, "POST", `/api/v1/orgs/${org}/workflows/hold/runs/`, {
      token: a.token,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(started.status).toBe(202);
    await gate.held();
    expect((await call(s, "POST", `/api/v1/admin/orgs/${org}/suspend/`, { token: s.rootToken })).status).toBe(
      200,
    );
    gate.open();
    await until(
      async () =>
        (await s.row<{ status: string }>("SELECT status FROM runs WHERE id = ?", started.json.id))?.status ===
        "succeeded",
      "the held run to finish",
    );
    expect((await call(s, "POST", `/api/v1/admin/orgs/${org}/restore/`, { token: s.rootToken })).status).toBe(
      200,
    );
    const run = await call(s, "GET", `/api/v1/orgs/${org}/runs/${started.json.id}/`, { token: a.token });
    expect([run.status, run.json.status]).toEqual([200, "succeeded"]);
    expect(await s.count(`webhook_deliveries WHERE webhook_id = ${a.hookId}`)).toBe(0);
    expect(a.rx.received.length).toBe(0);
  });
});

describe("a run request waiting for its run (Prefer: wait) when access changes meanwhile", () => {
  /** Org `org`: Admin, an executor `ex`, a workflow "hold"; starts a held run as `ex` that waits. */
  async function waiting(org: string) {
    const { token: admin } = await s.user(`${org}-admin`, org, "admin");
    const ex = await s.user(`${org}-ex`, org, "executor");
    await createWorkflow(
      s,
      admin,
      {
        slug: "hold",
        allowed_file_types: ["JSON"],
        steps: [{ name: "hold", validator: "test_hold", config: {} }],
      },
      org,
    );
    const gate = s.gates.gate();
    const pending = call(s, "POST", `/api/v1/orgs/${org}/workflows/hold/runs/`, {
      token: ex.token,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "wait=60" },
    });
    await gate.held();
    const finish = async () => {
      gate.open();
      return pending;
    };
    const runs = async () =>
      s.sql<{ status: string }>(
        "SELECT r.status FROM runs r JOIN orgs o ON o.id = r.org_id WHERE o.slug = ? ORDER BY r.id",
        org,
      );
    return { admin, ex, finish, runs };
  }
  const forbidden = (detail: string) => ({ detail, code: "permission_denied", status: 403, errors: [] });

  test("403 when the caller is removed from the org; the run goes on", async () => {
    const w = await waiting("wait-removed");
    const removed = await call(s, "DELETE", `/api/v1/orgs/wait-removed/members/wait-removed-ex/`, {
      token: w.admin,
    });
    expect(removed.status).toBe(204);
    const r = await w.finish();
    expect([r.status, r.json]).toEqual([403, forbidden("You are not a member of this organization.")]);
    await until(async () => (await w.runs())[0]?.status === "succeeded", "the run to finish");
  });

  test("403 when the org is suspended meanwhile", async () => {
    const w = await waiting("wait-suspended");
    expect(
      (await call(s, "POST", "/api/v1/admin/orgs/wait-suspended/suspend/", { token: s.rootToken })).status,
    ).toBe(200);
    const r = await w.finish();
    expect([r.status, r.json]).toEqual([403, forbidden("The organization is suspended.")]);
  });

  test("403 when the org is deleted meanwhile", async () => {
    const w = await waiting("wait-deleted");
    expect((await call(s, "DELETE", "/api/v1/orgs/wait-deleted/", { token: w.admin })).status).toBe(204);
    const r = await w.finish();
    expect([r.status, r.json]).toEqual([403, forbidden("The organization has been deleted.")]);
  });

  test("201 with the results when the role is lowered to Viewer: a Viewer reads runs", async () => {
    const w = await waiting("wait-viewer");
    const lowered = await call(s, "PATCH", "/api/v1/orgs/wait-viewer/members/wait-viewer-ex/", {
      token: w.admin,
      body: { role: "viewer" },
    });
    expect(lowered.status).toBe(200);
    const r = await w.finish();
    expect([r.status, r.json.status]).toEqual([201, "succeeded"]);
  });
});

describe("a slow upload when access changes while the body arrives", () => {
  test("403 and no run when the role is lowered to Viewer (Prefer: respond-async)", async () => {
    const org = "upload-viewer";
    const { token: admin } = await s.user(`${org}-admin`, org, "admin");
    const u = await s.user(`${org}-ex`, org, "executor");
    await createWorkflow(
      s,
      admin,
      {
        slug: "w",
        allowed_file_types: ["JSON"],
        steps: [{ name: "syntax", validator: "syntax", config: {} }],
      },
      org,
    );
    const b = await call(s, "POST", "/api/v1/users/me/tokens/", { token: u.token, body: { name: "slow" } });
    expect(b.status).toBe(201);
    let send!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        send = c;
      },
    });
    send.enqueue(new TextEncoder().encode('{"id": '));
    const pending = fetch(`${s.url}/api/v1/orgs/${org}/workflows/w/runs/`, {
      method: "POST",
      headers: { authorization: `Bearer ${b.json.token}`, ...JSON_CT, prefer: "respond-async" },
      body,
      duplex: "half",
    } as RequestInit);
    // The request has been authenticated once the token shows a last use (kept in memory).
    await until(async () => {
      const list = await call(s, "GET", "/api/v1/users/me/tokens/", { token: u.token });
      return !!list.json.results.find((t: { id: number; last_used_at: string | null }) => t.id === b.json.id)
        ?.last_used_at;
    }, "the upload's authentication");
    const lowered = await call(s, "PATCH", `/api/v1/orgs/${org}/members/${org}-ex/`, {
      token: admin,
      body: { role: "viewer" },
    });
    expect(lowered.status).toBe(200);
    // Past the re-check's threshold: the body is read for longer than RECHECK_AFTER_MS.
    await Bun.sleep(RECHECK_AFTER_MS + 10);
    send.enqueue(new TextEncoder().encode("1}"));
    send.close();
    const r = await pending;
    expect([r.status, await r.json()]).toEqual([
      403,
      {
        detail: "This action needs the executor role or higher.",
        code: "permission_denied",
        status: 403,
        errors: [],
      },
    ]);
    expect(await s.count(`runs WHERE org_id = ${await s.org(org)}`)).toBe(0);
  });
});

describe("retention during a download", () => {
  test("content purged while GET …/content/ streams it: the connection is cut, not a short file ended cleanly", async () => {
    const org = "purge-download";
    const { token } = await s.user(`${org}-admin`, org, "admin");
    await createWorkflow(
      s,
      token,
      {
        slug: "w",
        retention_days: 1,
        allowed_file_types: ["TEXT"],
        steps: [{ name: "syntax", validator: "syntax", config: {} }],
      },
      org,
    );
    // 20 MiB: 20 slices of 1 MiB (src/runs/content-store.ts), far more than the socket buffers
    // hold while the client reads nothing.
    const size = 20 * 1024 * 1024;
    const started = await call(s, "POST", `/api/v1/orgs/${org}/workflows/w/runs/`, {
      token,
      raw: "x".repeat(size),
      headers: { "content-type": "text/plain" },
    });
    expect(started.status).toBe(201);
    const res = await fetch(`${s.url}/api/v1/orgs/${org}/runs/${started.json.id}/content/`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let got = (await reader.read()).value?.byteLength ?? 0;
    // Time simulated: the submission made older than its workflow's retention, then the sweep.
    await s.sql(
      "UPDATE submissions SET created_at = ? WHERE id = ?",
      "2020-01-01T00:00:00.000Z",
      started.json.submission.id,
    );
    expect(await s.retention.sweep()).toBe(1);
    const rest = (async () => {
      for (;;) {
        const c = await reader.read();
        if (c.done) return "ended";
        got += c.value.byteLength;
      }
    })();
    await expect(rest).rejects.toThrow();
    expect(got).toBeLessThan(size);
    const after = await call(s, "GET", `/api/v1/orgs/${org}/runs/${started.json.id}/content/`, { token });
    expect([after.status, after.json]).toEqual([
      410,
      {
        detail: "The submission content was purged by the retention policy; the run and its findings remain.",
        code: "gone",
        status: 410,
        errors: [],
      },
    ]);
  });
});

describe("a webhook filter naming a workflow deleted since", () => {
  test("200 for a save that sends the stored filter back; 400 for a slug it adds", async () => {
    const org = "filter-deleted";
    const { token } = await s.user(`${org}-admin`, org, "admin");
    for (const slug of ["w", "v"])
      await createWorkflow(
        s,
        token,
        { slug, allowed_file_types: ["JSON"], steps: [{ name: "syntax", validator: "syntax", config: {} }] },
        org,
      );
    const rx = startReceiver();
    receivers.push(rx);
    const hook = await call(s, "POST", `/api/v1/orgs/${org}/webhooks/`, {
      token,
      body: { url: `${rx.url}/a`, workflow_slugs: ["w", "v"] },
    });
    expect(hook.status).toBe(201);
    expect((await call(s, "DELETE", `/api/v1/orgs/${org}/workflows/w/`, { token })).status).toBe(204);
    const path = `/api/v1/orgs/${org}/webhooks/${hook.json.id}/`;
    // What the web app's form sends: every field, the filter as it was.
    const form = {
      url: `${rx.url}/b`,
      events: ["run.completed"],
      workflow_slugs: ["w", "v"],
      is_active: true,
    };
    const saved = await call(s, "PATCH", path, { token, body: form });
    expect([saved.status, saved.json.url, saved.json.workflow_slugs]).toEqual([
      200,
      `${rx.url}/b`,
      ["w", "v"],
    ]);
    const unknown = (i: number, slug: string) => ({
      field: `workflow_slugs[${i}]`,
      code: "unknown_workflow",
      message: `No workflow with the slug "${slug}" in this organization.`,
    });
    const added = await call(s, "PATCH", path, { token, body: { workflow_slugs: ["w", "v", "x"] } });
    expect([added.status, added.json]).toEqual([
      400,
      { detail: "The webhook is invalid.", code: "invalid_request", status: 400, errors: [unknown(2, "x")] },
    ]);
    // Taken out, the deleted workflow's slug cannot be put back: it is new to the filter again.
    expect((await call(s, "PATCH", path, { token, body: { workflow_slugs: ["v"] } })).status).toBe(200);
    const back = await call(s, "PATCH", path, { token, body: { workflow_slugs: ["w", "v"] } });
    expect([back.status, back.json]).toEqual([
      400,
      { detail: "The webhook is invalid.", code: "invalid_request", status: 400, errors: [unknown(0, "w")] },
    ]);
  });
});
