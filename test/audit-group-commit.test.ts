// Audit entries written by several programs of one transaction: a group commit (src/runs/batch.ts)
// carries the final state of every run that ended in the same turn, and a cancel writes its
// `run.cancel` entry with that state. PostgreSQL runs a group's programs side by side on one
// connection; two entries there both read the chain's head before either moved it, and
// `assay audit verify` found the chain broken ("entry N does not follow entry N-1") after
// concurrent cancels (found by killing and restarting two nodes under a mixed load).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { audit } from "../src/audit/append.ts";
import { createWriteBatcher } from "../src/runs/batch.ts";
import { runAssay } from "./helpers/cli.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  // One worker: held by one run, so the others stay queued until canceled.
  s = await startTestServer({ workers: 1 });
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
});
afterAll(() => s.close());

/** `assay audit verify` (a real process) on the server's database: exit code and first line. */
async function verify() {
  const r = await runAssay(["audit", "verify", ...s.cliArgs]);
  return { code: r.code, first: r.out.split("\n")[0]!.replace(/: \d+ entries.*/, "") };
}
const INTACT = { code: 0, first: "Intact" };

describe("audit entries of one group commit", () => {
  test("two entries written in the same turn share a transaction and still follow each other", async () => {
    const before = await s.count("audit_log");
    const batch = createWriteBatcher(s.deps.db);
    // Issued in one turn: the batcher commits them in one transaction (as two cancels' final
    // states), which PostgreSQL runs side by side.
    const change = (n: number) => ({
      org_id: null,
      action: "test.append",
      target_type: "test",
      target_id: n,
      target_name: `entry ${n}`,
      after: { n },
    });
    const rows = await Promise.all([1, 2, 3].map((n) => batch.write(() => audit(SYSTEM, change(n)))));
    expect(rows.map((r) => r!.seq)).toEqual([before + 1, before + 2, before + 3]);
    expect(rows[1]!.prev_hash).toBe(rows[0]!.hash);
    expect(rows[2]!.prev_hash).toBe(rows[1]!.hash);
    expect(await verify()).toEqual(INTACT);
  });

  test("queued runs canceled at once: one entry each, and the chain verifies", async () => {
    const gate = s.gates.gate();
    const held = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(held.status).toBe(202);
    await gate.held();
    const queued: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
        token: s.rootToken,
        raw: JSON.stringify({ i }),
        headers: { "content-type": "application/json", prefer: "respond-async" },
      });
      expect(r.status).toBe(202);
      queued.push(r.json.id);
    }
    const before = await s.count("audit_log");
    const canceled = await Promise.all(
      queued.map((id) => call(s, "POST", `/api/v1/orgs/acme/runs/${id}/cancel/`, { token: s.rootToken })),
    );
    expect(canceled.map((r) => [r.status, r.json.status])).toEqual(queued.map(() => [200, "canceled"]));
    gate.open();
    await until(
      async () =>
        (await call(s, "GET", `/api/v1/orgs/acme/runs/${held.json.id}/`, { token: s.rootToken })).json
          .status === "succeeded",
      "the held run ends",
    );
    const entries = await s.sql<{ target_id: string }>(
      "SELECT target_id FROM audit_log WHERE seq > ? AND action = 'run.cancel'",
      before,
    );
    expect(entries.map((e) => e.target_id).sort()).toEqual([...queued].sort());
    expect(await verify()).toEqual(INTACT);
  });
});
