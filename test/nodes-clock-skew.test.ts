// Two `assay serve` processes on one PostgreSQL database, one of them with its clock 25 s ahead
// (ASSAY_TEST_CLOCK_OFFSET_MS, src/lib/test-clock.ts). Run claims are set, renewed and judged
// expired on the database's clock (src/db/clock.ts), so:
// - the node ahead never takes a run the other node is executing and renewing: before
//   (2026-11-29) every claim of the other node looked expired to it, it put the run back in the
//   queue and executed it a second time beside the first;
// - the claim of the node ahead runs out one lease after its last renewal, not one lease plus its
//   25 s, and when it is killed the other node takes its run over.
// The same for a webhook delivery: due when it is enqueued, leased for timeout + 30 s, on the
// database's clock; before, the node ahead dated both 25 s into the future (another node would
// not have sent its delivery for 25 s, nor taken over a dead node's attempt for 25 s more).
// PostgreSQL only: on SQLite one process owns the database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type OtherConnection, freshPgDatabase, onPostgres, otherConnection } from "./helpers/backend.ts";
import { MAIN, runAssay } from "./helpers/cli.ts";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { type Gate, type Gates, HOLD_WORKFLOW, WORKER_WORKFLOW, createGates } from "./helpers/gates.ts";
import { call } from "./helpers/server.ts";
import { holdAnswers, startReceiver } from "./helpers/webhook-receiver.ts";

const JSON_CT = { "content-type": "application/json" };
const ASYNC = { ...JSON_CT, prefer: "respond-async" };
const SKEW_MS = 25_000;

interface Node {
  id: string;
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  /** The node's log lines (JSON, stderr) so far. */
  log: { msg: string; [k: string]: unknown }[];
}

