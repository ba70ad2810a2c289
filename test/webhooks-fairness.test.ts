// Webhook delivery shared fairly between tenants (security audit M2): one org's endpoint that
// holds every attempt does not hold back another org's deliveries; attempts in flight are bounded
// per endpoint (4) and per org (8); pings and redeliveries have a budget per webhook (429).
// Receivers are real servers on 127.0.0.1, held by a promise the test resolves.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { testConfig } from "../src/config.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { seedAcme } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";
import { type Receiver, eventually, startReceiver } from "./helpers/webhook-receiver.ts";

const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.stop();
});

/** Org `org` (root is Admin) with one webhook per path on `rx`. */
async function hooks(s: RunningServer, token: string, org: string, rx: Receiver, paths: string[]) {
  const root = (await s.deps.users.getByUsername("root"))!.id;
  const orgId =
    (await s.deps.orgs.getBySlug(org))?.id ?? (await s.deps.orgs.create(org, org.toUpperCase(), SYSTEM)).id;
  await s.deps.orgs.addMember(orgId, root, "admin", SYSTEM);
  const out: string[] = [];
  for (const p of paths) {
    const r = await call(s, "POST", `/api/v1/orgs/${org}/webhooks/`, {
      token,
      body: { url: `${rx.url}${p}` },
    });
    expect(r.status).toBe(201);
    out.push(`/api/v1/orgs/${org}/webhooks/${r.json.id}/`);
  }
  return out;
}

describe("fair delivery", () => {
  let s: TestServer;
  beforeAll(async () => {
    // Attempts never time out while the test holds them: a slot is freed only when it says.
    s = await startTestServer({ webhook_allow_private: true, webhook_timeout_ms: 60_000 });
  });
  afterAll(() => s.close());

  test("another org's ping is delivered while one org's endpoints hold 40 attempts", async () => {
    const slow = startReceiver();
    const fast = startReceiver();
    receivers.push(slow, fast);
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const active = new Map<string, number>();
    let most = 0;
    const mostPerPath = new Map<string, number>();
    slow.respond(async (req) => {
      const path = new URL(req.url).pathname;
      active.set(path, (active.get(path) ?? 0) + 1);
      mostPerPath.set(path, Math.max(mostPerPath.get(path) ?? 0, active.get(path)!));
      most = Math.max(
        most,
        [...active.values()].reduce((a, b) => a + b, 0),
      );
      await held;
      active.set(path, active.get(path)! - 1);
      return new Response("ok");
    });
    const [a1, a2] = await hooks(s, s.rootToken, "fair-a", slow, ["/a1", "/a2"]);
    const [b] = await hooks(s, s.rootToken, "fair-b", fast, ["/b"]);
    for (let i = 0; i < 20; i++)
      for (const path of [a1!, a2!])
        expect((await call(s, "POST", `${path}ping/`, { token: s.rootToken })).status).toBe(202);
    // Org A is at its bound: 4 attempts per endpoint, 8 for the org, all held.
    await slow.waitFor((x) => x.length >= 8);

    const ping = await call(s, "POST", `${b}ping/`, { token: s.rootToken });
    expect(ping.status).toBe(202);
    // Before the fix: 16 of A's attempts filled every slot and B's ping waited for them to end.
    await fast.waitFor((x) => x.length === 1, 50_000);
    expect(fast.received[0]!.headers.get("webhook-id")).toBe(ping.json.id);
    // Every one of A's attempts is still held (none ended, none timed out), and no more were sent.
    const logA = async (path: string) =>
      (await call(s, "GET", `${path}deliveries/?page_size=50`, { token: s.rootToken })).json.results as {
        status: string;
        attempts: unknown[];
      }[];
    for (const path of [a1!, a2!]) {
      const log = await logA(path);
      expect(log).toHaveLength(20);
      expect(log.every((d) => d.status === "pending" && d.attempts.length === 0)).toBe(true);
    }
    expect(slow.received.length).toBe(8);
    expect([...mostPerPath.entries()].sort()).toEqual([
      ["/a1", 4],
      ["/a2", 4],
    ]);

    // Let A's receiver answer: its backlog drains, never more than the bounds in flight.
    release();
    await slow.waitFor((x) => x.length === 40);
    for (const path of [a1!, a2!])
      await eventually(async () =>
        (await logA(path)).every((d) => d.status === "succeeded") ? true : undefined,
      );
    expect(most).toBe(8);
    expect(Math.max(...mostPerPath.values())).toBe(4);
  });
});

