// What suspending, deleting and restoring an organization does to work already under way
// (docs/webhooks.md, "Suspended and deleted organizations"): its webhooks' pending deliveries
// wait, neither sent nor failed, until the org is restored.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
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
