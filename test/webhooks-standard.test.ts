// Assay's deliveries against the Standard Webhooks specification itself (spec/standard-webhooks.md
// of github.com/standard-webhooks/standard-webhooks, v1.0.0), checked by a receiver and a verifier
// written here from the specification's text alone — neither src/webhooks nor the shared test
// helper — over the raw bytes each real delivery carried: the ping, run events, retries across
// two secret rotations, a redelivery, and the receiver's Retry-After. docs/webhooks.md, "Standard
// Webhooks, point by point", lists what this covers and where Assay differs on purpose.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac, timingSafeEqual } from "node:crypto";
import { SYSTEM } from "../src/audit/actor.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { eventually } from "./helpers/webhook-receiver.ts";

/**
 * The specification's verification, step by step: the three `webhook-` headers; the timestamp an
 * integer of Unix seconds within the tolerance of our clock (5 minutes, as the reference
 * libraries use); the key the base64 decoding of the secret after `whsec_`; the signed content
 * `msg_id.timestamp.payload` over the payload's bytes as received; the header a space-delimited
 * list of `version,signature` entries, `v1` being HMAC-SHA256, compared in constant time.
 * Returns the index of the entry that matched, or -1.
 */
function verifySpec(secret: string, h: Headers, payload: Uint8Array, nowS = Date.now() / 1000): number {
  const id = h.get("webhook-id");
  const ts = h.get("webhook-timestamp");
  const sigs = h.get("webhook-signature");
  if (!id || !ts || !sigs || !/^[0-9]+$/.test(ts)) return -1;
  if (Math.abs(nowS - Number(ts)) > 300) return -1;
  if (!secret.startsWith("whsec_")) return -1;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${ts}.`).update(payload).digest();
  return sigs.split(" ").findIndex((entry) => {
    const comma = entry.indexOf(",");
    if (entry.slice(0, comma) !== "v1") return false;
    const given = Buffer.from(entry.slice(comma + 1), "base64");
    return given.length === mac.length && timingSafeEqual(given, mac);
  });
}

interface Got {
  headers: Headers;
  bytes: Uint8Array;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

let s: TestServer;
let admin: string;
let rootId: number;
const servers: { stop(force: boolean): unknown }[] = [];

beforeAll(async () => {
  s = await startTestServer({
    webhook_allow_private: true,
    webhook_retry_delays_ms: "100,100,100",
    // The most an attempt may last: the rotation test's receiver calls this server (a rotation)
    // before it answers the first attempt, and on a busy machine that call is no bound to race.
    webhook_timeout_ms: 60_000,
  });
  admin = s.rootToken;
  rootId = (await s.deps.users.getByUsername("root"))!.id;
});
afterAll(async () => {
  for (const x of servers) await x.stop(true);
  await s.close();
});

/** An org with a workflow, a receiver keeping every request's raw bytes, and a webhook to it. */
async function setup(org: string, events = ["run.completed"]) {
  await s.deps.orgs.addMember(await s.org(org), rootId, "admin", SYSTEM);
  await createWorkflow(
    s,
    admin,
    {
      slug: "orders",
      name: "Bestellungen – Prüfung ✓ 𝄞",
      allowed_file_types: ["JSON"],
      steps: [{ name: "prüfung ✓ 𝄞", validator: "syntax", config: {} }],
    },
    org,
  );
  const got: Got[] = [];
  let answer: (g: Got, n: number) => Response | Promise<Response> = () => new Response(null, { status: 204 });
  const rx = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const bytes = new Uint8Array(await req.arrayBuffer());
      const g: Got = {
        headers: req.headers,
        bytes,
        json: JSON.parse(new TextDecoder().decode(bytes)),
        at: Date.now(),
      };
      got.push(g);
      return answer(g, got.length);
    },
  });
  servers.push(rx);
  const r = await call(s, "POST", `/api/v1/orgs/${org}/webhooks/`, {
    token: admin,
    body: { url: `http://127.0.0.1:${rx.port}/hook`, events },
  });
  expect(r.status).toBe(201);
  const path = `/api/v1/orgs/${org}/webhooks/${r.json.id}/`;
  const delivery = (id: string) => call(s, "GET", `${path}deliveries/${id}/`, { token: admin });
  const settled = (id: string) =>
    eventually(async () => {
      const d = (await delivery(id)).json;
      return d.status === "pending" ? undefined : d;
    });
  return {
    got,
    hook: r.json,
    path,
    settled,
    delivery,
    answer: (fn: typeof answer) => {
      answer = fn;
    },
    waitFor: (n: number) => eventually(async () => (got.length >= n ? got : undefined)),
  };
}

