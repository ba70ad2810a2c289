// The inline lane over HTTP (src/jobs/inline.ts): a small valid JSON document on a linear-time
// schema ends on the main thread; a failing one, a schema too heavy to vouch for, or a server started with
// ASSAY_INLINE_JOBS=false go to a worker, and the client sees the same run either way.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const SCHEMA = {
  type: "object",
  required: ["id", "qty"],
  properties: { id: { type: "string", pattern: "^ord-[0-9]{6}$" }, qty: { type: "integer", minimum: 1 } },
};
const VALID = '{"id":"ord-000001","qty":2}';
const INVALID = '{"id":"ord-1","qty":0}';

let on: TestServer;
let off: TestServer;

async function setUp(s: TestServer) {
  await createWorkflow(s, s.rootToken, {
    slug: "linear",
    allowed_file_types: ["JSON"],
    steps: [{ name: "schema", validator: "json_schema", config: { schema: SCHEMA } }],
  });
  const unbounded = {
    ...SCHEMA,
    // Every pattern runs in linear time (RE2), but this one's program outweighs the inline budget.
    properties: { ...SCHEMA.properties, id: { type: "string", pattern: "^ord-[0-9]{1,600}$" } },
  };
  await createWorkflow(s, s.rootToken, {
    slug: "unbounded",
    allowed_file_types: ["JSON"],
    steps: [{ name: "schema", validator: "json_schema", config: { schema: unbounded } }],
  });
}

beforeAll(async () => {
  [on, off] = await Promise.all([startTestServer(), startTestServer({ inline_jobs: false })]);
  await Promise.all([setUp(on), setUp(off)]);
});
afterAll(async () => {
  await Promise.all([on?.stop(), off?.stop()]);
});

async function inlineCount(s: TestServer): Promise<number> {
  const r = await call(s, "GET", "/metrics", { token: s.rootToken });
  expect(r.text).toContain("# TYPE assay_jobs_inline_total counter");
  return Number(/^assay_jobs_inline_total\{(?:node="[^"]+")?\} (\d+)$/m.exec(r.text)?.[1]);
}

async function run(s: TestServer, wf: string, doc: string) {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${wf}/runs/`, {
    token: s.rootToken,
    raw: doc,
    headers: { "content-type": "application/json" },
  });
  expect(r.status).toBe(201);
  const got = await call(s, "GET", new URL(r.json.url).pathname, { token: s.rootToken });
  expect(got.json).toEqual(r.json); // written as answered
  return r.json;
}

/** A run without what differs between two runs of the same document. */
function comparable(run: Record<string, unknown>) {
  const steps = (run.steps as Record<string, unknown>[]).map(({ duration_ms: _, ...rest }) => rest);
  const { id: _i, url: _u, created_at: _c, started_at: _s, finished_at: _f, duration_ms: _d, ...rest } = run;
  const { id: _si, created_at: _sc, ...submission } = run.submission as Record<string, unknown>;
  // version_url names the server that answered (two servers here), like url.
  const { version_url: _v, ...workflow } = run.workflow as Record<string, unknown>;
  return { ...rest, steps, submission, workflow };
}

describe("the inline lane", () => {
  test("a valid document on a linear-time schema ends inline, as a worker would end it", async () => {
    const before = await inlineCount(on);
    const inline = await run(on, "linear", VALID);
    expect(await inlineCount(on)).toBe(before + 1);
    expect(inline.status).toBe("succeeded");
    const worker = await run(off, "linear", VALID);
    expect(await inlineCount(off)).toBe(0);
    expect(comparable(inline)).toEqual(comparable(worker));
  });

  test("a failing document goes to a worker, which reports its findings", async () => {
    const before = await inlineCount(on);
    const failed = await run(on, "linear", INVALID);
    expect(await inlineCount(on)).toBe(before);
    expect(failed.status).toBe("failed");
    expect(failed.steps[0].findings.length).toBe(2);
    expect(comparable(failed)).toEqual(comparable(await run(off, "linear", INVALID)));
  });

  test("a schema whose pattern outweighs the inline budget always goes to a worker", async () => {
    const before = await inlineCount(on);
    expect((await run(on, "unbounded", VALID)).status).toBe("succeeded");
    expect(await inlineCount(on)).toBe(before);
  });
});

describe("the inline lane takes no worker's slot", () => {
  test("with every worker busy, an inline run still ends at once (201), a worker's run waits (202)", async () => {
    await createWorkflow(on, on.rootToken, HOLD_WORKFLOW);
    await createWorkflow(on, on.rootToken, {
      slug: "syntax",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const post = (wf: string, doc: string, prefer: string) =>
      call(on, "POST", `/api/v1/orgs/acme/workflows/${wf}/runs/`, {
        token: on.rootToken,
        raw: doc,
        headers: { "content-type": "application/json", prefer },
      });
    const gate = on.gates.gate();
    for (let i = 0; i < on.deps.pool!.capacity; i++) await post("hold", gate.doc(), "respond-async");
    await until(() => on.deps.executor.stats().inFlight === on.deps.pool!.capacity, "a full pool");

    const inline = await post("linear", VALID, "wait=1");
    expect(inline.status).toBe(201);
    expect(inline.json.status).toBe("succeeded");
    const queued = await post("syntax", VALID, "wait=1");
    expect(queued.status).toBe(202);
    expect(queued.json.status).toBe("queued");

    gate.open();
  });
});
