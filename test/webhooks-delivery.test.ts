// Webhook delivery (issue 7, CONTRACT §7) against real receivers on 127.0.0.1: Standard Webhooks
// signatures checked independently, payloads, filters, retries, time limit, redelivery, ping,
// rotation, no redirects, bounded response reads, and a request path that never waits.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { brotliCompressSync } from "node:zlib";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { sample } from "./helpers/threads.ts";
import {
  type Receiver,
  eventually,
  holdAnswers,
  startReceiver,
  verifyStandardWebhook,
} from "./helpers/webhook-receiver.ts";

let s: TestServer;
let admin: string;
let rootId: number;
const receivers: Receiver[] = [];
const JSON_CT = { "content-type": "application/json" };
const syntaxOnly = (slug: string) => ({
  slug,
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
});

beforeAll(async () => {
  s = await startTestServer({
    webhook_allow_private: true,
    webhook_retry_delays_ms: "100,100",
    webhook_timeout_ms: 1000,
  });
  admin = s.rootToken;
  rootId = (await s.deps.users.getByUsername("root"))!.id;
});
afterAll(async () => {
  for (const r of receivers) await r.stop();
  await s.close();
});

/** A fresh org (root is Admin) with workflow "orders", a receiver and a webhook pointing at it. */
async function setup(org: string, body: Record<string, unknown> = {}) {
  await s.deps.orgs.addMember(await s.org(org), rootId, "admin", SYSTEM);
  await createWorkflow(s, admin, syntaxOnly("orders"), org);
  const rx = startReceiver();
  receivers.push(rx);
  const r = await call(s, "POST", `/api/v1/orgs/${org}/webhooks/`, {
    token: admin,
    body: { url: `${rx.url}/hook`, ...body },
  });
  expect(r.status).toBe(201);
  const path = `/api/v1/orgs/${org}/webhooks/${r.json.id}/`;
  const deliveries = async () => (await call(s, "GET", `${path}deliveries/`, { token: admin })).json.results;
  /** Polls the log until the delivery is no longer pending. */
  const settled = (id: string) =>
    eventually(async () => {
      const d = (await call(s, "GET", `${path}deliveries/${id}/`, { token: admin })).json;
      return d.status === "pending" ? undefined : d;
    });
  return { rx, hook: r.json, path, deliveries, settled };
}
const run = (org: string, doc: string, wf = "orders") =>
  call(s, "POST", `/api/v1/orgs/${org}/workflows/${wf}/runs/`, { token: admin, raw: doc, headers: JSON_CT });

