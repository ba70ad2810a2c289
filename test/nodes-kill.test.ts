// Three real `assay serve` binaries on one PostgreSQL database, one of them killed with SIGKILL in
// the middle of the load (PostgreSQL only). Sync and async runs are spread over the three, and
// webhooks go to a receiver in this process. Runs of a `test_hold` workflow record every
// execution (pid, start, end) in the gates dir, and are held while the node is killed, so the dead
// node certainly dies mid-run. Afterwards: every acknowledged run exists and is final, no run was
// executed by two nodes at once, the dead node's runs were finished by the others (one more
// attempt), every run's webhook arrived at least once, and a token revoked on one node is refused
// by the others on their next request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { ensureBinary, serveBinary } from "./helpers/binary.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { type Gate, type Gates, HOLD_WORKFLOW, createGates } from "./helpers/gates.ts";
import { call, errorBody } from "./helpers/server.ts";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.ts";

type Node = Awaited<ReturnType<typeof serveBinary>> & { id: string };
const JSON_CT = { "content-type": "application/json" };
const FINAL = new Set(["succeeded", "failed", "error", "canceled", "timed_out"]);
const nodes: Node[] = [];
const dirs: string[] = [];
let gates: Gates;
let rx: Receiver;
let drop: () => Promise<void> = async () => {};
let token = "";
let dbUrl = "";

/** Every execution of a held run: [pid, start, end | null] (null: its process died holding it). */
function executions(gate: Gate): [number, number, number | null][] {
  const lines = (f: string) =>
    existsSync(join(gates.dir, f)) ? readFileSync(join(gates.dir, f), "utf8").trim().split("\n") : [];
  const starts = lines(`${gate.name}.held`).map((l) => l.split(" ").slice(1).map(Number) as [number, number]);
  const ends = lines(`${gate.name}.done`).map((l) => l.split(" ").map(Number) as [number, number]);
  return starts.map(([pid, at]) => {
    const end = ends.find(([p, t]) => p === pid && t >= at);
    return [pid, at, end ? end[1] : null];
  });
}