const envelope = {
  content: "{}",
  content_type: "application/json",
  filename: "bestellung-ü✓𝄞.json",
  metadata: { note: "Prüfung – ✓ 𝄞", quote: '"\\' },
};

describe("the verifier itself", () => {
  // The test vector of the specification's reference libraries (their tests of sign and verify).
  const VECTOR = {
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
    timestamp: 1614265330,
    body: '{"test": 2432232314}',
    signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  };
  const headers = (signature: string, ts = VECTOR.timestamp) =>
    new Headers({ "webhook-id": VECTOR.id, "webhook-timestamp": String(ts), "webhook-signature": signature });
  const bytes = (t: string) => new TextEncoder().encode(t);
  test("accepts the published vector, in any position of the list, and nothing altered", () => {
    expect(verifySpec(VECTOR.secret, headers(VECTOR.signature), bytes(VECTOR.body), VECTOR.timestamp)).toBe(
      0,
    );
    const list = `v1a,${"A".repeat(86)}== v1,${"B".repeat(43)}= ${VECTOR.signature}`;
    expect(verifySpec(VECTOR.secret, headers(list), bytes(VECTOR.body), VECTOR.timestamp)).toBe(2);
    expect(
      verifySpec(VECTOR.secret, headers(VECTOR.signature), bytes('{"test": 2432232315}'), VECTOR.timestamp),
    ).toBe(-1);
    expect(
      verifySpec(
        VECTOR.secret,
        headers(VECTOR.signature, VECTOR.timestamp + 1),
        bytes(VECTOR.body),
        VECTOR.timestamp,
      ),
    ).toBe(-1);
    expect(
      verifySpec(VECTOR.secret, headers(VECTOR.signature), bytes(VECTOR.body), VECTOR.timestamp + 301),
    ).toBe(-1);
    expect(
      verifySpec(
        VECTOR.secret,
        headers(VECTOR.signature.replace("v1,", "v2,")),
        bytes(VECTOR.body),
        VECTOR.timestamp,
      ),
    ).toBe(-1);
  });
});