describe("ping and redeliver budget", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      webhook_allow_private: true,
      rate_limit_disabled: false,
      rate_limit_webhook_sends_per_minute: 3,
    });
  });
  afterAll(() => s.close());

  test("429 rate_limited once a webhook's pings and redeliveries spend its budget", async () => {
    const rx = startReceiver();
    receivers.push(rx);
    const [one, other] = await hooks(s, s.rootToken, "budget", rx, ["/one", "/other"]);
    const first = await call(s, "POST", `${one}ping/`, { token: s.rootToken });
    expect(first.status).toBe(202);
    const settled = await eventually(async () => {
      const d = (await call(s, "GET", `${one}deliveries/${first.json.id}/`, { token: s.rootToken })).json;
      return d.status === "succeeded" ? d : undefined;
    });
    expect(settled.id).toBe(first.json.id);
    const again = await call(s, "POST", `${one}deliveries/${first.json.id}/redeliver/`, {
      token: s.rootToken,
    });
    expect(again.status).toBe(202);
    const third = await call(s, "POST", `${one}ping/`, { token: s.rootToken });
    expect(third.status).toBe(202);
    expect(third.headers.get("ratelimit-policy")).toBe(
      '"default";q=1200;w=60, "user";q=2400;w=60, "webhook-sends";q=3;w=60',
    );
    expect(third.headers.get("ratelimit")).toMatch(/, "webhook-sends";r=0;t=\d+$/);

    const refused = await call(s, "POST", `${one}ping/`, { token: s.rootToken });
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(20); // one ping's worth of a 3-a-minute budget
    expect(refused.json).toEqual(
      errorBody(429, "rate_limited", `Too many pings and redeliveries for this webhook; retry in ${wait} s.`),
    );
    expect(refused.headers.get("ratelimit")).toMatch(/, "webhook-sends";r=0;t=\d+$/);

    // Redelivery spends the same budget (the first delivery is finished again by now).
    await eventually(async () => {
      const d = (await call(s, "GET", `${one}deliveries/${first.json.id}/`, { token: s.rootToken })).json;
      return d.status === "succeeded" ? d : undefined;
    });
    const redeliver = await call(s, "POST", `${one}deliveries/${first.json.id}/redeliver/`, {
      token: s.rootToken,
    });
    const wait2 = Number(redeliver.headers.get("retry-after"));
    expect(redeliver.json).toEqual(
      errorBody(
        429,
        "rate_limited",
        `Too many pings and redeliveries for this webhook; retry in ${wait2} s.`,
      ),
    );
    // Nothing was queued by the refusals; another webhook has a budget of its own.
    const log = (await call(s, "GET", `${one}deliveries/`, { token: s.rootToken })).json;
    expect(log.count).toBe(2);
    expect((await call(s, "POST", `${other}ping/`, { token: s.rootToken })).status).toBe(202);
  });
});

describe.skipIf(!onPostgres)("two nodes on one outbox", () => {
  const nodes: RunningServer[] = [];
  const dirs: string[] = [];
  let drop: () => Promise<void> = async () => {};
  let token = "";
  beforeAll(async () => {
    const pg = await freshPgDatabase();
    drop = pg.drop;
    for (const id of ["w1", "w2"]) {
      const dir = testTempDir("assay-fair-");
      dirs.push(dir);
      const config = {
        port: 0,
        log_level: "silent",
        rate_limit_disabled: true,
        workers: 1,
        data_dir: dir,
        database_url: pg.url,
        node_id: id,
        webhook_allow_private: true,
        webhook_timeout_ms: 60_000,
      };
      nodes.push(await startServer(testConfig(config)));
    }
    token = (await seedAcme(nodes[0]!)).token;
  }, 60_000);
  afterAll(async () => {
    for (const n of nodes) await n.stop();
    await drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("an endpoint's bound holds over both nodes, and another org is served meanwhile", async () => {
    const [n1, n2] = nodes as [RunningServer, RunningServer];
    const slow = startReceiver();
    const fast = startReceiver();
    receivers.push(slow, fast);
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let active = 0;
    let most = 0;
    slow.respond(async () => {
      most = Math.max(most, ++active);
      await held;
      active--;
      return new Response("ok");
    });
    const [a] = await hooks(n1, token, "nodes-a", slow, ["/a"]);
    const [b] = await hooks(n1, token, "nodes-b", fast, ["/b"]);
    // Queued through both nodes: each wakes its own dispatcher, and both claim.
    for (let i = 0; i < 10; i++)
      for (const n of [n1, n2]) expect((await call(n, "POST", `${a}ping/`, { token })).status).toBe(202);
    await slow.waitFor((x) => x.length >= 4);
    const ping = await call(n2, "POST", `${b}ping/`, { token });
    expect(ping.status).toBe(202);
    await fast.waitFor((x) => x.length === 1, 50_000);
    // Four in flight for the endpoint in all, not four per node.
    expect([slow.received.length, active]).toEqual([4, 4]);
    release();
    await slow.waitFor((x) => x.length === 20);
    expect(most).toBe(4);
  });
});
