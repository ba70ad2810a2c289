// Graceful shutdown with clients waiting for runs (Prefer: wait): the grace period bounds the
// whole stop, every waiting client gets an answer, and no queued run starts once it began.
// Runs are held by test_hold gates (docs/testing.md), never by a slow fixture.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { testConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { createWorkflow, seedRoot, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, createGates } from "./helpers/gates.ts";
import { BINARY, ensureBinary, serveBinary } from "./helpers/binary.ts";
import { call } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const gates = createGates();
const dirs: string[] = [];
afterAll(() => {
  gates.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Upper bound on anything expected "at once" or "by the grace's end" (a machine 10× slower meets it). */
const BOUND_MS = 30_000;
const within = <T>(p: Promise<T>, what: string) =>
  Promise.race([
    p,
    Bun.sleep(BOUND_MS).then(() => {
      throw new Error(`${what}: not within ${BOUND_MS} ms`);
    }),
  ]);

function statuses(dataDir: string): string[] {
  const db = new Database(join(dataDir, "assay.db"), { readonly: true });
  try {
    return db
      .query<{ status: string }, []>("SELECT status FROM runs ORDER BY created_at")
      .all()
      .map((r) => r.status);
  } finally {
    db.close();
  }
}

test("stop with clients waiting: runs not started are answered 202 at once and never start; a running one that ends within the grace period is answered 201", async () => {
  const dataDir = testTempDir("assay-shutdown-");
  dirs.push(dataDir);
  const s = await startServer(
    testConfig({
      test_gates_dir: gates.dir,
      data_dir: dataDir,
      port: 0,
      log_level: "silent",
      rate_limit_disabled: true,
      workers: 1,
      shutdown_grace_ms: 60_000,
    }),
  );
  const { token } = await seedRoot(s);
  await createWorkflow(s, token, HOLD_WORKFLOW);
  const post = (doc: string) =>
    call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token,
      raw: doc,
      headers: { "content-type": "application/json", prefer: "wait=60" },
    });
  const running = gates.gate();
  const waiting = gates.gate();
  const first = post(running.doc());
  await running.held();
  // Behind the held one: one handed to the busy worker already, one waiting for the worker.
  const others = [post(waiting.doc()), post(waiting.doc())];
  await until(() => {
    const x = s.deps.executor.stats();
    return x.memoryRunning + x.memoryQueued === 3;
  }, "the other runs to wait for the worker");

  const stopping = s.stop();
  // Their runs will not start on this node: the clients learn where they are now, as when a wait runs out.
  for (const r of await within(Promise.all(others), "the answers for the runs not started")) {
    expect(r.status).toBe(202);
    expect(r.json.status).toBe("queued");
    expect(r.headers.get("location")).toBe(r.json.url);
  }
  // The running step ends within the grace period: its client gets the result.
  running.open();
  const a = await within(first, "the running run's answer");
  expect(a.status).toBe(201);
  expect(a.json.status).toBe("succeeded");
  await within(stopping, "the stop");
  expect(waiting.entered()).toBe(0);
  expect(statuses(dataDir)).toEqual(["succeeded", "queued", "queued"]);
});

/** The binary on a data dir of its own (org acme, admin root), one worker, a 1 s grace period. */
async function binaryWithGrace(prefix: string) {
  ensureBinary();
  const dataDir = testTempDir(prefix);
  dirs.push(dataDir);
  const init = Bun.spawnSync([BINARY, "init", "--org", "acme", "--admin", "root", "--data-dir", dataDir]);
  expect(init.exitCode).toBe(0);
  const token = init.stdout.toString().trim().split("\n").at(-1)!;
  const server = await serveBinary(BINARY, dataDir, {
    ASSAY_TEST_GATES_DIR: gates.dir,
    ASSAY_WORKERS: "1",
    ASSAY_SHUTDOWN_GRACE_MS: "1000",
  });
  return { dataDir, token, server };
}

test("SIGTERM with clients waiting: each is answered 202 by the end of the grace period and the process exits", async () => {
  const { dataDir, token, server } = await binaryWithGrace("assay-shutdown-bin-");
  const auth = { authorization: `Bearer ${token}` };
  try {
    await createWorkflow(server, token, HOLD_WORKFLOW);
    const post = (doc: string) =>
      call(server, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
        token,
        raw: doc,
        headers: { "content-type": "application/json", prefer: "wait=60" },
      });
    const running = gates.gate(); // never opened: only the grace period ends its wait
    const waiting = gates.gate();
    const first = post(running.doc());
    await running.held();
    const others = [post(waiting.doc()), post(waiting.doc())];
    const gauge = (m: string, name: string) =>
      Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, "m").exec(m)?.[1] ?? 0);
    await until(async () => {
      const m = await (await fetch(`${server.url}/metrics`, { headers: auth })).text();
      return gauge(m, "assay_runs_running") + gauge(m, "assay_runs_queued") === 3;
    }, "the other runs to wait for the worker");

    server.proc.kill("SIGTERM");
    const [a, ...rest] = await within(Promise.all([first, ...others]), "the waiting clients' answers");
    // Cut off at the grace's end: written as running, or already handed back to the queue.
    expect(a.status).toBe(202);
    expect(["running", "queued"]).toContain(a.json.status);
    expect(a.headers.get("location")).toBe(a.json.url);
    for (const r of rest) expect([r.status, r.json.status]).toEqual([202, "queued"]);
    expect(await within(server.proc.exited, "the exit")).toBe(0);
    expect(waiting.entered()).toBe(0);
    // The step cut off at the grace's end went back to the queue with the ones that never started.
    expect(statuses(dataDir)).toEqual(["queued", "queued", "queued"]);
  } finally {
    if (server.proc.exitCode === null) server.proc.kill("SIGKILL");
    await server.proc.exited;
  }
}, 120_000);

test("a second signal while stopping (the same one again, or another) keeps the graceful stop: the waiting client is answered, exit 0", async () => {
  const { dataDir, token, server } = await binaryWithGrace("assay-shutdown-twice-");
  try {
    await createWorkflow(server, token, HOLD_WORKFLOW);
    const running = gates.gate(); // never opened: only the grace period ends its wait
    const first = call(server, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token,
      raw: running.doc(),
      headers: { "content-type": "application/json", prefer: "wait=60" },
    });
    await running.held();
    server.proc.kill("SIGTERM");
    // The listener closes once the stop has begun: the signals below come while it drains.
    await until(async () => {
      try {
        await fetch(`${server.url}/healthz`);
        return false;
      } catch {
        return true;
      }
    }, "the listener to close");
    server.proc.kill("SIGTERM");
    server.proc.kill("SIGINT");
    server.proc.kill("SIGHUP");
    const a = await within(first, "the waiting client's answer");
    expect(a.status).toBe(202);
    expect(["running", "queued"]).toContain(a.json.status);
    expect(await within(server.proc.exited, "the exit")).toBe(0);
    expect(server.proc.signalCode).toBeNull();
    let out = "";
    const reader = server.proc.stdout.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read())
      out += new TextDecoder().decode(r.value);
    expect(out).toContain("SIGTERM: shutting down\n");
    expect(out).toContain(
      "SIGTERM: already shutting down (running steps have the grace period; SIGKILL stops at once)\n",
    );
    // A clean stop: server.pid and the WAL are gone.
    expect(readdirSync(dataDir).sort()).toEqual(["assay.db", "server.lock"]);
    expect(statuses(dataDir)).toEqual(["queued"]);
  } finally {
    if (server.proc.exitCode === null) server.proc.kill("SIGKILL");
    await server.proc.exited;
  }
}, 120_000);
