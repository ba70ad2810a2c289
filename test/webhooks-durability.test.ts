// Webhook durability (issue 7): the outbox survives restarts (a receiver down across a restart
// still gets every event), an attempt cut short by a crash is sent again, and an endpoint that
// keeps failing is deactivated with a reason its admins can read.
import { otherConnection } from "./helpers/backend.ts";
import { afterAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, restartTestServer, startTestServer } from "./helpers/server.ts";
import {
  type Receiver,
  eventually,
  startReceiver,
  verifyStandardWebhook,
} from "./helpers/webhook-receiver.ts";

const JSON_CT = { "content-type": "application/json" };
const open: { servers: TestServer[]; receivers: Receiver[] } = { servers: [], receivers: [] };
afterAll(async () => {
  for (const r of open.receivers) await r.stop();
  for (const s of open.servers) await s.close();
});

async function fixture(s: TestServer, rx: Receiver) {
  await createWorkflow(s, s.rootToken, {
    slug: "orders",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
    token: s.rootToken,
    body: { url: `${rx.url}/hook` },
  });
  expect(hook.status).toBe(201);
  return { hook: hook.json, path: `/api/v1/orgs/acme/webhooks/${hook.json.id}/` };
}
const run = (s: TestServer) =>
  call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
    token: s.rootToken,
    raw: "{}",
    headers: JSON_CT,
  });
const deliveries = async (s: TestServer, path: string) =>
  (await call(s, "GET", `${path}deliveries/`, { token: s.rootToken })).json.results as {
    id: string;
    status: string;
    attempts: { error: string | null }[];
  }[];

describe("restart", () => {
  test("a receiver that is down while the server restarts gets every event afterwards", async () => {
    const settings = {
      webhook_allow_private: true,
      webhook_retry_delays_ms: Array(40).fill("300").join(","),
      webhook_timeout_ms: 1000,
    };
    const s = await startTestServer(settings);
    const down = startReceiver();
    const { hook, path } = await fixture(s, down);
    await down.stop(); // connection refused from now on
    for (let i = 0; i < 3; i++) expect((await run(s)).json.status).toBe("succeeded");
    // Every delivery has failed at least once: they are waiting for a retry.
    const before = await eventually(async () => {
      const ds = await deliveries(s, path);
      return ds.length === 3 && ds.every((d) => d.status === "pending" && d.attempts.length > 0)
        ? ds
        : undefined;
    });
    expect(before[0]!.attempts[0]!.error).toStartWith("connection failed");
    await s.stop();
    // A crash in the middle of an attempt leaves the delivery leased far ahead: the next start
    // must send it anyway (simulated in the stopped server's database).
    const other = await otherConnection(s);
    await other.sql(
      "UPDATE webhook_deliveries SET claimed_at = ?, claimed_by = 'test-node', next_attempt_at = ? WHERE id = ?",
      new Date().toISOString(),
      "2999-01-01T00:00:00.000Z",
      before[0]!.id,
    );
    await other.close();
    const s2 = await restartTestServer(s, settings);
    open.servers.push(s2);
    const up = startReceiver(down.port);
    open.receivers.push(up);
    const got = await up.waitFor((x) => new Set(x.map((g) => g.headers.get("webhook-id"))).size === 3);
    expect(new Set(got.map((g) => g.headers.get("webhook-id")))).toEqual(new Set(before.map((d) => d.id)));
    expect(got.every((g) => verifyStandardWebhook(hook.secret, g.headers, g.body))).toBe(true);
    expect(got.every((g) => g.json.type === "run.completed")).toBe(true);
  });
});

describe("deactivation", () => {
  test("after N failed deliveries over the configured days the endpoint is deactivated, with a reason", async () => {
    const s = await startTestServer({
      webhook_allow_private: true,
      webhook_retry_delays_ms: "50",
      webhook_disable_after_failures: 2,
      webhook_disable_after_days: 0,
    });
    open.servers.push(s);
    const rx = startReceiver();
    open.receivers.push(rx);
    rx.respond(() => new Response("nope", { status: 500 }));
    const { path } = await fixture(s, rx);
    for (let i = 1; i <= 2; i++) {
      await run(s);
      await eventually(async () =>
        (await deliveries(s, path)).filter((d) => d.status === "failed").length === i ? true : undefined,
      );
    }
    const w = (await call(s, "GET", path, { token: s.rootToken })).json;
    expect(w).toMatchObject({ is_active: false, disabled_at: expect.any(String) });
    expect(w.disabled_reason).toContain("2 consecutive failed deliveries");
    expect(w.disabled_reason).toContain("HTTP 500");
    await run(s);
    expect(await deliveries(s, path)).toHaveLength(2); // no new deliveries while deactivated
    const ping = await call(s, "POST", `${path}ping/`, { token: s.rootToken });
    expect(ping.json).toEqual(
      errorBody(
        409,
        "conflict",
        `The webhook is inactive (${w.disabled_reason}); activate it first (PATCH is_active: true).`,
      ),
    );
    rx.respond(() => new Response("ok"));
    const on = await call(s, "PATCH", path, { token: s.rootToken, body: { is_active: true } });
    expect(on.json).toMatchObject({ is_active: true, disabled_reason: null, disabled_at: null });
    const again = await call(s, "POST", `${path}ping/`, { token: s.rootToken });
    expect(again.status).toBe(202);
    await eventually(async () => ((await deliveries(s, path))[0]!.status === "succeeded" ? true : undefined));
  });
  test("failures that do not yet span the configured days leave the endpoint active", async () => {
    const s = await startTestServer({
      webhook_allow_private: true,
      webhook_retry_delays_ms: "50",
      webhook_disable_after_failures: 2,
      webhook_disable_after_days: 3,
    });
    open.servers.push(s);
    const rx = startReceiver();
    open.receivers.push(rx);
    rx.respond(() => new Response("nope", { status: 500 }));
    const { hook, path } = await fixture(s, rx);
    const failedCount = async (n: number) =>
      eventually(async () =>
        (await deliveries(s, path)).filter((d) => d.status === "failed").length === n ? true : undefined,
      );
    await run(s);
    await failedCount(1);
    await run(s);
    await failedCount(2);
    expect((await call(s, "GET", path, { token: s.rootToken })).json.is_active).toBe(true);
    // Simulating the passage of time: the streak started four days ago.
    const fourDaysAgo = new Date(Date.now() - 4 * 86_400_000).toISOString();
    await s.sql("UPDATE webhooks SET failing_since = ? WHERE id = ?", fourDaysAgo, hook.id);
    await run(s);
    await failedCount(3);
    const w = (await call(s, "GET", path, { token: s.rootToken })).json;
    expect([w.is_active, w.disabled_reason]).toEqual([
      false,
      expect.stringContaining("3 consecutive failed deliveries over at least 3 days"),
    ]);
  });
});
