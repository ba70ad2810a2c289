// Several nodes on one PostgreSQL database (PostgreSQL only), three servers in this process: a
// token revoked through one is refused by the others on their next request; a web session
// started on one works on the others (no sticky sessions); a run queued on one is executed by
// another when the first stops without finishing it; each node's metrics say which node it is.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, testConfig } from "../src/config.ts";
import { get as getSql, run as runSql } from "../src/db/program.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { createWorkflow, seedAcme, until, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, createGates } from "./helpers/gates.ts";
import { call, errorBody } from "./helpers/server.ts";

const nodes: RunningServer[] = [];
const dirs: string[] = [];
let url = "";
let drop: () => Promise<void> = async () => {};
let token = "";
const PASSWORD = "correct horse battery";

async function node(id: string, overrides: Partial<Record<keyof Config, unknown>> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "assay-nodes-"));
  dirs.push(dir);
  const s = await startServer(
    testConfig({
      port: 0,
      log_level: "silent",
      rate_limit_disabled: true,
      workers: 1,
      data_dir: dir,
      database_url: url,
      node_id: id,
      ...overrides,
    }),
  );
  nodes.push(s);
  return s;
}

describe.skipIf(!onPostgres)("several nodes on one database", () => {
  beforeAll(async () => {
    const pg = await freshPgDatabase();
    url = pg.url;
    drop = pg.drop;
    for (const id of ["n1", "n2", "n3"]) await node(id);
    token = (await seedAcme(nodes[0]!, PASSWORD)).token;
  }, 60_000);

  afterAll(async () => {
    for (const n of nodes) await n.stop();
    await drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("401 on every other node's next request once a token is revoked through one", async () => {
    const d = nodes[0]!.deps;
    const u = await d.users.create({ username: "revokee" }, SYSTEM);
    await d.orgs.addMember((await d.orgs.getBySlug("acme"))!.id, u.id, "viewer", SYSTEM);
    const t = await d.tokens.create(u.id, "x", null, SYSTEM);
    // Every node has the token in its cache (two requests each: the second is a cache hit).
    for (const n of nodes)
      for (let i = 0; i < 2; i++)
        expect((await call(n, "GET", "/api/v1/users/me/", { token: t.token })).status).toBe(200);
    const r = await call(nodes[0]!, "DELETE", `/api/v1/users/me/tokens/${t.record.id}/`, { token: t.token });
    expect(r.status).toBe(204);
    for (const n of nodes.slice(1))
      expect((await call(n, "GET", "/api/v1/users/me/", { token: t.token })).json).toEqual(
        errorBody(401, "authentication_required", "The token has been revoked."),
      );
  });

  test("a session started on one node works on the others, and ends on all at logout", async () => {
    const login = await call(nodes[0]!, "POST", "/api/v1/auth/login/", {
      body: { username: "root", password: PASSWORD },
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    for (const n of nodes)
      expect((await call(n, "GET", "/api/v1/users/me/", { headers: { cookie } })).status).toBe(200);
    const csrf = (await call(nodes[1]!, "GET", "/api/v1/auth/session/", { headers: { cookie } })).json
      .csrf_token;
    expect(typeof csrf).toBe("string");
    const out = await call(nodes[2]!, "POST", "/api/v1/auth/logout/", {
      headers: { cookie, "x-csrf-token": csrf },
    });
    expect(out.status).toBe(204);
    for (const n of nodes)
      expect((await call(n, "GET", "/api/v1/users/me/", { headers: { cookie } })).status).toBe(401);
  });

  test("a run submitted to one node is final, and the same, on every node", async () => {
    const r = await call(nodes[0]!, "POST", "/api/v1/orgs/acme/workflows/q/runs/", {
      token,
      raw: '{"hello": 1}',
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    const done = await waitForRun(nodes[1]!, token, r.json.url);
    expect(done.status).toBe("succeeded");
    // The same run everywhere (its URL names the node asked, without ASSAY_BASE_URL).
    for (const n of nodes)
      expect((await call(n, "GET", new URL(r.json.url).pathname, { token })).json).toEqual({
        ...done,
        url: `${n.url}${new URL(r.json.url).pathname}`,
        workflow: { ...done.workflow, version_url: `${n.url}${new URL(done.workflow.version_url).pathname}` },
      });
  });

  test("each node's metrics carry its name", async () => {
    for (const [i, n] of nodes.entries()) {
      const m = await call(n, "GET", "/metrics", { token });
      expect(m.text).toMatch(new RegExp(`^assay_workers\\{node="n${i + 1}",state="idle"\\} \\d+$`, "m"));
    }
  });

  test("a node that stops renewing its claims loses its runs to the others when the lease runs out", async () => {
    const short = await node("n4", { run_lease_ms: 1000 });
    const s = short.deps;
    // What a node that died mid-run leaves behind: the run claimed by it, its lease running out.
    const r = await call(short, "POST", "/api/v1/orgs/acme/workflows/q/runs/", {
      token,
      raw: '{"orphan": true}',
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    await waitForRun(short, token, r.json.url);
    await s.db.exec(
      runSql(
        "UPDATE runs SET status = 'running', node_id = 'dead-node', lease_until = ?, finished_at = NULL, attempts = 1 WHERE id = ?",
        new Date(Date.now() - 1).toISOString(),
        r.json.id,
      ),
    );
    // Any node's recovery pass takes it over: requeued (its attempt counted), run again.
    const done = await waitForRun(nodes[1]!, token, r.json.url, 60_000);
    expect(done.status).toBe("succeeded");
    const row = await s.db.exec(
      getSql<{ attempts: number; node_id: string }>(
        "SELECT attempts, node_id FROM runs WHERE id = ?",
        r.json.id,
      ),
    );
    expect(row!.attempts).toBe(2);
    expect(row!.node_id).not.toBe("dead-node");
  });

  describe("rate limits are one budget across nodes", () => {
    const limited = { rate_limit_disabled: false, rate_limit_per_minute: 6, rate_limit_ip_per_minute: 3 };
    const pair: RunningServer[] = [];
    beforeAll(async () => {
      pair.push(await node("l1", limited), await node("l2", limited));
    });

    test("a token's 6 requests a minute, spread over two nodes: 6 pass in all, then 429", async () => {
      const d = nodes[0]!.deps;
      const u = await d.users.create({ username: "spreader" }, SYSTEM);
      const t = (await d.tokens.create(u.id, "x", null, SYSTEM)).token;
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++)
        statuses.push((await call(pair[i % 2]!, "GET", "/api/v1/users/me/", { token: t })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
      const r = await call(pair[0]!, "GET", "/api/v1/users/me/", { token: t });
      const wait = Number(r.headers.get("retry-after"));
      expect(r.json).toEqual(
        errorBody(429, "rate_limited", `Too many requests with this token; retry in ${wait} s.`),
      );
    });

    test("sign-in attempts for one username: 10 in all over two nodes, then 429", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++)
        statuses.push(
          (
            await call(pair[i % 2]!, "POST", "/api/v1/auth/login/", {
              body: { username: "root", password: `wrong ${i}` },
            })
          ).status,
        );
      expect(statuses.filter((x) => x === 401)).toHaveLength(10);
      expect(statuses.slice(10)).toEqual([429, 429]);
    });
    // Last: it leaves this address refused on both nodes.
    test("failed authentication from one address: 3 in all over two nodes, then 429 on both", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++)
        statuses.push(
          (await call(pair[i % 2]!, "GET", "/api/v1/users/me/", { token: `assay_wrong${i}` })).status,
        );
      expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    });
  });
});

describe.skipIf(!onPostgres)("a sync wait for a run another node executes", () => {
  const pair: RunningServer[] = [];
  const gates = createGates();
  let dropPair: () => Promise<void> = async () => {};
  afterAll(async () => {
    gates.openAll();
    for (const n of pair) await n.stop();
    await dropPair();
    gates.remove();
    // This block's data dirs: the first block's afterAll ran before they were made.
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("ends when that node finishes it, not when the wait runs out", async () => {
    const pg = await freshPgDatabase();
    dropPair = pg.drop;
    for (const id of ["wa", "wb"]) {
      const dir = mkdtempSync(join(tmpdir(), "assay-nodes-"));
      dirs.push(dir);
      const cfg = {
        port: 0,
        log_level: "silent",
        rate_limit_disabled: true,
        workers: 1,
        data_dir: dir,
        // Claims renewed every second: a node finds a run canceled elsewhere within a second.
        run_lease_ms: 3000,
      };
      pair.push(
        await startServer(
          testConfig({ ...cfg, database_url: pg.url, node_id: id, test_gates_dir: gates.dir }),
        ),
      );
    }
    const [a, b] = pair as [RunningServer, RunningServer];
    const t = (await seedAcme(a, PASSWORD)).token;
    await createWorkflow(a, t, HOLD_WORKFLOW);
    await createWorkflow(a, t, {
      slug: "big",
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "syntax", config: {} }],
    });
    const sync = { "content-type": "application/json", prefer: "wait=60" };
    // Node a's pool is taken by two sync runs held in its memory (no other node can take those).
    const held = [gates.gate(), gates.gate()];
    const holding = held.map((g) =>
      call(a, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", { token: t, raw: g.doc(), headers: sync }),
    );
    // One runs on its worker, the other is handed to that worker ahead: the pool is full.
    await until(() => held.some((g) => g.entered() > 0), "one held run on node a's worker");
    await until(() => a.deps.executor.stats().inFlight === 2, "node a's pool full");
    // Over 1 MiB: written queued before it runs, so node b (idle) claims and finishes it.
    const big = JSON.stringify({ pad: "x".repeat(1_100_000) });
    const r = await call(a, "POST", "/api/v1/orgs/acme/workflows/big/runs/", {
      token: t,
      raw: big,
      headers: sync,
    });
    // Within the test's time limit, far below the 60 s wait: a's wait ended with b's write.
    expect([r.status, r.json.status]).toEqual([201, "succeeded"]);
    const row = await b.deps.db.exec(
      getSql<{ node_id: string }>("SELECT node_id FROM runs WHERE id = ?", r.json.id),
    );
    expect(row!.node_id).toBe("wb");
    for (const g of held) g.open();
    for (const h of await Promise.all(holding)) expect(h.status).toBe(201);
  }, 30_000);

  /**
   * A run of `checked-hold` (a syntax step, then a held one) started through node a with a wait
   * that runs out, so it is written running and claimed by node a; then canceled through node b.
   */
  async function cancelThroughB(tokenName: string, before?: () => void) {
    const [a, b] = pair as [RunningServer, RunningServer];
    const root = (await b.deps.users.getByUsername("root"))!;
    const t = (await b.deps.tokens.create(root.id, tokenName, null, SYSTEM)).token;
    if (!(await call(a, "GET", "/api/v1/orgs/acme/workflows/checked-hold/", { token: t })).json.slug)
      await createWorkflow(a, t, {
        slug: "checked-hold",
        allowed_file_types: ["JSON"],
        steps: [
          { name: "syntax", validator: "syntax", config: {} },
          { name: "hold", validator: "test_hold", config: {} },
        ],
      });
    before?.();
    const g = gates.gate();
    const started = await call(a, "POST", "/api/v1/orgs/acme/workflows/checked-hold/runs/", {
      token: t,
      raw: g.doc(),
      headers: { "content-type": "application/json", prefer: "wait=1" },
    });
    await g.held();
    expect([started.status, started.json.status]).toEqual([202, "running"]);
    const r = await call(b, "POST", `/api/v1/orgs/acme/runs/${started.json.id}/cancel/`, { token: t });
    expect([r.status, r.json.status, r.json.error]).toEqual([200, "canceled", "Canceled by root."]);
    // Node a's job ends (canceled there, or stopped at its next renewal); nothing overwrites the run.
    await until(() => a.deps.executor.stats().inFlight === 0, "node a's job to end", 15_000);
    const after = await call(a, "GET", `/api/v1/orgs/acme/runs/${started.json.id}/`, { token: t });
    expect(after.json.status).toBe("canceled");
    return { b, t, id: started.json.id as string, run: r.json };
  }

  test("a cancel through another node is handed to the executing node: the steps as a cancel there leaves them", async () => {
    const { b, t, id, run } = await cancelThroughB("c");
    // Written by node a, which had the results: the syntax step passed, the held one ended in error
    // (every step read `skipped` when node b wrote the state it could not know).
    expect(run.steps.map((x: { status: string }) => x.status)).toEqual(["passed", "error"]);
    expect(run.summary).toMatchObject({ steps_passed: 1, steps_failed: 1, steps_skipped: 0 });
    const audit = await call(b, "GET", "/api/v1/orgs/acme/audit/?action=run.cancel", { token: t });
    const entries = audit.json.results.filter((e: { target: { id: string } }) => e.target.id === id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actor: { type: "user", username: "root" },
      target: { id },
      changes: { before: { status: "running" }, after: { status: "canceled" } },
    });
  }, 30_000);

  test("a cancel the executing node never receives is written by the node that took it", async () => {
    // Node b's cancel channel is down (a notification that cannot be sent): it writes the state.
    const [, b] = pair as [RunningServer, RunningServer];
    const { run } = await cancelThroughB("d", () => b.deps.executor.useCancelChannel(async () => false));
    // The results were in node a's memory: node b can only say that no step is known to have run.
    expect(run.steps.map((x: { status: string }) => x.status)).toEqual(["skipped", "skipped"]);
  }, 30_000);
});
