// A run handed to a busy worker is taken over by a worker that becomes idle (src/jobs/pool.ts,
// #steal; docs/execution.md): it does not wait behind a step that runs on, however long.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, WORKER_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;
const JSON_CT = { "content-type": "application/json" };

beforeAll(async () => {
  s = await startTestServer({ workers: 2 });
  await createWorkflow(s, s.rootToken, WORKER_WORKFLOW);
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
});
afterAll(() => s.close());

test("a sync run handed to a busy worker runs on the worker that frees up first: 201 while the other still holds its run", async () => {
  const pool = s.deps.pool!;
  const [first, second] = [s.gates.gate("first"), s.gates.gate("second")];
  // Each held run on a worker of its own (both idle): the first on the pool's first worker.
  for (const gate of [first, second]) {
    const r = await call(s, "POST", runs("hold"), {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    await gate.held();
  }
  // Both busy: the sync run is handed to the first of the two, behind the run that stays held.
  const sync = call(s, "POST", runs("fast"), {
    token: s.rootToken,
    raw: '{"a": 1}',
    headers: { ...JSON_CT, prefer: "wait=60" },
  });
  await until(() => pool.stats().pipelined === 1, "the sync run handed to a busy worker");
  second.open();
  const r = await sync;
  expect(r.status).toBe(201);
  expect(r.json.status).toBe("succeeded");
  // The first worker is still on its held run: the sync run did not run after it.
  expect(first.entered()).toBe(1);
  expect(pool.stats()).toMatchObject({ busy: 1, pipelined: 0, queued: 0 });
  first.open();
  await until(() => pool.stats().busy === 0, "the held run to end");
});
