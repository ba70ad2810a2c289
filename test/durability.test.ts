// Durable execution (issue 5): step time limits, recovery after interruption, graceful
// shutdown, retention, backpressure, metrics.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, testConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, createGates } from "./helpers/gates.ts";
import { onPostgres } from "./helpers/backend.ts";
import { type TestServer, call, errorBody, restartTestServer, startTestServer } from "./helpers/server.ts";

const JSON_CT = { "content-type": "application/json" };
const dirs: string[] = [];
const gates = createGates();
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  gates.remove();
});

/** A server whose data dir survives stop(), for restart tests. */
async function restartable(overrides: Partial<Record<keyof Config, unknown>> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "assay-dur-"));
  dirs.push(dataDir);
  const start = () =>
    startServer(
      testConfig({
        test_gates_dir: gates.dir,
        data_dir: dataDir,
        port: 0,
        log_level: "silent",
        rate_limit_disabled: true,
        workers: 1,
        ...overrides,
      }),
    );
  const first = await start();
  const u = await first.deps.users.create({ username: "root", is_admin: true }, SYSTEM);
  const org = await first.deps.orgs.create("acme", "ACME", SYSTEM);
  await first.deps.orgs.addMember(org.id, u.id, "admin", SYSTEM);
  const { token } = await first.deps.tokens.create(u.id, "t", null, SYSTEM);
  return { first, start, token, dataDir };
}

describe("step time limit", () => {
  /** A run whose first step is held for ever (its gate never opened): only a limit can end it. */
  async function heldForEver(s: TestServer, slug: string, ownLimitMs: number) {
    await createWorkflow(s, s.rootToken, {
      slug,
      allowed_file_types: ["JSON"],
      steps: [
        { name: "forever", validator: "test_hold", config: { timeout_ms: ownLimitMs } },
        { name: "later", validator: "syntax", config: {} },
      ],
    });
    const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
      token: s.rootToken,
      raw: s.gates.gate().doc(),
      headers: JSON_CT,
    });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("timed_out");
    expect(r.json.steps.map((x: { status: string }) => x.status)).toEqual(["error", "skipped"]);
    return r.json as { error: string; steps: { error: string }[] };
  }

  test("a step that overruns is stopped: step error, run timed_out, the next run is served", async () => {
    const s = await startTestServer({ workers: 1 });
    try {
      const run = await heldForEver(s, "limited", 300);
      expect(run.steps[0]!.error).toBe("step exceeded its time limit of 300 ms");
      expect(run.error).toContain("time limit");
      await createWorkflow(s, s.rootToken, {
        slug: "quick",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "syntax", config: {} }],
      });
      const next = await call(s, "POST", "/api/v1/orgs/acme/workflows/quick/runs/", {
        token: s.rootToken,
        raw: "{}",
        headers: JSON_CT,
      });
      expect(next.json.status).toBe("succeeded");
    } finally {
      await s.close();
    }
  });
  test("a run's steps are bounded in all (ASSAY_RUN_TIMEOUT_MS), whatever each step's own limit", async () => {
    const s = await startTestServer({ workers: 1, run_timeout_ms: 1000 });
    try {
      // Its own limit is 10 min: the run's, 1 s, ends it.
      const run = await heldForEver(s, "long", 600000);
      expect(run.steps[0]!.error).toBe("run exceeded its time limit of 1000 ms");
      expect(run.error).toContain("run exceeded its time limit");
    } finally {
      await s.close();
    }
  });
  test("400 at save time for a timeout_ms outside its bounds", async () => {
    const s = await startTestServer();
    try {
      const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
        token: s.rootToken,
        body: {
          slug: "bad",
          name: "b",
          allowed_file_types: ["JSON"],
          steps: [{ name: "s", validator: "syntax", config: { timeout_ms: 0 } }],
        },
      });
      expect(r.status).toBe(400);
      expect(r.json.errors[0].field).toBe("steps[0].config.timeout_ms");
    } finally {
      await s.close();
    }
  });
});

