// HTTP threads (src/http/threads/) in operation: one server per port whatever the thread counts
// and the order of start (the port lock, src/http/threads/port-lock.ts), and a graceful stop
// that lets requests in flight on an HTTP thread finish, then frees the port.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testConfig } from "../src/config.ts";
import type { ThreadCounts } from "../src/http/threads/index.ts";
import { PortInUseError, type RunningServer, startServer } from "../src/server.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A second server with storage of its own (data dir or database) on `port`: started, or its error. */
async function second(port: number, threads: number): Promise<RunningServer | Error> {
  const dir = mkdtempSync(join(tmpdir(), "assay-port-"));
  const pg = onPostgres ? await freshPgDatabase() : null;
  cleanups.push(async () => {
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const config = testConfig({
    port,
    http_threads: threads,
    data_dir: dir,
    database_url: pg?.url ?? null,
    log_level: "silent",
    workers: 1,
    node_id: "second",
  });
  try {
    const s = await startServer(config);
    cleanups.push(() => s.stop());
    return s;
  } catch (e) {
    return e as Error;
  }
}

const portOf = (s: { url: string }) => Number(new URL(s.url).port);

/** `n` held runs have reached the executor (held in a worker or waiting for one): their requests are in flight. */
const inApp = (s: TestServer, n: number) =>
  until(() => {
    const st = s.deps.executor.stats();
    return st.memoryRunning + st.memoryQueued >= n;
  }, `${n} runs in flight`);

describe("one server per port", () => {
  const orders: [number, number][] = [
    [1, 2],
    [2, 1],
    [2, 2],
  ];
  for (const [first, then] of orders)
    test(`${first} thread(s), then ${then}: the second refuses to start, the first answers alone`, async () => {
      const a = await startTestServer({ http_threads: first });
      try {
        const port = portOf(a);
        const b = await second(port, then);
        expect(b).toBeInstanceOf(PortInUseError);
        expect((b as Error).message).toBe(new PortInUseError("127.0.0.1", port).message);
        // Every connection still reaches the first server.
        for (let i = 0; i < 10; i++) {
          const r = await fetch(`${a.url}/healthz`, { headers: { connection: "close" } });
          expect(r.status).toBe(200);
        }
      } finally {
        await a.close();
      }
    });

  test("the port is free once a threaded server stopped: the next one starts on it", async () => {
    const a = await startTestServer({ http_threads: 2 });
    const port = portOf(a);
    await a.close();
    const b = await second(port, 2);
    expect(b).not.toBeInstanceOf(Error);
    const r = await fetch(`${(b as RunningServer).url}/healthz`, { headers: { connection: "close" } });
    expect(r.status).toBe(200);
    await (b as RunningServer).stop();
  });
});

describe("graceful stop with HTTP threads", () => {
  let s: TestServer;

  test("a request in flight on an HTTP thread finishes; then the port is free", async () => {
    s = await startTestServer({ http_threads: 2 });
    cleanups.push(() => s.close());
    await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
    const counts = s.threadCounts as ThreadCounts;
    const gate = s.gates.gate();
    const pending: Promise<Response>[] = [];
    // Held runs on fresh connections until one of them came through the HTTP thread.
    for (let i = 0; i < 100 && counts.inFlight(1) === 0; i++) {
      pending.push(
        fetch(`${s.url}/api/v1/orgs/acme/workflows/hold/runs/`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${s.rootToken}`,
            "content-type": "application/json",
            connection: "close",
          },
          body: gate.doc(),
        }),
      );
      await inApp(s, pending.length);
    }
    expect(counts.inFlight(1)).toBeGreaterThan(0);
    const port = portOf(s);
    const stopping = s.stop();
    // Stopping: no new connection is taken (on either listener) …
    await until(async () => {
      try {
        await fetch(`${s.url}/healthz`, { headers: { connection: "close" } });
        return false;
      } catch {
        return true;
      }
    }, "the listeners to close");
    // … while the requests in flight get their answers: the result of a run that was executing,
    // 202 for one that had not started (it stays queued: no run starts once the stop began).
    gate.open();
    const answers = await Promise.all(
      pending.map(async (p) => {
        const r = await p;
        return [r.status, ((await r.json()) as { status: string }).status];
      }),
    );
    for (const a of answers)
      expect([JSON.stringify([201, "succeeded"]), JSON.stringify([202, "queued"])]).toContain(
        JSON.stringify(a),
      );
    expect(answers.filter(([code]) => code === 201)).toHaveLength(gate.entered());
    await stopping;
    // Nothing listens any more: a plain listener (no SO_REUSEPORT) binds the port.
    const probe = Bun.serve({ hostname: "127.0.0.1", port, reusePort: false, fetch: () => new Response("") });
    probe.stop(true);
  });
});

test("a client that abandons a long wait ends it, on either thread: the run goes on, written", async () => {
  const s = await startTestServer({ http_threads: 2 });
  cleanups.push(() => s.close());
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
  const counts = s.threadCounts as ThreadCounts;
  const gate = s.gates.gate();
  const aborts: AbortController[] = [];
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < 100 && counts.inFlight(1) === 0; i++) {
    const ac = new AbortController();
    aborts.push(ac);
    pending.push(
      fetch(`${s.url}/api/v1/orgs/acme/workflows/hold/runs/`, {
        method: "POST",
        signal: ac.signal,
        headers: {
          authorization: `Bearer ${s.rootToken}`,
          "content-type": "application/json",
          prefer: "wait=60",
          connection: "close",
        },
        body: gate.doc(),
      }).catch((e) => e),
    );
    await inApp(s, pending.length);
  }
  expect(counts.inFlight(1)).toBeGreaterThan(0);
  // Executing from memory: nothing on disk while a client waits (src/runs/direct.ts).
  expect(await s.count("runs")).toBe(0);
  for (const ac of aborts) ac.abort();
  await Promise.all(pending);
  // The waits end at once (not after 60 s): each run is written as it stands, running or queued.
  await until(async () => (await s.count("runs")) === pending.length, "the abandoned runs to be written");
  await until(() => counts.inFlight(1) === 0, "the relayed requests to end");
  gate.open();
  await until(
    async () =>
      Number((await s.row<{ n: number }>("SELECT count(*) AS n FROM runs WHERE status = 'succeeded'"))?.n) ===
      pending.length,
    "the runs to finish",
  );
  const r = await call(s, "GET", "/api/v1/orgs/acme/runs/", { token: s.rootToken });
  expect(r.status).toBe(200);
  expect(r.json.count).toBe(pending.length);
});
