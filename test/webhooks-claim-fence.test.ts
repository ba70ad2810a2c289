// A webhook attempt that outlives its claim (its node was stopped, e.g. SIGSTOP or a long GC
// pause, past the lease, and another node took the delivery over) records nothing when it ends:
// the delivery belongs to its new owner, whose attempt is in flight. Recording it cleared the new
// owner's claim — a third node sent the delivery while the second's attempt was still in flight —
// and set `tries` back to the stale count (seen with three binaries, SIGSTOP and SIGCONT).
import { afterAll, expect, test } from "bun:test";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.ts";

let s: TestServer;
let rx: Receiver;
afterAll(async () => {
  await s?.close();
  await rx?.stop();
});

test("an attempt that ends after another node took its delivery over leaves the delivery to that node", async () => {
  s = await startTestServer({ webhook_allow_private: true, webhook_retry_delays_ms: "50" });
  rx = startReceiver();
  // The first attempt is held by the receiver until the test answers it.
  let answer: (r: Response) => void = () => {};
  rx.respond(() => new Promise<Response>((resolve) => (answer = resolve)));
  await createWorkflow(s, s.rootToken, {
    slug: "orders",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
    token: s.rootToken,
    body: { url: `${rx.url}/hook`, events: ["run.completed"] },
  });
  expect(hook.status).toBe(201);
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
    token: s.rootToken,
    raw: "{}",
    headers: { "content-type": "application/json" },
  });
  expect(r.status).toBe(201);
  await rx.waitFor((got) => got.length === 1);
  // What another node's claim leaves once this node's lease ran out: the delivery leased to it.
  const claimedAt = new Date().toISOString();
  const leaseEnd = new Date(Date.now() + 3_600_000).toISOString();
  await s.sql(
    "UPDATE webhook_deliveries SET claimed_at = ?, claimed_by = 'other-node', next_attempt_at = ? WHERE run_id = ?",
    claimedAt,
    leaseEnd,
    r.json.id,
  );
  answer(new Response("nope", { status: 500 }));
  await until(() => s.deps.webhookDispatcher.stats().attempts.failed === 1, "the attempt to end");
  expect(
    await s.sql(
      "SELECT status, tries, claimed_by, claimed_at, next_attempt_at, finished_at FROM webhook_deliveries WHERE run_id = ?",
      r.json.id,
    ),
  ).toEqual([
    {
      status: "pending",
      tries: 0,
      claimed_by: "other-node",
      claimed_at: claimedAt,
      next_attempt_at: leaseEnd,
      finished_at: null,
    },
  ]);
  expect(await s.count("webhook_attempts")).toBe(0);
  const w = (await call(s, "GET", `/api/v1/orgs/acme/webhooks/${hook.json.id}/`, { token: s.rootToken }))
    .json;
  expect(w.is_active).toBe(true);
  // The attempt is counted where it happened (this node's metrics), not in the delivery's log.
  expect(s.deps.webhookDispatcher.stats().deliveries).toEqual({ succeeded: 0, failed: 0 });
});