describe.skipIf(!onPostgres)("three binaries, one killed mid-run", () => {
  beforeAll(async () => {
    const bin = ensureBinary();
    const pg = await freshPgDatabase();
    dbUrl = pg.url;
    drop = pg.drop;
    gates = createGates();
    rx = startReceiver();
    const init = Bun.spawnSync([bin, "init", "--org", "acme", "--admin", "root", "--database-url", dbUrl]);
    expect(init.exitCode).toBe(0);
    token = /^(assay_\S+)$/m.exec(init.stdout.toString())![1]!;
    for (const id of ["k1", "k2", "k3"]) {
      const dir = mkdtempSync(join(tmpdir(), "assay-kill-"));
      dirs.push(dir);
      const n = await serveBinary(bin, dir, {
        ASSAY_DATABASE_URL: dbUrl,
        ASSAY_NODE_ID: id,
        ASSAY_WORKERS: "2",
        // Short leases: the dead node's runs are taken over within seconds, not the default 30 —
        // but long enough that a survivor stalled by a busy host (renewing every third of it)
        // keeps its own runs: a 2 s lease gave it 1.3 s.
        ASSAY_RUN_LEASE_MS: "5000",
        ASSAY_TEST_GATES_DIR: gates.dir,
        ASSAY_WEBHOOK_ALLOW_PRIVATE: "true",
        ASSAY_WEBHOOK_TIMEOUT_MS: "2000",
        // A held step waits for the test, however slow the machine: never timed out meanwhile.
        ASSAY_STEP_TIMEOUT_MS: "600000",
        ASSAY_STEP_TIMEOUT_MAX_MS: "600000",
      });
      nodes.push({ ...n, id });
    }
    const first = { url: nodes[0]!.url };
    await createWorkflow(first, token, HOLD_WORKFLOW);
    await createWorkflow(first, token, {
      slug: "quick",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const hook = await call(first, "POST", "/api/v1/orgs/acme/webhooks/", {
      token,
      body: { url: `${rx.url}/hook`, events: ["run.completed"] },
    });
    expect(hook.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    gates?.openAll();
    for (const n of nodes) {
      n.proc.kill();
      await n.proc.exited;
    }
    await rx?.stop();
    await drop();
    gates?.remove();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("the survivors finish the dead node's runs, once at a time; nothing acknowledged is lost", async () => {
    const acked: string[] = [];
    const held: { id: string; gate: Gate }[] = [];
    // Quick runs, sync and async, on every node (first: a sync run would wait for a held worker).
    for (let i = 0; i < 30; i++) {
      const r = await call(nodes[i % 3]!, "POST", "/api/v1/orgs/acme/workflows/quick/runs/", {
        token,
        raw: JSON.stringify({ i }),
        headers: i % 2 ? { ...JSON_CT, prefer: "respond-async" } : JSON_CT,
      });
      expect([201, 202]).toContain(r.status);
      acked.push(r.json.id);
    }
    // Held runs, round robin: each node's two workers take some, the rest wait in the queue.
    for (let i = 0; i < 15; i++) {
      const gate = gates.gate("run");
      const r = await call(nodes[i % 3]!, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
        token,
        raw: gate.doc(),
        headers: { ...JSON_CT, prefer: "respond-async" },
      });
      expect(r.status).toBe(202);
      acked.push(r.json.id);
      held.push({ id: r.json.id, gate });
    }
    // Six held runs are executing (two workers on each node); find the victim's.
    await until(() => held.filter((h) => h.gate.entered() > 0).length === 6, "six held runs", 60_000).catch(
      async (e) => {
        const st = [];
        for (const h of held)
          st.push(
            `${h.gate.entered()}/${(await call(nodes[1]!, "GET", `/api/v1/orgs/acme/runs/${h.id}/`, { token })).json.status}`,
          );
        throw new Error(`${e.message}: ${st.join(" ")}`);
      },
    );
    const victim = nodes[0]!;
    const victims = held.filter((h) => executions(h.gate).some(([pid]) => pid === victim.proc.pid));
    expect(victims).toHaveLength(2);
    victim.proc.kill("SIGKILL");
    await victim.proc.exited;
    const killedAt = Date.now();
    const survivors = nodes.slice(1);

    // More load while the dead node's claims run out, then every gate opens.
    for (let i = 0; i < 10; i++) {
      const r = await call(survivors[i % 2]!, "POST", "/api/v1/orgs/acme/workflows/quick/runs/", {
        token,
        raw: JSON.stringify({ after: i }),
        headers: { ...JSON_CT, prefer: "wait=1" },
      });
      // 202 while the survivors' workers are all held: they run once the gates open.
      expect([201, 202]).toContain(r.status);
      acked.push(r.json.id);
    }
    for (const h of held) h.gate.open();

    const statusOf = async (id: string) =>
      (await call(survivors[0]!, "GET", `/api/v1/orgs/acme/runs/${id}/`, { token })).json;
    await until(
      async () => {
        for (const id of acked) if (!FINAL.has((await statusOf(id)).status)) return false;
        return true;
      },
      "every acknowledged run final",
      120_000,
    );
    for (const id of acked) expect((await statusOf(id)).status).toBe("succeeded");

    // No run executed by two nodes at once; the victim's two ran again elsewhere after the kill.
    for (const h of held) {
      const ex = executions(h.gate).sort((a, b) => a[1] - b[1]);
      for (let i = 1; i < ex.length; i++) {
        const previousEnd = ex[i - 1]![2] ?? killedAt;
        expect(ex[i]![1]).toBeGreaterThanOrEqual(previousEnd);
      }
      const isVictim = victims.includes(h);
      expect(ex.length).toBe(isVictim ? 2 : 1);
      if (isVictim) {
        expect(ex[0]![0]).toBe(victim.proc.pid);
        expect(ex[1]![0]).not.toBe(victim.proc.pid);
      }
    }

    // Every run's run.completed arrived at least once (a delivery the dead node had claimed is
    // sent again once its claim runs out).
    const runIds = (got: typeof rx.received) =>
      new Set(got.map((r) => (r.json.data.run as { id: string })?.id));
    await rx.waitFor((got) => acked.every((id) => runIds(got).has(id)), 120_000);
  }, 300_000);

  test("a token revoked on one node is refused by the others on their next request", async () => {
    const [a, b] = nodes.slice(1) as [Node, Node];
    const t = await call(a, "POST", "/api/v1/users/me/tokens/", { token, body: { name: "short" } });
    expect(t.status).toBe(201);
    for (const n of [a, b])
      expect((await call(n, "GET", "/api/v1/users/me/", { token: t.json.token })).status).toBe(200);
    expect((await call(a, "DELETE", `/api/v1/users/me/tokens/${t.json.id}/`, { token })).status).toBe(204);
    expect((await call(b, "GET", "/api/v1/users/me/", { token: t.json.token })).json).toEqual(
      errorBody(401, "authentication_required", "The token has been revoked."),
    );
  });
});