describe("events", () => {
  test("a succeeded run sends run.completed and run.succeeded, signed per Standard Webhooks", async () => {
    const { rx, hook, deliveries } = await setup("ev-ok", {
      events: ["run.completed", "run.succeeded", "run.failed"],
    });
    const r = await run("ev-ok", '{"a": 1}');
    expect([r.status, r.json.status]).toEqual([201, "succeeded"]);
    const got = await rx.waitFor((x) => x.length === 2);
    expect(got.map((g) => g.json.type).sort()).toEqual(["run.completed", "run.succeeded"]);
    const runNow = (await call(s, "GET", `/api/v1/orgs/ev-ok/runs/${r.json.id}/`, { token: admin })).json;
    for (const g of got) {
      expect(verifyStandardWebhook(hook.secret, g.headers, g.body)).toBe(true);
      expect(g.headers.get("content-type")).toBe("application/json");
      expect(g.headers.get("webhook-id")).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(g.json).toEqual({ type: g.json.type, timestamp: expect.any(String), data: { run: runNow } });
      expect((g.json.data.run as { url: string }).url).toBe(`${s.url}/api/v1/orgs/ev-ok/runs/${r.json.id}/`);
    }
    const log = await eventually(async () => {
      const ds = await deliveries();
      return ds.every((d: { status: string }) => d.status === "succeeded") ? ds : undefined;
    });
    expect(log.map((d: { id: string }) => d.id).sort()).toEqual(
      got.map((g) => g.headers.get("webhook-id")).sort(),
    );
    expect(log[0]).toEqual({
      id: expect.any(String),
      webhook_id: hook.id,
      event: expect.any(String),
      run_id: r.json.id,
      status: "succeeded",
      created_at: expect.any(String),
      next_attempt_at: null,
      finished_at: expect.any(String),
      attempts: [
        {
          attempted_at: expect.any(String),
          http_status: 200,
          duration_ms: expect.any(Number),
          error: null,
          response_excerpt: "ok",
        },
      ],
    });
  });
  test("a failed run sends run.failed with the run but without its findings", async () => {
    const { rx, hook } = await setup("ev-fail", { events: ["run.failed"] });
    const r = await run("ev-fail", '{"a": ');
    expect(r.json.status).toBe("failed");
    expect(r.json.steps[0].findings.length).toBeGreaterThan(0);
    const [g] = await rx.waitFor((x) => x.length === 1);
    expect(verifyStandardWebhook(hook.secret, g!.headers, g!.body)).toBe(true);
    expect(g!.json.type).toBe("run.failed");
    const sent = g!.json.data.run as {
      status: string;
      summary: { errors: number };
      steps: { findings: [] }[];
    };
    expect(sent.status).toBe("failed");
    expect(sent.summary.errors).toBeGreaterThan(0);
    expect(sent.steps.map((x) => x.findings)).toEqual([[]]);
  });
  test("a canceled and a timed-out run send run.completed alone, once each, subscribed to every event", async () => {
    const { rx, hook, deliveries } = await setup("ev-end", {
      events: ["run.completed", "run.succeeded", "run.failed", "run.error"],
    });
    await createWorkflow(
      s,
      admin,
      {
        slug: "held",
        allowed_file_types: ["JSON"],
        steps: [{ name: "hold", validator: "test_hold", config: {} }],
      },
      "ev-end",
    );
    await createWorkflow(
      s,
      admin,
      {
        slug: "slow",
        allowed_file_types: ["JSON"],
        steps: [{ name: "hold", validator: "test_hold", config: { timeout_ms: 300 } }],
      },
      "ev-end",
    );
    // Canceled while its step is held; the gate is opened after, so nothing else ends it.
    const gate = s.gates.gate();
    const queued = await call(s, "POST", "/api/v1/orgs/ev-end/workflows/held/runs/", {
      token: admin,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(queued.status).toBe(202);
    await gate.held();
    const canceled = await call(s, "POST", `/api/v1/orgs/ev-end/runs/${queued.json.id}/cancel/`, {
      token: admin,
    });
    expect([canceled.status, canceled.json.status]).toEqual([200, "canceled"]);
    gate.open();
    // Held past its own time limit (the gate is never opened).
    const timedOut = await run("ev-end", s.gates.gate().doc(), "slow");
    expect([timedOut.status, timedOut.json.status]).toEqual([201, "timed_out"]);
    const got = await rx.waitFor((x) => x.length >= 2);
    const byRun = new Map<string, string[]>();
    // Every delivery is queued in the transaction that ends its run: the log is whole now.
    for (const d of await deliveries()) byRun.set(d.run_id, [...(byRun.get(d.run_id) ?? []), d.event]);
    expect(Object.fromEntries(byRun)).toEqual({
      [queued.json.id]: ["run.completed"],
      [timedOut.json.id]: ["run.completed"],
    });
    for (const id of [queued.json.id, timedOut.json.id]) {
      const sent = got.filter((g) => (g.json.data.run as { id: string }).id === id);
      expect(sent.map((g) => g.json.type)).toEqual(["run.completed"]);
      expect(verifyStandardWebhook(hook.secret, sent[0]!.headers, sent[0]!.body)).toBe(true);
      const now = (await call(s, "GET", `/api/v1/orgs/ev-end/runs/${id}/`, { token: admin })).json;
      expect(sent[0]!.json).toEqual({
        type: "run.completed",
        timestamp: now.finished_at,
        data: { run: now },
      });
    }
  });
  test("only subscribed events of the named workflows are queued", async () => {
    const { rx, deliveries } = await setup("ev-filter", {
      events: ["run.failed"],
      workflow_slugs: ["orders"],
    });
    await createWorkflow(s, admin, syntaxOnly("invoices"), "ev-filter");
    await run("ev-filter", '{"ok": true}'); // succeeded: not subscribed
    await run("ev-filter", "{", "invoices"); // failed, but another workflow
    const wanted = await run("ev-filter", "{");
    // The outbox row is written with the final status: once the run is final, the log is complete.
    const log = await deliveries();
    expect(log.map((d: { event: string; run_id: string }) => [d.event, d.run_id])).toEqual([
      ["run.failed", wanted.json.id],
    ]);
    await rx.waitFor((x) => x.length === 1);
  });
});

describe("a workflow renamed", () => {
  test("carries the webhook filters naming it; a new workflow given the old slug is not notified", async () => {
    const { rx, path } = await setup("ev-rename", { events: ["run.completed"], workflow_slugs: ["orders"] });
    const renamed = await call(s, "PATCH", "/api/v1/orgs/ev-rename/workflows/orders/", {
      token: admin,
      body: { slug: "purchase-orders" },
    });
    expect(renamed.status).toBe(200);
    expect((await call(s, "GET", path, { token: admin })).json.workflow_slugs).toEqual(["purchase-orders"]);
    await createWorkflow(s, admin, syntaxOnly("orders"), "ev-rename");
    await run("ev-rename", "{}"); // the new "orders": not chosen
    const chosen = await run("ev-rename", "{}", "purchase-orders");
    const got = await rx.waitFor((x) => x.length >= 1);
    const logged = (await call(s, "GET", `${path}deliveries/`, { token: admin })).json.results;
    expect(logged.map((d: { run_id: string }) => d.run_id)).toEqual([chosen.json.id]);
    expect(got.map((g) => (g.json.data.run as { id: string }).id)).toEqual([chosen.json.id]);
    const audit = await call(s, "GET", "/api/v1/orgs/ev-rename/audit/?action=webhook.update", {
      token: admin,
    });
    expect(audit.json.results[0]).toMatchObject({
      action: "webhook.update",
      changes: {
        before: { workflow_slugs: ["orders"] },
        after: { workflow_slugs: ["purchase-orders"] },
        reason: "workflow.rename",
      },
    });
  });
});

describe("retries", () => {
  test("500s are retried until a 2xx, with every attempt logged", async () => {
    const { rx, hook, deliveries, settled } = await setup("re-500");
    rx.respond((_, n) => (n <= 2 ? new Response("boom", { status: 500 }) : new Response("ok")));
    await run("re-500", "{}");
    const [pending] = await deliveries();
    const d = await settled(pending.id);
    expect(d.status).toBe("succeeded");
    expect(d.attempts.map((a: { http_status: number; error: string }) => [a.http_status, a.error])).toEqual([
      [500, "HTTP 500"],
      [500, "HTTP 500"],
      [200, null],
    ]);
    expect(d.attempts[0].response_excerpt).toBe("boom");
    expect(new Set(rx.received.map((g) => g.headers.get("webhook-id")))).toEqual(new Set([d.id]));
    expect(rx.received.every((g) => verifyStandardWebhook(hook.secret, g.headers, g.body))).toBe(true);
  });
  test("an attempt over the time limit fails and is retried", async () => {
    const { rx, deliveries, settled } = await setup("re-slow");
    rx.respond(async (_, n) => {
      if (n === 1) await Bun.sleep(2500); // the receiver is slower than the 1 s limit
      return new Response("ok");
    });
    await run("re-slow", "{}");
    const d = await settled((await deliveries())[0].id);
    expect(d.status).toBe("succeeded");
    expect(d.attempts[0]).toMatchObject({ http_status: null, error: "timed out after 1000 ms" });
    expect(d.attempts[0].duration_ms).toBeGreaterThanOrEqual(990);
    expect(d.attempts[1]).toMatchObject({ http_status: 200, error: null });
  });
  test("after the last retry the delivery is failed; redeliver sends it again, same webhook-id", async () => {
    const { rx, path, deliveries, settled } = await setup("re-fail");
    rx.respond(() => new Response("down", { status: 503 }));
    await run("re-fail", "{}");
    const d = await settled((await deliveries())[0].id);
    expect([d.status, d.next_attempt_at, d.attempts.length]).toEqual(["failed", null, 3]);
    rx.respond(() => new Response("ok"));
    const again = await call(s, "POST", `${path}deliveries/${d.id}/redeliver/`, { token: admin });
    expect(again.status).toBe(202);
    expect([again.json.id, again.json.status, again.json.finished_at]).toEqual([d.id, "pending", null]);
    const done = await settled(d.id);
    expect([done.status, done.attempts.length, done.attempts[3].http_status]).toEqual(["succeeded", 4, 200]);
    expect(rx.received.at(-1)!.headers.get("webhook-id")).toBe(d.id);
  });
  test("/metrics counts attempts and finished deliveries by result, and the deliveries pending", async () => {
    const scrape = async () => {
      const m = await call(s, "GET", "/metrics", { token: admin });
      expect(m.status).toBe(200);
      const n = (name: string, labels: Record<string, string> = {}) => sample(m.text, name, labels);
      return {
        attempts: {
          ok: n("assay_webhook_attempts_total", { result: "succeeded" }),
          failed: n("assay_webhook_attempts_total", { result: "failed" }),
        },
        finished: {
          ok: n("assay_webhook_deliveries_total", { status: "succeeded" }),
          failed: n("assay_webhook_deliveries_total", { status: "failed" }),
        },
        pending: n("assay_webhook_deliveries_pending"),
        inFlight: n("assay_webhook_attempts_in_flight"),
      };
    };
    const { rx, path, deliveries, settled } = await setup("re-metrics");
    // Earlier tests' attempts all counted: nothing pending, nothing under way.
    await until(async () => {
      const m = await scrape();
      return m.pending === 0 && m.inFlight === 0;
    }, "earlier deliveries to finish");
    const before = await scrape();
    rx.respond(() => new Response("down", { status: 503 }));
    await run("re-metrics", "{}");
    const failed = await settled((await deliveries())[0].id);
    expect([failed.status, failed.attempts.length]).toEqual(["failed", 3]);
    const release = holdAnswers(rx);
    const ping = await call(s, "POST", `${path}ping/`, { token: admin });
    await rx.waitFor((x) => x.length === 4);
    const during = await scrape();
    expect([during.pending, during.inFlight]).toEqual([1, 1]); // the ping, being attempted
    release();
    expect((await settled(ping.json.id)).status).toBe("succeeded");
    const after = await scrape();
    expect(after.attempts).toEqual({ ok: before.attempts.ok + 1, failed: before.attempts.failed + 3 });
    expect(after.finished).toEqual({ ok: before.finished.ok + 1, failed: before.finished.failed + 1 });
  });
  test("while an attempt is under way, next_attempt_at says when it began (not the claim's lease end)", async () => {
    const { rx, path } = await setup("re-busy");
    const release = holdAnswers(rx);
    const ping = await call(s, "POST", `${path}ping/`, { token: admin });
    await rx.waitFor((x) => x.length === 1); // the attempt has reached the receiver, which holds it
    const d = (await call(s, "GET", `${path}deliveries/${ping.json.id}/`, { token: admin })).json;
    expect(d.status).toBe("pending");
    // Before: the lease's end, the time limit plus 30 s ahead, as if the next attempt were due then.
    expect(Date.parse(d.next_attempt_at)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(d.next_attempt_at)).toBeGreaterThanOrEqual(Date.parse(d.created_at));
    const listed = (await call(s, "GET", `${path}deliveries/`, { token: admin })).json.results[0];
    expect(listed.next_attempt_at).toBe(d.next_attempt_at);
    release();
  });
  test("409 redeliver while pending; 404 for an unknown delivery", async () => {
    const { rx, hook, path } = await setup("re-409");
    const release = holdAnswers(rx);
    const ping = await call(s, "POST", `${path}ping/`, { token: admin });
    await rx.waitFor((x) => x.length === 1);
    const r = await call(s, "POST", `${path}deliveries/${ping.json.id}/redeliver/`, { token: admin });
    expect(r.json).toEqual(
      errorBody(
        409,
        "conflict",
        expect.stringMatching(
          /^The delivery is still pending; it is retried on its own schedule \(next attempt at \d{4}-.+\)\.$/,
        ),
      ),
    );
    release();
    const missing = await call(s, "POST", `${path}deliveries/msg_nope/redeliver/`, { token: admin });
    expect(missing.json).toEqual(errorBody(404, "not_found", "Delivery not found."));
    expect(hook.id).toBeGreaterThan(0);
  });
  test("a receiver's Retry-After puts the next attempt no sooner, a longer one than a day at a day", async () => {
    const { rx, path } = await setup("re-after");
    const wait = async (status: number, retryAfter: string) => {
      rx.respond(() => new Response("later", { status, headers: { "retry-after": retryAfter } }));
      const ping = await call(s, "POST", `${path}ping/`, { token: admin });
      const d = await eventually(async () => {
        const r = (await call(s, "GET", `${path}deliveries/${ping.json.id}/`, { token: admin })).json;
        return r.attempts.length ? r : undefined;
      });
      expect(d.status).toBe("pending");
      return Date.parse(d.next_attempt_at) - Date.parse(d.attempts[0].attempted_at);
    };
    const DAY = 86_400_000;
    // Each bound is an upper one a machine ten times slower meets: the attempt's own duration.
    const inTwoMinutes = await wait(503, "120");
    expect(inTwoMinutes).toBeGreaterThanOrEqual(120_000);
    expect(inTwoMinutes).toBeLessThan(180_000);
    // Eleven digits and more were not read at all: the retry came after the configured 100 ms.
    for (const far of ["99999999999", "9".repeat(400)]) {
      const capped = await wait(429, far);
      expect(capped).toBeGreaterThanOrEqual(DAY);
      expect(capped).toBeLessThan(DAY + 60_000);
    }
  });
});

describe("ping, rotation, transport rules", () => {
  test("202 ping queues a signed ping event", async () => {
    const { rx, hook, path, settled } = await setup("pi-ok");
    const r = await call(s, "POST", `${path}ping/`, { token: admin });
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({ event: "ping", status: "pending", run_id: null, attempts: [] });
    const [g] = await rx.waitFor((x) => x.length === 1);
    expect(g!.json).toEqual({
      type: "ping",
      timestamp: expect.any(String),
      data: { webhook: { id: hook.id, url: hook.url } },
    });
    expect(verifyStandardWebhook(hook.secret, g!.headers, g!.body)).toBe(true);
    expect((await settled(r.json.id)).status).toBe("succeeded");
  });
  test("after rotate-secret both the new and the old secret sign each message", async () => {
    const { rx, hook, path } = await setup("pi-rot");
    const rotated = (await call(s, "POST", `${path}rotate-secret/`, { token: admin })).json;
    await call(s, "POST", `${path}ping/`, { token: admin });
    const [g] = await rx.waitFor((x) => x.length === 1);
    const entries = g!.headers.get("webhook-signature")!.split(" ");
    expect(entries).toHaveLength(2);
    const only = (sig: string) =>
      new Headers({ ...Object.fromEntries(g!.headers), "webhook-signature": sig });
    expect(entries.map((e) => verifyStandardWebhook(rotated.secret, only(e), g!.body))).toEqual([
      true,
      false,
    ]);
    expect(entries.map((e) => verifyStandardWebhook(hook.secret, only(e), g!.body))).toEqual([false, true]);
  });
  test("redirects are not followed: a 3xx is a failed attempt", async () => {
    const { rx, path, settled } = await setup("pi-redir");
    rx.respond(() => new Response(null, { status: 307, headers: { location: "/elsewhere" } }));
    const ping = await call(s, "POST", `${path}ping/`, { token: admin });
    const d = await settled(ping.json.id);
    expect(d.status).toBe("failed");
    expect(d.attempts.map((a: { http_status: number }) => a.http_status)).toEqual([307, 307, 307]);
    expect(rx.received.map((g) => g.path)).toEqual(["/hook", "/hook", "/hook"]);
  });
  test("only a short excerpt of a large response is read and kept", async () => {
    const { rx, path, settled } = await setup("pi-big");
    rx.respond(() => new Response("x".repeat(5_000_000), { status: 500 }));
    const ping = await call(s, "POST", `${path}ping/`, { token: admin });
    const d = await settled(ping.json.id);
    expect(d.attempts[0].response_excerpt).toBe("x".repeat(1024));
  });
  test("a compressed reply is not inflated: the excerpt is its first bytes as sent", async () => {
    // Brotli inflates 211 bytes to 256 MiB: inflated, 8 such attempts at once (one org's bound)
    // took the server from 28 to 388–603 MB (2026-11-29), since fetch inflates far ahead of the
    // 1024 bytes the excerpt reads. A smaller one shows the same: the bytes are kept as sent.
    const { rx, path, settled } = await setup("pi-bomb");
    const bomb = brotliCompressSync(Buffer.alloc(1 << 20, 0x61));
    rx.respond(() => new Response(bomb, { status: 500, headers: { "content-encoding": "br" } }));
    const ping = await call(s, "POST", `${path}ping/`, { token: admin });
    const d = await settled(ping.json.id);
    const asSent = new TextDecoder().decode(bomb.subarray(0, 1024)).replaceAll("\u0000", "\uFFFD");
    expect([d.attempts[0].http_status, d.attempts[0].response_excerpt]).toEqual([500, asSent]);
    // Nothing compressed is asked for either.
    expect(rx.received[0]!.headers.get("accept-encoding")).toBe("identity");
  });
  test("a reply holding U+0000 is logged (PostgreSQL text cannot hold it) and ends the delivery", async () => {
    const { rx, path, settled } = await setup("pi-nul");
    rx.respond(() => new Response("bad\u0000thing", { status: 200 }));
    const ping = await call(s, "POST", `${path}ping/`, { token: admin });
    const d = await settled(ping.json.id);
    expect(d.status).toBe("succeeded");
    expect(
      d.attempts.map((a: { http_status: number; response_excerpt: string }) => [
        a.http_status,
        a.response_excerpt,
      ]),
    ).toEqual([[200, "bad\uFFFDthing"]]);
    expect(rx.received.length).toBe(1);
  });
  test("410 Gone: no retry, and the endpoint is deactivated with the reason", async () => {
    const { rx, path, settled } = await setup("pi-gone");
    rx.respond(() => new Response("gone", { status: 410 }));
    const ping = await call(s, "POST", `${path}ping/`, { token: admin });
    const d = await settled(ping.json.id);
    expect([d.status, d.attempts.map((a: { http_status: number }) => a.http_status)]).toEqual([
      "failed",
      [410],
    ]);
    const w = (await call(s, "GET", path, { token: admin })).json;
    expect(w).toMatchObject({ is_active: false, disabled_at: expect.any(String) });
    expect(w.disabled_reason).toMatch(/410 Gone/);
    const again = await call(s, "POST", `${path}ping/`, { token: admin });
    expect(again.status).toBe(409);
    // Re-enabled by PATCH, as for any deactivation: the reason is cleared.
    const back = await call(s, "PATCH", path, { token: admin, body: { is_active: true } });
    expect([back.status, back.json.is_active, back.json.disabled_reason]).toEqual([200, true, null]);
  });
  test("a run is answered at once while its receiver hangs", async () => {
    const { rx, deliveries } = await setup("pi-hang");
    const release = holdAnswers(rx);
    await run("pi-hang", "{}");
    await rx.waitFor((x) => x.length === 1); // the first delivery is now in flight, held
    const heldAt = performance.now();
    const second = await run("pi-hang", "{}");
    expect([second.status, second.json.status]).toEqual([201, "succeeded"]);
    const first = (await deliveries()).at(-1);
    // Still held: not waited for — unless this host took the whole webhook timeout (1 s) to get
    // here, and the held attempt has timed out meanwhile.
    if (performance.now() - heldAt < 1000) expect([first.status, first.attempts]).toEqual(["pending", []]);
    release();
  });
});