describe("graceful shutdown and recovery", () => {
  const statuses = (dataDir: string) => {
    const db = new Database(join(dataDir, "assay.db"));
    try {
      return db.query("SELECT id, status, attempts FROM runs ORDER BY created_at").all() as {
        id: string;
        status: string;
        attempts: number;
      }[];
    } finally {
      db.close();
    }
  };
  test("stop: a running step past the grace period goes back to the queue with the queued runs; the next start completes them", async () => {
    const { first, start, token, dataDir } = await restartable({ shutdown_grace_ms: 100 });
    await createWorkflow(first, token, HOLD_WORKFLOW);
    const gate = gates.gate();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(first, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
        token,
        raw: gate.doc(),
        headers: { ...JSON_CT, prefer: "respond-async" },
      });
      expect(r.status).toBe(202);
      ids.push(r.json.id);
    }
    await gate.held(); // the first run's step is running, and cannot end within the grace period
    await first.stop();
    const after = statuses(dataDir);
    expect(after.map((r) => r.status)).toEqual(["queued", "queued", "queued"]);
    expect(after[0]!.attempts).toBe(1);
    gate.open();
    const second = await start();
    try {
      for (const id of ids) {
        const done = await waitForRun(second, token, `/api/v1/orgs/acme/runs/${id}/`);
        expect(done.status).toBe("succeeded");
      }
    } finally {
      await second.stop();
    }
  });
  test("stop: a running step that finishes within the grace period is recorded", async () => {
    const { first, token, dataDir } = await restartable({ shutdown_grace_ms: 60_000 });
    await createWorkflow(first, token, HOLD_WORKFLOW);
    const gate = gates.gate();
    await call(first, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    await gate.held();
    // The step ends while the shutdown waits for it, not before.
    const stopping = first.stop();
    await until(() => first.deps.pool!.closing, "the shutdown to reach the workers");
    gate.open();
    await stopping;
    expect(statuses(dataDir)[0]!.status).toBe("succeeded");
  });
  test("a run interrupted max_attempts times ends in error with a clear message, a webhook event and a metric", async () => {
    const { first, start, token, dataDir } = await restartable({
      max_attempts: 2,
      webhook_allow_private: true,
    });
    const hook = await call(first, "POST", "/api/v1/orgs/acme/webhooks/", {
      token,
      body: { url: "http://127.0.0.1:9/hook", events: ["run.error"] },
    });
    expect(hook.status).toBe(201);
    await createWorkflow(first, token, {
      slug: "q",
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "syntax", config: {} }],
    });
    const r = await call(first, "POST", "/api/v1/orgs/acme/workflows/q/runs/", {
      token,
      raw: "{}",
      headers: JSON_CT,
    });
    await first.stop();
    // What two crashes in the middle of this run would have left behind.
    const db = new Database(join(dataDir, "assay.db"));
    db.query("UPDATE runs SET status = 'running', attempts = 2, finished_at = NULL WHERE id = ?").run(
      r.json.id,
    );
    db.close();
    const second = await start();
    try {
      const run = await call(second, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/`, { token });
      expect(run.json.status).toBe("error");
      expect(run.json.error).toBe(
        "The run was interrupted 2 times (server crash or restart) and was given up.",
      );
      const deliveries = await call(second, "GET", `/api/v1/orgs/acme/webhooks/${hook.json.id}/deliveries/`, {
        token,
      });
      expect(deliveries.json.results.map((d: { event: string }) => d.event)).toEqual(["run.error"]);
      expect((await call(second, "GET", "/metrics", { token })).text).toContain(
        'assay_runs_finished_total{status="error"} 1',
      );
    } finally {
      await second.stop();
    }
  });
});

describe("retention", () => {
  test("content past retention_days is purged; the run, findings and sha256 stay; 410 gone for the content", async () => {
    const s = await startTestServer();
    try {
      await createWorkflow(s, s.rootToken, {
        slug: "short",
        retention_days: 1,
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "syntax", config: {} }],
      });
      await createWorkflow(s, s.rootToken, {
        slug: "keep",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "syntax", config: {} }],
      });
      const old = await call(s, "POST", "/api/v1/orgs/acme/workflows/short/runs/", {
        token: s.rootToken,
        raw: '{"a":',
        headers: JSON_CT,
      });
      const fresh = await call(s, "POST", "/api/v1/orgs/acme/workflows/short/runs/", {
        token: s.rootToken,
        raw: "{}",
        headers: JSON_CT,
      });
      const kept = await call(s, "POST", "/api/v1/orgs/acme/workflows/keep/runs/", {
        token: s.rootToken,
        raw: "{}",
        headers: JSON_CT,
      });
      // Age two submissions by two days (the sweep compares created_at with now).
      const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString();
      for (const id of [old.json.submission.id, kept.json.submission.id])
        await s.sql("UPDATE submissions SET created_at = ? WHERE id = ?", twoDaysAgo, id);
      expect(await s.retention.sweep()).toBe(1);
      const c = await call(s, "GET", `/api/v1/orgs/acme/runs/${old.json.id}/content/`, {
        token: s.rootToken,
      });
      expect(c.json).toEqual(errorBody(410, "gone", expect.stringContaining("purged")));
      const run = await call(s, "GET", `/api/v1/orgs/acme/runs/${old.json.id}/`, { token: s.rootToken });
      expect(run.json.submission).toEqual(
        expect.objectContaining({ content_purged: true, sha256: old.json.submission.sha256 }),
      );
      expect(run.json.steps[0].findings.length).toBeGreaterThan(0);
      expect(
        (await call(s, "GET", `/api/v1/orgs/acme/runs/${fresh.json.id}/content/`, { token: s.rootToken }))
          .status,
      ).toBe(200);
      expect(
        (await call(s, "GET", `/api/v1/orgs/acme/runs/${kept.json.id}/content/`, { token: s.rootToken }))
          .status,
      ).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe("retention after a restart", () => {
  test("a server restarted more often than hourly still sweeps: once soon after its start", async () => {
    let s = await startTestServer();
    try {
      await createWorkflow(s, s.rootToken, {
        slug: "short",
        retention_days: 1,
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "syntax", config: {} }],
      });
      const old = await call(s, "POST", "/api/v1/orgs/acme/workflows/short/runs/", {
        token: s.rootToken,
        raw: "{}",
        headers: JSON_CT,
      });
      // Aged by two days (the sweep compares created_at with now).
      await s.sql(
        "UPDATE submissions SET created_at = ? WHERE id = ?",
        new Date(Date.now() - 2 * 86_400_000).toISOString(),
        old.json.submission.id,
      );
      s = await restartTestServer(s);
      await until(
        async () =>
          (
            await s.row<{ p: string | null }>(
              "SELECT purged_at AS p FROM submissions WHERE id = ?",
              old.json.submission.id,
            )
          )?.p != null,
        "the first sweep after the start",
      );
    } finally {
      await s.close();
    }
  });
});

describe("backpressure", () => {
  test("503 service_unavailable with Retry-After when the queue is full; nothing stored", async () => {
    const s = await startTestServer({ workers: 1, max_queue: 2, max_queue_per_org: 2 });
    try {
      await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
      const gate = s.gates.gate();
      const send = () =>
        call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
          token: s.rootToken,
          raw: gate.doc(),
          headers: { ...JSON_CT, prefer: "respond-async" },
        });
      // The pool's capacity (a run in the worker and the next one handed to it), then max_queue.
      const n = s.deps.pool!.capacity + 2;
      const accepted: Awaited<ReturnType<typeof send>>[] = [];
      for (let i = 0; i < n; i++) {
        accepted.push(await send());
        // The first ones leave the queue for the pool (held there): wait until they have.
        if (i < n - 2) await until(async () => (await s.deps.executor.queueDepth()) === 0, "an empty queue");
      }
      expect(accepted.map((a) => a.status)).toEqual(Array(n).fill(202));
      const before = await s.count("runs");
      const r = await send();
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("5");
      expect(r.json).toEqual(
        errorBody(503, "service_unavailable", "Too many runs are waiting; retry later."),
      );
      expect(await s.count("runs")).toBe(before);
      gate.open();
      for (const a of accepted)
        expect((await waitForRun(s, s.rootToken, a.json.url)).status).toBe("succeeded");
    } finally {
      await s.close();
    }
  });
});

describe("one org's share of the queue", () => {
  test("an org holding half the queue gets 503; another org's runs are still taken; its own again once it drains", async () => {
    // max_queue_per_org unset: half of max_queue, 2.
    const s = await startTestServer({ workers: 1, max_queue: 4 });
    try {
      await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
      const olga = await s.user("olga", "other", "admin");
      await createWorkflow(s, olga.token, HOLD_WORKFLOW, "other");
      const gate = s.gates.gate();
      const send = (org: string, token: string) =>
        call(s, "POST", `/api/v1/orgs/${org}/workflows/hold/runs/`, {
          token,
          raw: gate.doc(),
          headers: { ...JSON_CT, prefer: "respond-async" },
        });
      // The pool's capacity first (held there, out of the queue), then acme's share of the queue.
      const n = s.deps.pool!.capacity + 2;
      const accepted: Awaited<ReturnType<typeof send>>[] = [];
      for (let i = 0; i < n; i++) {
        accepted.push(await send("acme", s.rootToken));
        if (i < n - 2) await until(async () => (await s.deps.executor.queueDepth()) === 0, "an empty queue");
      }
      expect(accepted.map((a) => a.status)).toEqual(Array(n).fill(202));
      expect(s.deps.executor.queueDepth()).toBe(2);
      const before = await s.count("runs");
      const refused = await send("acme", s.rootToken);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(refused.json).toEqual(
        errorBody(
          503,
          "service_unavailable",
          "Too many of this organization's runs are waiting; retry later.",
        ),
      );
      expect(await s.count("runs")).toBe(before);
      // The queue (4) has room, and it is not acme's to take: other's runs are accepted.
      const theirs = [await send("other", olga.token), await send("other", olga.token)];
      expect(theirs.map((a) => a.status)).toEqual([202, 202]);
      gate.open();
      for (const a of accepted)
        expect((await waitForRun(s, s.rootToken, a.json.url)).status).toBe("succeeded");
      for (const a of theirs) expect((await waitForRun(s, olga.token, a.json.url)).status).toBe("succeeded");
      const again = await send("acme", s.rootToken);
      expect(again.status).toBe(202);
      expect((await waitForRun(s, s.rootToken, again.json.url)).status).toBe("succeeded");
    } finally {
      await s.close();
    }
  });
});

describe("one org's share of the queue, under a burst", () => {
  /**
   * A server whose queue (40) holds 18 of acme's runs, its worker held by a gate, and a sender of
   * more: the share is 20, so 2 more fit.
   */
  async function eighteenQueued() {
    const s = await startTestServer({ workers: 1, max_queue: 40 });
    await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
    const gate = s.gates.gate();
    const send = (prefer = "respond-async", pad = 0) =>
      call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
        token: s.rootToken,
        raw: gate.doc(pad),
        headers: { ...JSON_CT, prefer },
      });
    // The pool's capacity first (held there, out of the queue), then 18 queued.
    for (let i = 0; i < s.deps.pool!.capacity; i++) {
      expect((await send()).status).toBe(202);
      await until(async () => s.deps.executor.queueDepth() === 0, "an empty queue");
    }
    for (let i = 0; i < 18; i++) expect((await send()).status).toBe(202);
    return { s, gate, send };
  }
  const queuedRuns = async (s: TestServer) =>
    Number(
      (await s.row<{ n: number | string }>("SELECT count(*) AS n FROM runs WHERE status = 'queued'"))?.n,
    );
  /** Two fit; a run counted twice while it commits may cost one of them, never add one. */
  const twoAtMost = (answers: { status: number }[]) => {
    const accepted = answers.filter((r) => r.status === 202).length;
    expect(accepted).toBeGreaterThanOrEqual(1);
    expect(accepted).toBeLessThanOrEqual(2);
    expect(answers.filter((r) => r.status !== 202).map((r) => r.status)).toEqual(
      Array(answers.length - accepted).fill(503),
    );
    return accepted;
  };

  test("30 requests at once past 18 queued runs: the share (20) is not overshot", async () => {
    const { s, gate, send } = await eighteenQueued();
    try {
      const burst = await Promise.all(Array.from({ length: 30 }, () => send()));
      const accepted = twoAtMost(burst);
      for (const r of burst.filter((x) => x.status !== 202))
        expect(r.json).toEqual(
          errorBody(
            503,
            "service_unavailable",
            "Too many of this organization's runs are waiting; retry later.",
          ),
        );
      expect(await queuedRuns(s)).toBe(18 + accepted);
      gate.open();
    } finally {
      await s.close();
    }
  });

  test("30 clients that wait, at once past 18: runs held in memory count against the share too", async () => {
    const { s, gate, send } = await eighteenQueued();
    try {
      // Held in memory while their clients wait (1 s), then written as queued and answered 202.
      twoAtMost(await Promise.all(Array.from({ length: 30 }, () => send("wait=1"))));
      gate.open();
    } finally {
      await s.close();
    }
  });

  test("8 runs of over 1 MiB at once past 18: content written first is admitted again, refused slices removed", async () => {
    const { s, gate, send } = await eighteenQueued();
    try {
      // 1.2 MB each: written in slices of 256 KiB (5) before the run's own rows.
      const accepted = twoAtMost(
        await Promise.all(Array.from({ length: 8 }, () => send("respond-async", 1_200_000))),
      );
      expect(await queuedRuns(s)).toBe(18 + accepted);
      expect(await s.count("content_chunks")).toBe(accepted * 5);
      gate.open();
    } finally {
      await s.close();
    }
  });
});

describe("GET /metrics", () => {
  let s: TestServer;
  test("Prometheus text for an instance admin: runs by status, queue, workers, step and HTTP durations", async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, {
      slug: "m",
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "syntax", config: {} }],
    });
    await call(s, "POST", "/api/v1/orgs/acme/workflows/m/runs/", {
      token: s.rootToken,
      raw: "{}",
      headers: JSON_CT,
    });
    const r = await call(s, "GET", "/metrics", { token: s.rootToken });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/plain");
    // On PostgreSQL every series also carries the node's name (several nodes, one Prometheus).
    const node = onPostgres ? 'node="[^"]+",?' : "";
    expect(r.text).toMatch(new RegExp(`assay_runs_finished_total\\{${node}status="succeeded"\\} 1`));
    expect(r.text).toMatch(new RegExp(`assay_runs_queued\\{${node}\\} 0`));
    expect(r.text).toMatch(new RegExp(`assay_workers\\{${node}state="idle"\\} \\d`));
    expect(r.text).toMatch(
      new RegExp(`assay_step_duration_seconds_count\\{${node}status="passed",validator="syntax"\\} 1`),
    );
    expect(r.text).toMatch(
      new RegExp(
        `assay_http_request_duration_seconds_count\\{${node}method="POST",route="/api/v1/orgs/:org_slug/workflows/:workflow/runs/",status="201"\\} 1`,
      ),
    );
  });
  test("401 without a token, 403 for a non-admin", async () => {
    expect((await call(s, "GET", "/metrics")).json).toEqual(
      errorBody(401, "authentication_required", expect.any(String)),
    );
    const u = await s.user("plain", "acme", "admin");
    expect((await call(s, "GET", "/metrics", { token: u.token })).json).toEqual(
      errorBody(403, "permission_denied", "This action needs an instance administrator."),
    );
    await s.close();
  });
  test("public when metrics_enabled", async () => {
    const p = await startTestServer({ metrics_enabled: true });
    try {
      expect((await call(p, "GET", "/metrics")).status).toBe(200);
    } finally {
      await p.close();
    }
  });
});