/** `assay serve` from source in a process of its own (the clock offset is process-wide). */
async function serve(id: string, env: Record<string, string>): Promise<Node> {
  const proc = Bun.spawn([process.execPath, MAIN, "serve", "--port", "0", "--log-level", "info"], {
    env: { ...process.env, ASSAY_NODE_ID: id, ASSAY_RATE_LIMIT_DISABLED: "true", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const node: Node = { id, url: "", proc, log: [] };
  void (async () => {
    const err = (proc.stderr as ReadableStream<Uint8Array>).getReader();
    let rest = "";
    for (;;) {
      const { value, done } = await err.read();
      if (done) return;
      rest += new TextDecoder().decode(value);
      const lines = rest.split("\n");
      rest = lines.pop()!;
      for (const l of lines) if (l.startsWith("{")) node.log.push(JSON.parse(l));
    }
  })();
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`node ${id} exited: ${out} ${JSON.stringify(node.log)}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  node.url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  return node;
}

describe.skipIf(!onPostgres)("a node whose clock is 25 s ahead", () => {
  const nodes: Node[] = [];
  let gates: Gates;
  let pg: { url: string; drop(): Promise<void> };
  let db: OtherConnection;
  let token = "";
  const common = () => ({
    ASSAY_DATABASE_URL: pg.url,
    ASSAY_TEST_GATES_DIR: gates.dir,
    // A held step waits for the test, however slow the machine.
    ASSAY_STEP_TIMEOUT_MS: "600000",
    ASSAY_STEP_TIMEOUT_MAX_MS: "600000",
  });

  beforeAll(async () => {
    pg = await freshPgDatabase();
    gates = createGates();
    db = await otherConnection({ dataDir: "", databaseUrl: pg.url });
    const init = await runAssay(["init", "--org", "acme", "--admin", "root", "--database-url", pg.url]);
    expect(init.code).toBe(0);
    token = /^(assay_\S+)$/m.exec(init.out)![1]!;
  }, 60_000);

  afterAll(async () => {
    gates?.openAll();
    for (const n of nodes) {
      n.proc.kill();
      await n.proc.exited;
    }
    await db?.close();
    await pg?.drop();
    gates?.remove();
  });

  /** Every execution of a held run: [pid, start, end | null]. */
  function executions(gate: Gate): [number, number, number | null][] {
    const lines = (f: string) =>
      existsSync(join(gates.dir, f)) ? readFileSync(join(gates.dir, f), "utf8").trim().split("\n") : [];
    const starts = lines(`${gate.name}.held`).map(
      (l) => l.split(" ").slice(1).map(Number) as [number, number],
    );
    const ends = lines(`${gate.name}.done`).map((l) => l.split(" ").map(Number) as [number, number]);
    return starts.map(([pid, at]) => [pid, at, ends.find(([p, t]) => p === pid && t >= at)?.[1] ?? null]);
  }

  const row = async (id: string) =>
    (
      await db.sql<{ status: string; node_id: string | null; attempts: number; lease_ms: number | null }>(
        // How far ahead of the database's time the lease ends.
        `SELECT status, node_id, attempts, (EXTRACT(EPOCH FROM (CAST(lease_until AS timestamptz) - statement_timestamp())) * 1000)::int AS lease_ms FROM runs WHERE id = ?`,
        id,
      )
    )[0]!;

  test("leaves the other node's live claim alone; its own lease ends on the database's clock; killed, its run moves", async () => {
    // n: the normal clock, one worker, 6 s leases (renewed every 2 s, recovery every 3 s).
    const n = await serve("n", { ...common(), ASSAY_WORKERS: "1", ASSAY_RUN_LEASE_MS: "6000" });
    nodes.push(n);
    await createWorkflow(n, token, HOLD_WORKFLOW);
    await createWorkflow(n, token, WORKER_WORKFLOW);
    const g1 = gates.gate("n");
    const r1 = await call(n, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token,
      raw: g1.doc(),
      headers: ASYNC,
    });
    expect(r1.status).toBe(202);
    await g1.held();
    expect(executions(g1).map(([pid]) => pid)).toEqual([n.proc.pid]);

    // f: 25 s ahead, 3 s leases (recovery every 1.5 s). Its start runs a recovery pass already.
    const f = await serve("f", {
      ...common(),
      ASSAY_TEST_CLOCK_OFFSET_MS: String(SKEW_MS),
      // Its run, the runs below, and one spare: a run it took from n would not wait.
      ASSAY_WORKERS: "3",
      ASSAY_RUN_LEASE_MS: "3000",
      // A sync run still executing after 200 ms is written as running, claimed by f.
      ASSAY_SYNC_WAIT_MS: "200",
    });
    nodes.push(f);
    expect(f.log.some((l) => l.msg.startsWith("clock moved") && l.offset_ms === SKEW_MS)).toBe(true);
    // A run f executes: sent to it without respond-async, it executes there (a queued run might be
    // claimed by n, which takes a run beyond its one worker into its pipeline), and is written as
    // running under f's claim once the client's 200 ms are up.
    const g2 = gates.gate("f");
    const r2 = await call(f, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token,
      raw: g2.doc(),
      headers: JSON_CT,
    });
    expect(r2.status).toBe(202);
    await g2.held();
    expect(executions(g2).map(([pid]) => pid)).toEqual([f.proc.pid]);

    // f's recovery passes, seen to run: a run left behind by a dead node ("ghost") on its last
    // attempt, its lease run out a moment ago on the database's clock, is given up — twice by f.
    const recoveredByF = () => f.log.filter((l) => l.msg === "runs of a stopped node recovered").length;
    for (let i = 0; recoveredByF() < 2; i++) {
      expect(i).toBeLessThan(20);
      const d = await call(f, "POST", "/api/v1/orgs/acme/workflows/fast/runs/", {
        token,
        raw: "{}",
        headers: JSON_CT,
      });
      expect((await waitForRun(f, token, d.json.url)).status).toBe("succeeded");
      await db.sql(
        "UPDATE runs SET status = 'running', node_id = 'ghost', finished_at = NULL, attempts = 3, lease_until = to_char((statement_timestamp() - interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') WHERE id = ?",
        d.json.id,
      );
      expect((await waitForRun(f, token, d.json.url)).status).toBe("error");
    }
    // n's run: executed once, still n's, renewed.
    expect(executions(g1).map(([pid]) => pid)).toEqual([n.proc.pid]);
    const one = await row(r1.json.id);
    expect({ ...one, lease_ms: one.lease_ms! > 0 }).toEqual({
      status: "running",
      node_id: "n",
      attempts: 1,
      lease_ms: true,
    });
    // f's own claim ends at most one lease (3 s) after now on the database's clock, not 25 s later.
    const two = await row(r2.json.id);
    expect(two).toMatchObject({ status: "running", node_id: "f", attempts: 1 });
    expect(two.lease_ms).toBeGreaterThan(0);
    expect(two.lease_ms).toBeLessThanOrEqual(3000);

    // f dies mid-run. n finishes its own run, then takes f's over once f's lease has run out.
    f.proc.kill("SIGKILL");
    await f.proc.exited;
    const died = Date.now();
    g1.open();
    expect((await waitForRun(n, token, r1.json.url)).status).toBe("succeeded");
    expect(executions(g1).map(([pid]) => pid)).toEqual([n.proc.pid]);
    await g2.held(2);
    const [first, second] = executions(g2);
    expect([first![0], first![2], second![0]]).toEqual([f.proc.pid, null, n.proc.pid]);
    expect(second![1]).toBeGreaterThanOrEqual(died);
    g2.open();
    expect((await waitForRun(n, token, r2.json.url)).status).toBe("succeeded");
    expect(await row(r2.json.id)).toEqual({ status: "succeeded", node_id: "n", attempts: 2, lease_ms: null });
  }, 120_000);
  test("a webhook delivery it enqueues is due at once, and its claim is leased for timeout + 30 s, on the database's clock", async () => {
    // Only the node ahead sends: the other node is stopped.
    for (const n of nodes.splice(0)) {
      n.proc.kill();
      await n.proc.exited;
    }
    const rx = startReceiver();
    const release = holdAnswers(rx);
    try {
      const f = await serve("f2", {
        ...common(),
        ASSAY_TEST_CLOCK_OFFSET_MS: String(SKEW_MS),
        ASSAY_WEBHOOK_ALLOW_PRIVATE: "true",
        ASSAY_WEBHOOK_TIMEOUT_MS: "5000",
      });
      nodes.push(f);
      const hook = await call(f, "POST", "/api/v1/orgs/acme/webhooks/", {
        token,
        body: { url: `${rx.url}/hook`, events: ["run.completed", "ping"] },
      });
      expect(hook.status).toBe(201);
      const ping = await call(f, "POST", `/api/v1/orgs/acme/webhooks/${hook.json.id}/ping/`, { token });
      expect(ping.status).toBe(202);
      // The attempt is under way, held by the receiver: the claim's times against the database's.
      await rx.waitFor((r) => r.length === 1);
      const [d] = await db.sql<{ claimed_by: string; claimed_ms: number; lease_ms: number }>(
        `SELECT claimed_by, (EXTRACT(EPOCH FROM (CAST(claimed_at AS timestamptz) - statement_timestamp())) * 1000)::int AS claimed_ms,
           (EXTRACT(EPOCH FROM (CAST(next_attempt_at AS timestamptz) - statement_timestamp())) * 1000)::int AS lease_ms
         FROM webhook_deliveries WHERE id = ?`,
        ping.json.id,
      );
      // Claimed in the past, leased until at most 35 s from now (before: 25 s ahead, and 60 s).
      expect(d!.claimed_by).toBe("f2");
      expect(d!.claimed_ms).toBeLessThanOrEqual(0);
      expect(d!.lease_ms).toBeGreaterThan(0);
      expect(d!.lease_ms).toBeLessThanOrEqual(35_000);
      release();
      await until(async () => {
        const r = await call(
          f,
          "GET",
          `/api/v1/orgs/acme/webhooks/${hook.json.id}/deliveries/${ping.json.id}/`,
          {
            token,
          },
        );
        return r.json.status === "succeeded";
      }, "the ping to be delivered");
      expect(rx.received).toHaveLength(1);
    } finally {
      release();
      await rx.stop();
    }
  }, 60_000);
});
