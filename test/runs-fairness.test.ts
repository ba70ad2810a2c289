// Workers are shared fairly across orgs (docs/execution.md, "Fairness across organizations"): a
// run of an org with nothing running starts before another org's 2nd, 3rd… run, even when those
// were submitted first and one of them is already handed to the busy worker (pipelined).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { type Gate, HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let beta: string;
const runs = (org: string) => `/api/v1/orgs/${org}/workflows/hold/runs/`;
const JSON_CT = { "content-type": "application/json" };

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  beta = (await s.user("beta-admin", "beta", "admin")).token;
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
  await createWorkflow(s, beta, HOLD_WORKFLOW, "beta");
});
afterAll(() => s.close());

/** Org acme's runs, each held by its own gate, submitted async; the first is running. */
async function acmeBacklog(n: number): Promise<{ gates: Gate[]; urls: string[] }> {
  const gates: Gate[] = [];
  const urls: string[] = [];
  for (let i = 0; i < n; i++) {
    const gate = s.gates.gate(`acme${i}`);
    const r = await call(s, "POST", runs("acme"), {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    gates.push(gate);
    urls.push(r.json.url);
  }
  await gates[0].held();
  // The worker's next job is acme's 2nd run (pipelined), the rest wait in the queue.
  await until(
    () => s.deps.executor.stats().inFlight === s.deps.pool!.capacity,
    "acme's runs to fill the pool",
  );
  await until(() => s.deps.executor.queueDepth() === n - s.deps.pool!.capacity, "the rest to queue");
  return { gates, urls };
}

describe("with one worker held by org acme's backlog", () => {
  test("an async run of org beta starts before acme's 2nd run", async () => {
    const acme = await acmeBacklog(4);
    const gate = s.gates.gate("beta");
    const r = await call(s, "POST", runs("beta"), {
      token: beta,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    // Handed to this node's pool (beyond its capacity: beta has nothing in flight).
    await until(() => s.deps.executor.stats().inFlight === s.deps.pool!.capacity + 1, "beta's run taken");
    acme.gates[0].open();
    await gate.held();
    expect(acme.gates.slice(1).map((g) => g.entered())).toEqual([0, 0, 0]);
    gate.open();
    for (const g of acme.gates) g.open();
    expect((await waitForRun(s, beta, r.json.url)).status).toBe("succeeded");
    for (const url of acme.urls) expect((await waitForRun(s, s.rootToken, url)).status).toBe("succeeded");
  });

  test("a run of org beta whose client waits starts before acme's 2nd run", async () => {
    const acme = await acmeBacklog(3);
    const gate = s.gates.gate("beta-sync");
    const pending = call(s, "POST", runs("beta"), {
      token: beta,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "wait=60" },
    });
    await until(() => s.deps.executor.stats().inFlight === s.deps.pool!.capacity + 1, "beta's run taken");
    acme.gates[0].open();
    await gate.held();
    expect(acme.gates.slice(1).map((g) => g.entered())).toEqual([0, 0]);
    gate.open();
    const r = await pending;
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
    for (const g of acme.gates) g.open();
    for (const url of acme.urls) expect((await waitForRun(s, s.rootToken, url)).status).toBe("succeeded");
  });
});

describe("a claim with nothing queued", () => {
  test("returns no run and no error (PostgreSQL's queue count is an estimate: a claim may find none)", async () => {
    const other = await startTestServer({ workers: 1 });
    try {
      const lease = { node: "test", leaseMs: 60_000 };
      expect(await other.deps.runs.claim(4, lease)).toEqual([]);
      expect(await other.deps.runs.claim(1, lease, new Map(), true)).toEqual([]);
      // The executor's own dispatch still serves runs afterwards.
      await createWorkflow(other, other.rootToken, {
        slug: "after",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "syntax", config: {} }],
      });
      const r = await call(other, "POST", "/api/v1/orgs/acme/workflows/after/runs/", {
        token: other.rootToken,
        raw: "{}",
        headers: { "content-type": "application/json", prefer: "respond-async" },
      });
      expect((await waitForRun(other, other.rootToken, r.json.url)).status).toBe("succeeded");
    } finally {
      await other.close();
    }
  });
});