describe("deliveries of a real server", () => {
  test("run events: headers, secret format, signed content over the exact bytes, payload shape, one id per event", async () => {
    const x = await setup("std-events", ["run.completed", "run.succeeded"]);
    const secret: string = x.hook.secret;
    // Symmetric secrets: whsec_ + base64 of 24 to 64 random bytes.
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const keyBytes = Buffer.from(secret.slice(6), "base64").length;
    expect(keyBytes >= 24 && keyBytes <= 64).toBe(true);

    const r = await call(s, "POST", "/api/v1/orgs/std-events/workflows/orders/runs/", {
      token: admin,
      body: envelope,
    });
    expect(r.status).toBe(201);
    const got = await x.waitFor(2);
    expect(got.map((g) => g.json.type).sort()).toEqual(["run.completed", "run.succeeded"]);
    for (const g of got) {
      expect(verifySpec(secret, g.headers, g.bytes)).toBe(0);
      const id = g.headers.get("webhook-id")!;
      const ts = g.headers.get("webhook-timestamp")!;
      // An id the receiver can key on, with no "." (it would make the signed content ambiguous).
      expect(id).toMatch(/^msg_[0-9a-f]{32}$/);
      // Integer Unix seconds, taken when the attempt was made.
      expect(ts).toMatch(/^[0-9]{10}$/);
      expect(Math.abs(Number(ts) - g.at / 1000)).toBeLessThan(60);
      // A single signature, versioned v1.
      expect(g.headers.get("webhook-signature")).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      // Exactly these webhook- headers; a JSON body, sent as its bytes say.
      expect([...g.headers.keys()].filter((k) => k.startsWith("webhook-")).sort()).toEqual([
        "webhook-id",
        "webhook-signature",
        "webhook-timestamp",
      ]);
      expect(g.headers.get("content-type")).toBe("application/json");
      expect(Number(g.headers.get("content-length"))).toBe(g.bytes.length);
      // The payload: type, an ISO 8601 timestamp of the event (the run's end), data.
      expect(Object.keys(g.json)).toEqual(["type", "timestamp", "data"]);
      expect(g.json.type).toMatch(/^[a-zA-Z0-9_]+(\.[a-zA-Z0-9_]+)*$/);
      expect(g.json.timestamp).toBe(r.json.finished_at);
      expect(g.json.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(
        (g.json.data.run as { metadata?: unknown; submission: { metadata: unknown } }).submission.metadata,
      ).toEqual(envelope.metadata);
      // Well under the 20 kB the specification suggests (docs/webhooks.md: the bound).
      expect(g.bytes.length).toBeLessThan(20_000);
    }
    // One id per event, none shared.
    expect(new Set(got.map((g) => g.headers.get("webhook-id"))).size).toBe(2);
  });

  test("ping: signed like any event, its own id", async () => {
    const x = await setup("std-ping");
    const p = await call(s, "POST", `${x.path}ping/`, { token: admin });
    expect(p.status).toBe(202);
    const [g] = await x.waitFor(1);
    expect(verifySpec(x.hook.secret, g!.headers, g!.bytes)).toBe(0);
    expect(g!.headers.get("webhook-id")).toBe(p.json.id);
    expect(g!.json).toEqual({
      type: "ping",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { webhook: { id: x.hook.id, url: x.hook.url } },
    });
    expect((await x.settled(p.json.id)).status).toBe("succeeded");
  });

  test("retries across a rotation and a redelivery after a second: same id and bytes, fresh timestamps, new secret first, oldest dropped", async () => {
    const x = await setup("std-rotate");
    const secrets: string[] = [x.hook.secret];
    const rotate = async () => {
      const r = await call(s, "POST", `${x.path}rotate-secret/`, { token: admin });
      expect(r.status).toBe(200);
      secrets.push(r.json.secret);
    };
    // The first attempt: the receiver rotates the secret before it answers 500, so the retry is
    // signed after the rotation; the retry gets 204.
    x.answer(async (_, n) => {
      if (n === 1) {
        await rotate();
        return new Response("later", { status: 500 });
      }
      return new Response(null, { status: 204 });
    });
    const r = await call(s, "POST", "/api/v1/orgs/std-rotate/workflows/orders/runs/", {
      token: admin,
      body: envelope,
    });
    expect(r.status).toBe(201);
    const [first, retry] = await x.waitFor(2);
    const id = first!.headers.get("webhook-id")!;
    const d = await x.settled(id);
    expect([d.status, d.attempts.map((a: { http_status: number }) => a.http_status)]).toEqual([
      "succeeded",
      [500, 204],
    ]);

    // A second rotation within 24 h drops the oldest secret; the redelivery keeps the id and bytes.
    await rotate();
    const again = await call(s, "POST", `${x.path}deliveries/${id}/redeliver/`, { token: admin });
    expect([again.status, again.json.id]).toEqual([202, id]);
    const [, , redelivered] = await x.waitFor(3);

    const seen = [first!, retry!, redelivered!];
    expect(seen.map((g) => g.headers.get("webhook-id"))).toEqual([id, id, id]);
    for (const g of seen) expect(Buffer.from(g.bytes).equals(Buffer.from(first!.bytes))).toBe(true);
    const stamps = seen.map((g) => Number(g.headers.get("webhook-timestamp")));
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
    // Which entry of each header each secret verifies (-1: none).
    expect(seen.map((g) => secrets.map((k) => verifySpec(k, g.headers, g.bytes)))).toEqual([
      [0, -1, -1],
      [1, 0, -1],
      [-1, 1, 0],
    ]);
    expect(seen.map((g) => g.headers.get("webhook-signature")!.split(" ").length)).toEqual([1, 2, 2]);
  });

  test("a Retry-After on any failed answer, a 502 included, puts the next attempt no sooner", async () => {
    const x = await setup("std-after");
    const wait = async (status: number) => {
      x.answer(() => new Response("busy", { status, headers: { "retry-after": "120" } }));
      const p = await call(s, "POST", `${x.path}ping/`, { token: admin });
      const d = await eventually(async () => {
        const r = (await x.delivery(p.json.id)).json;
        return r.attempts.length ? r : undefined;
      });
      expect([d.status, d.attempts[0].http_status]).toEqual(["pending", status]);
      return Date.parse(d.next_attempt_at) - Date.parse(d.attempts[0].attempted_at);
    };
    // The specification's example is a 503; a 502 or 504 asks for throttling too. Upper bounds
    // are the attempt's own duration, which a slow machine also meets.
    for (const status of [502, 504, 500]) {
      const ms = await wait(status);
      expect(ms).toBeGreaterThanOrEqual(120_000);
      expect(ms).toBeLessThan(180_000);
    }
  });
});
