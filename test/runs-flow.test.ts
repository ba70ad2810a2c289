// 201 or 202, polling, cancel, idempotency, the token re-check, concurrency, reading runs.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { onPostgres } from "./helpers/backend.ts";
import { RECHECK_AFTER_MS } from "../src/runs/service.ts";
import { type TestServer, call, errorBody, restartTestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let exec: string;
let author: string;
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;
const JSON_CT = { "content-type": "application/json" };
beforeAll(async () => {
  s = await startTestServer({ workers: 2 });
  exec = (await s.user("exec", "acme", "executor")).token;
  author = (await s.user("auth", "acme", "author")).token;
  await createWorkflow(s, s.rootToken, {
    slug: "schema",
    allowed_file_types: ["JSON"],
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      {
        name: "schema",
        validator: "json_schema",
        config: { schema: { type: "object", required: ["id"], properties: { id: { type: "integer" } } } },
      },
      { name: "after", validator: "syntax", config: {} },
    ],
  });
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
});
afterAll(() => s.close());

describe("201 within the wait window", () => {
  test("201 with the whole run: statuses, summary, findings with positions", async () => {
    const r = await call(s, "POST", runs("schema"), {
      token: exec,
      raw: '{\n  "id": "seven"\n}',
      headers: JSON_CT,
    });
    expect(r.status).toBe(201);
    // The run is created by this request: its URL in Location, as on a 202.
    expect(r.headers.get("location")).toBe(`${s.url}/api/v1/orgs/acme/runs/${r.json.id}/`);
    expect(r.json).toEqual(
      expect.objectContaining({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        url: `${s.url}/api/v1/orgs/acme/runs/${r.json.id}/`,
        org_slug: "acme",
        workflow: {
          id: expect.any(Number),
          slug: "schema",
          version: 1,
          version_url: expect.stringMatching(/\/api\/v1\/orgs\/acme\/workflows\/\d+\/versions\/1\/$/),
        },
        status: "failed",
        summary: {
          errors: 1,
          warnings: 0,
          infos: 0,
          steps_passed: 1,
          steps_failed: 1,
          steps_skipped: 1,
          truncated: false,
        },
        error: null,
        created_by: { id: expect.any(Number), username: "exec" },
        started_at: expect.any(String),
        finished_at: expect.any(String),
        duration_ms: expect.any(Number),
      }),
    );
    expect(r.json.steps.map((x: { status: string }) => x.status)).toEqual(["passed", "failed", "skipped"]);
    expect(r.json.steps[1].findings[0]).toEqual(
      expect.objectContaining({ severity: "error", code: "json_schema.type", path: "/id", line: 2 }),
    );
  });
  test("fail_fast off: later steps run after a failure", async () => {
    await call(s, "PATCH", "/api/v1/orgs/acme/workflows/schema/", {
      token: author,
      body: { fail_fast: false },
    });
    const r = await call(s, "POST", runs("schema"), { token: exec, raw: "{}", headers: JSON_CT });
    expect(r.json.steps.map((x: { status: string }) => x.status)).toEqual(["passed", "failed", "passed"]);
    expect(r.json.workflow.version).toBe(2);
    await call(s, "PATCH", "/api/v1/orgs/acme/workflows/schema/", {
      token: author,
      body: { fail_fast: true },
    });
  });
  test("Prefer: wait=N is honoured and echoed in Preference-Applied", async () => {
    const r = await call(s, "POST", runs("schema"), {
      token: exec,
      raw: '{"id":1}',
      headers: { ...JSON_CT, prefer: "wait=5" },
    });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
    expect(r.headers.get("preference-applied")).toBe("wait=5");
  });
  test("Prefer: a wait of any length is capped at 60 s; of a preference given twice the first counts", async () => {
    // Until 2026-11-29 a wait of 7 digits or more was ignored (the default wait, nothing echoed),
    // and the last of two waits counted: `wait=5, wait=0` answered 202 at once. RFC 7240 §2:
    // "only the first instance is to be considered".
    const cases: [Record<string, string> | [string, string][], string][] = [
      [{ prefer: "wait=9999999" }, "wait=60"],
      [{ prefer: `wait=${"9".repeat(400)}` }, "wait=60"],
      [{ prefer: "wait=5, wait=0" }, "wait=5"],
      [{ prefer: "wait=5; wait=0" }, "wait=5"],
      [
        [
          ["prefer", "wait=5"],
          ["prefer", "wait=0"],
        ],
        "wait=5",
      ],
    ];
    for (const [prefer, applied] of cases) {
      const headers = new Headers(prefer);
      headers.set("content-type", "application/json");
      headers.set("authorization", `Bearer ${exec}`);
      const r = await fetch(s.url + runs("schema"), { method: "POST", headers, body: '{"id":1}' });
      expect([r.status, r.headers.get("preference-applied"), (await r.json()).status]).toEqual([
        201,
        applied,
        "succeeded",
      ]);
    }
  });
  test("the workflow's numeric id names it in the run path as its slug does; another org's id is 404", async () => {
    // The spec: {workflow_identifier} is the slug (preferred) or the numeric ID, on every path.
    const wf = await call(s, "GET", "/api/v1/orgs/acme/workflows/schema/", { token: exec });
    const r = await call(s, "POST", runs(String(wf.json.id)), {
      token: exec,
      raw: '{"id":1}',
      headers: JSON_CT,
    });
    expect([r.status, r.json.status, r.json.workflow.id, r.json.workflow.slug]).toEqual([
      201,
      "succeeded",
      wf.json.id,
      "schema",
    ]);
    expect(r.headers.get("location")).toBe(r.json.url);
    const other = (await s.user("odile", "gamma", "admin")).token;
    const theirs = await createWorkflow(
      s,
      other,
      { slug: "g", allowed_file_types: ["JSON"], steps: [{ name: "s", validator: "syntax", config: {} }] },
      "gamma",
    );
    const before = await s.count("runs");
    const cross = await call(s, "POST", runs(String(theirs.id)), {
      token: exec,
      raw: "{}",
      headers: JSON_CT,
    });
    expect([cross.status, cross.json]).toEqual([404, errorBody(404, "not_found", "Workflow not found.")]);
    expect(await s.count("runs")).toBe(before);
  });
});

describe("202 accepted", () => {
  test("Prefer: respond-async gives 202 at once with Location and Retry-After; polling reaches the result", async () => {
    const r = await call(s, "POST", runs("schema"), {
      token: exec,
      raw: '{"id":2}',
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    expect(r.headers.get("preference-applied")).toBe("respond-async");
    expect(r.headers.get("location")).toBe(r.json.url);
    expect(r.headers.get("retry-after")).toBe("1");
    expect(["queued", "running", "succeeded"]).toContain(r.json.status);
    const done = await waitForRun(s, exec, r.headers.get("location")!);
    expect(done.status).toBe("succeeded");
  });
  test("a run longer than the window answers 202; a GET while unfinished carries Retry-After", async () => {
    const gate = s.gates.gate();
    const r = await call(s, "POST", runs("hold"), {
      token: exec,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "wait=0" },
    });
    expect(r.status).toBe(202);
    const g = await call(s, "GET", new URL(r.headers.get("location")!).pathname, { token: exec });
    expect(["queued", "running"]).toContain(g.json.status);
    expect(g.headers.get("retry-after")).toBe("1");
    // HEAD answers as GET does, without the body (the poller's cheap check).
    const h = await call(s, "HEAD", new URL(r.json.url).pathname, { token: exec });
    expect([h.status, h.headers.get("retry-after"), h.text]).toEqual([200, "1", ""]);
    gate.open();
    const done = await waitForRun(s, exec, r.json.url);
    expect(done.status).toBe("succeeded");
    const final = await call(s, "GET", new URL(r.json.url).pathname, { token: exec });
    expect(final.headers.get("retry-after")).toBeNull();
    const finalHead = await call(s, "HEAD", new URL(r.json.url).pathname, { token: exec });
    expect([finalHead.status, finalHead.headers.get("retry-after")]).toEqual([200, null]);
  });
});

describe("cancel", () => {
  /** An async run of `hold`, its step running in a worker and held there until the gate opens. */
  async function heldRun() {
    const gate = s.gates.gate();
    const r = await call(s, "POST", runs("hold"), {
      token: exec,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    await gate.held();
    return { gate, url: r.json.url as string, path: new URL(r.json.url).pathname };
  }
  test("a running run is stopped and ends canceled; cancel again is 409", async () => {
    const { path } = await heldRun(); // stays running until canceled
    const c = await call(s, "POST", `${path}cancel/`, { token: exec });
    expect(c.status).toBe(200);
    expect(c.json.status).toBe("canceled");
    expect(c.json.error).toBe("Canceled by exec.");
    expect(c.json.steps[0].status).toBe("error");
    const again = await call(s, "POST", `${path}cancel/`, { token: exec });
    expect(again.json).toEqual(errorBody(409, "conflict", "The run is already canceled."));
  });
  test("a cancel that meets the run's own end answers 409 with the final state, never 200 with a state other than canceled", async () => {
    // The race is the test's own: the gate opens as the cancel is sent, so the step's end and the
    // cancel meet in every order over the attempts. Whichever wins, the answer must say so.
    for (let i = 0; i < 24; i++) {
      const { gate, url, path } = await heldRun();
      const delay = (i % 8) / 2; // ms between the gate opening and the cancel, varied over the attempts
      const cancel = Bun.sleep(delay).then(() => call(s, "POST", `${path}cancel/`, { token: exec }));
      gate.open();
      const c = await cancel;
      const final = await waitForRun(s, exec, url);
      if (c.status === 200) {
        expect(c.json.status).toBe("canceled");
        expect(final.status).toBe("canceled");
      } else {
        expect(final.status).toBe("succeeded");
        expect(c.json).toEqual(errorBody(409, "conflict", "The run is already succeeded."));
      }
    }
  });
  test("a queued run is canceled at once (workers busy)", async () => {
    const gate = s.gates.gate();
    const busy = await Promise.all(
      Array.from({ length: s.deps.pool!.capacity }, () =>
        call(s, "POST", runs("hold"), {
          token: exec,
          raw: gate.doc(),
          headers: { ...JSON_CT, prefer: "respond-async" },
        }),
      ),
    );
    // Every worker holds a run (the others wait behind them): the pool has no room.
    await until(() => s.deps.executor.stats().inFlight === s.deps.pool!.capacity, "a full pool");
    // …and marked running (a later commit; on PostgreSQL a round trip later).
    await until(async () => (await s.deps.executor.queueDepth()) === 0, "the queue to empty");
    const queued = await call(s, "POST", runs("schema"), {
      token: exec,
      raw: '{"id":3}',
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    expect(queued.json.status).toBe("queued");
    const c = await call(s, "POST", `${new URL(queued.json.url).pathname}cancel/`, { token: exec });
    expect(c.json.status).toBe("canceled");
    expect(c.json.steps.every((x: { status: string }) => x.status === "skipped")).toBe(true);
    gate.open();
    for (const b of busy) expect((await waitForRun(s, exec, b.json.url)).status).toBe("succeeded");
  });
  test("403 for an executor canceling someone else's run; an author may", async () => {
    const other = (await s.user("exec2", "acme", "executor")).token;
    const r = await call(s, "POST", runs("hold"), {
      token: exec,
      raw: s.gates.gate().doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    const path = `${new URL(r.json.url).pathname}cancel/`;
    expect((await call(s, "POST", path, { token: other })).json).toEqual(
      errorBody(403, "permission_denied", "Only the run's creator or an author can cancel it."),
    );
    expect((await call(s, "POST", path, { token: author })).json.status).toBe("canceled");
  });
});

describe("a run id in upper case", () => {
  test("names the same run on every run endpoint (UUIDs are case-insensitive)", async () => {
    const r = await call(s, "POST", runs("schema"), { token: exec, raw: '{"id":5}', headers: JSON_CT });
    expect(r.status).toBe(201);
    const upper = `/api/v1/orgs/acme/runs/${(r.json.id as string).toUpperCase()}/`;
    const got = await call(s, "GET", upper, { token: exec });
    expect(got.status).toBe(200);
    expect(got.json.id).toBe(r.json.id);
    for (const sub of ["content/", "findings/", "report/"])
      expect((await call(s, "GET", `${upper}${sub}`, { token: exec })).status).toBe(200);
    const content = await call(s, "GET", `${upper}content/`, { token: exec });
    expect(content.headers.get("content-disposition")).toContain(`run-${r.json.id}.json`);
    // Final already: the cancel answers 409 for that run, not a 404.
    const cancel = await call(s, "POST", `${upper}cancel/`, { token: exec });
    expect([cancel.status, cancel.json.code]).toEqual([409, "conflict"]);
  });
});

describe("Idempotency-Key", () => {
  // The document stated only maxLength 255 until 2026-11-29; a key with a space or non-ASCII
  // character that it allowed was a 400.
  test("400 for a key outside 1 to 255 visible ASCII characters, as the document's pattern says", async () => {
    const doc = (await call(s, "GET", "/api/v1/openapi.json")).json;
    const schema = doc.components.parameters.IdempotencyKey.schema;
    expect(schema).toEqual({ type: "string", minLength: 1, maxLength: 255, pattern: "^[!-~]+$" });
    const pattern = new RegExp(schema.pattern, "u");
    for (const key of ["a b", "é", "x".repeat(256), ""]) {
      expect(pattern.test(key) && key.length <= 255).toBe(false);
      const before = await s.count("runs");
      const r = await fetch(`${s.url}${runs("schema")}`, {
        method: "POST",
        headers: { authorization: `Bearer ${exec}`, ...JSON_CT, "idempotency-key": key },
        body: '{"id":1}',
      });
      expect(await r.json()).toEqual(
        errorBody(400, "invalid_request", "Invalid Idempotency-Key.", [
          { field: "Idempotency-Key", code: "invalid", message: "1 to 255 visible ASCII characters." },
        ]),
      );
      expect(await s.count("runs")).toBe(before);
    }
    expect(pattern.test("k-~!1")).toBe(true);
  });
  test("the same key and request replays the first answer with Idempotent-Replayed", async () => {
    const h = { ...JSON_CT, "idempotency-key": "k-1" };
    const a = await call(s, "POST", runs("schema"), { token: exec, raw: '{"id":9}', headers: h });
    const before = await s.count("runs");
    const b = await call(s, "POST", runs("schema"), { token: exec, raw: '{"id":9}', headers: h });
    expect(b.status).toBe(a.status);
    expect(b.json).toEqual(a.json);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(await s.count("runs")).toBe(before);
  });
  test("a multipart retry replays although its boundary is new (a client picks one per send)", async () => {
    // assay validate and every HTTP library build the form again for a retry: a new random
    // boundary in the header and the body. It was a 422 idempotency_key_reused.
    const form = (id: number) => {
      const f = new FormData();
      f.append("file", new Blob([`{"id":${id}}`], { type: "application/json" }), "order.json");
      f.append("metadata", '{"source":"ci"}');
      return f;
    };
    const h = { "idempotency-key": "k-multipart" };
    const a = await call(s, "POST", runs("schema"), { token: exec, raw: form(11), headers: h });
    expect(a.status).toBe(201);
    const before = await s.count("runs");
    const b = await call(s, "POST", runs("schema"), { token: exec, raw: form(11), headers: h });
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.json).toEqual(a.json);
    expect(await s.count("runs")).toBe(before);
    // Another file under the same key is another request.
    const c = await call(s, "POST", runs("schema"), { token: exec, raw: form(12), headers: h });
    expect(c.json).toEqual(
      errorBody(422, "idempotency_key_reused", "This Idempotency-Key was used with a different request."),
    );
  });
  test("a replayed 202 keeps Location and Retry-After", async () => {
    const h = { ...JSON_CT, "idempotency-key": "k-async", prefer: "respond-async" };
    const a = await call(s, "POST", runs("schema"), { token: exec, raw: '{"id":10}', headers: h });
    const b = await call(s, "POST", runs("schema"), { token: exec, raw: '{"id":10}', headers: h });
    expect(b.status).toBe(202);
    expect(b.headers.get("location")).toBe(a.headers.get("location"));
    expect(b.headers.get("retry-after")).toBe("1");
  });
  test("422 idempotency_key_reused for the same key with another body", async () => {
    const h = { ...JSON_CT, "idempotency-key": "k-2" };
    await call(s, "POST", runs("schema"), { token: exec, raw: '{"id":1}', headers: h });
    const r = await call(s, "POST", runs("schema"), { token: exec, raw: '{"id":2}', headers: h });
    expect(r.json).toEqual(
      errorBody(422, "idempotency_key_reused", "This Idempotency-Key was used with a different request."),
    );
  });
  test("409 idempotency_key_in_progress while the first request is still waiting", async () => {
    const h = { ...JSON_CT, "idempotency-key": "k-3", prefer: "wait=60" };
    const gate = s.gates.gate();
    const first = call(s, "POST", runs("hold"), { token: exec, raw: gate.doc(), headers: h });
    await gate.held(); // the first request is waiting for its run, which waits for the gate
    expect(
      await s.row("SELECT 1 AS x FROM idempotency_keys WHERE key = 'k-3' AND state = 'in_progress'"),
    ).not.toBeNull();
    const second = await call(s, "POST", runs("hold"), { token: exec, raw: gate.doc(), headers: h });
    expect(second.json).toEqual(errorBody(409, "idempotency_key_in_progress", expect.any(String)));
    gate.open();
    expect((await first).status).toBe(201);
  });
  test("a key left in progress by a server that died: free at a SQLite restart, after 5 minutes on PostgreSQL", async () => {
    let t = await startTestServer();
    try {
      await createWorkflow(t, t.rootToken, {
        slug: "idem",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "syntax", config: {} }],
      });
      const retry = () =>
        call(t, "POST", "/api/v1/orgs/acme/workflows/idem/runs/", {
          token: t.rootToken,
          raw: '{"id":1}',
          headers: { ...JSON_CT, "idempotency-key": "k-died" },
        });
      expect((await retry()).status).toBe(201);
      // Its key as a request leaves it when its server is killed between the claim and the run's
      // commit (after it, the key links the run: test/runs-restart.test.ts).
      await t.sql(
        "UPDATE idempotency_keys SET state = 'in_progress', status = NULL, headers = NULL, body = NULL, created_at = ? WHERE key = 'k-died'",
        new Date().toISOString(),
      );
      t = await restartTestServer(t);
      const first = await retry();
      // Several PostgreSQL nodes share the keys: one node's start cannot know the key was its own.
      expect(first.status).toBe(onPostgres ? 409 : 201);
      if (onPostgres) {
        await t.sql(
          "UPDATE idempotency_keys SET created_at = ? WHERE key = 'k-died'",
          new Date(Date.now() - 6 * 60_000).toISOString(),
        );
        expect((await retry()).status).toBe(201);
      }
      // Answered now: replayed, as any key.
      const replay = await retry();
      expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    } finally {
      await t.close();
    }
  });
  test("a retry replays the run it started even after the workflow was deactivated; a new request is 409", async () => {
    const wf = {
      slug: "soon-off",
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "syntax", config: {} }],
    };
    await createWorkflow(s, s.rootToken, wf);
    const h = { ...JSON_CT, "idempotency-key": "k-off" };
    const a = await call(s, "POST", runs("soon-off"), { token: exec, raw: '{"id":3}', headers: h });
    expect(a.status).toBe(201);
    const off = await call(s, "PATCH", "/api/v1/orgs/acme/workflows/soon-off/", {
      token: s.rootToken,
      body: { status: "inactive" },
    });
    expect(off.status).toBe(200);
    const b = await call(s, "POST", runs("soon-off"), { token: exec, raw: '{"id":3}', headers: h });
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.json).toEqual(a.json);
    // Another request (another body, or no key) is refused as before.
    const inactive = errorBody(
      409,
      "workflow_inactive",
      "The workflow is inactive; re-enable it to accept runs.",
    );
    expect(
      (await call(s, "POST", runs("soon-off"), { token: exec, raw: '{"id":4}', headers: h })).json,
    ).toEqual(inactive);
    expect(
      (await call(s, "POST", runs("soon-off"), { token: exec, raw: '{"id":3}', headers: JSON_CT })).json,
    ).toEqual(inactive);
  });
  test("a refused request stores no key: the corrected retry goes through", async () => {
    const h = { "idempotency-key": "k-4" };
    const bad = await call(s, "POST", runs("schema"), {
      token: exec,
      raw: "<a/>",
      headers: { ...h, "content-type": "application/xml" },
    });
    expect(bad.status).toBe(400);
    const good = await call(s, "POST", runs("schema"), {
      token: exec,
      raw: '{"id":1}',
      headers: { ...h, ...JSON_CT },
    });
    expect(good.status).toBe(201);
  });
});

describe("a slow upload re-checks its token", () => {
  test("a token revoked while the body arrives: 401, and no run (Prefer: respond-async too)", async () => {
    // The spec: a revoked token's in-flight requests fail with 401. The async run of a token
    // revoked mid-upload was committed (202); a user deleted mid-upload was a 500 at commit.
    const u = await s.user("uploader", "acme", "executor");
    const b = await call(s, "POST", "/api/v1/users/me/tokens/", { token: u.token, body: { name: "slow" } });
    expect(b.status).toBe(201);
    let send!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        send = c;
      },
    });
    send.enqueue(new TextEncoder().encode('{"id": '));
    const before = await s.count("runs");
    const pending = fetch(`${s.url}${runs("schema")}`, {
      method: "POST",
      headers: { authorization: `Bearer ${b.json.token}`, ...JSON_CT, prefer: "respond-async" },
      body,
      duplex: "half",
    } as RequestInit);
    // The request has been authenticated once the token shows a last use (kept in memory).
    for (;;) {
      const list = await call(s, "GET", "/api/v1/users/me/tokens/", { token: u.token });
      if (
        list.json.results.find((t: { id: number; last_used_at: string | null }) => t.id === b.json.id)
          ?.last_used_at
      )
        break;
      await Bun.sleep(5);
    }
    await s.deps.tokenStore.revoke(b.json.id, SYSTEM);
    // Past the re-check's threshold: the body is read for longer than RECHECK_AFTER_MS.
    await Bun.sleep(RECHECK_AFTER_MS + 10);
    send.enqueue(new TextEncoder().encode("1}"));
    send.close();
    const r = await pending;
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual(errorBody(401, "authentication_required", "The token has been revoked."));
    expect(await s.count("runs")).toBe(before);
  });
});

describe("the waiting request re-checks its token", () => {
  test("401 when the token is revoked during the wait (the run still completes)", async () => {
    const u = await s.user("waiter", "acme", "executor");
    const gate = s.gates.gate();
    const pending = call(s, "POST", runs("hold"), {
      token: u.token,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "wait=60" },
    });
    // The run executes from memory and is held: the request is still waiting for it.
    await gate.held();
    await s.deps.tokenStore.revoke(u.tokenId, SYSTEM);
    gate.open();
    const r = await pending;
    expect(r.json).toEqual(errorBody(401, "authentication_required", "The token has been revoked."));
  });

  test("401 when the web session ends during the wait (sign-out), as for a revoked token", async () => {
    const u = await s.user("sessioned", "acme", "executor");
    await s.deps.users.setPassword(u.id, await Bun.password.hash("correct horse battery"), SYSTEM);
    const login = await call(s, "POST", "/api/v1/auth/login/", {
      body: { username: "sessioned", password: "correct horse battery" },
    });
    const cookie = /^assay_session=([^;]*)/.exec(login.headers.get("set-cookie") ?? "")?.[0] ?? "";
    const session = { cookie, "x-csrf-token": login.json.csrf_token as string };
    const gate = s.gates.gate();
    const pending = call(s, "POST", runs("hold"), {
      raw: gate.doc(),
      headers: { ...JSON_CT, ...session, prefer: "wait=60" },
    });
    await gate.held();
    expect((await call(s, "POST", "/api/v1/auth/logout/", { headers: session })).status).toBe(204);
    gate.open();
    const r = await pending;
    expect(r.json).toEqual(errorBody(401, "authentication_required", "The session has ended."));
  });

  test("a web session still valid after the wait gets its 201", async () => {
    const u = await s.user("sessioned2", "acme", "executor");
    await s.deps.users.setPassword(u.id, await Bun.password.hash("correct horse battery"), SYSTEM);
    const login = await call(s, "POST", "/api/v1/auth/login/", {
      body: { username: "sessioned2", password: "correct horse battery" },
    });
    const cookie = /^assay_session=([^;]*)/.exec(login.headers.get("set-cookie") ?? "")?.[0] ?? "";
    const gate = s.gates.gate();
    const pending = call(s, "POST", runs("hold"), {
      raw: gate.doc(),
      headers: { ...JSON_CT, cookie, "x-csrf-token": login.json.csrf_token, prefer: "wait=60" },
    });
    await gate.held();
    gate.open();
    const r = await pending;
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
  });

  test("with an Idempotency-Key, the user's retry with another token replays the run, not a 409", async () => {
    const u = await s.user("waiter2", "acme", "executor");
    const other = await s.deps.tokens.create(u.id, "second", null, SYSTEM);
    const gate = s.gates.gate();
    const h = { ...JSON_CT, prefer: "wait=60", "idempotency-key": "k-revoked" };
    const pending = call(s, "POST", runs("hold"), { token: u.token, raw: gate.doc(), headers: h });
    await gate.held();
    await s.deps.tokenStore.revoke(u.tokenId, SYSTEM);
    gate.open();
    expect((await pending).json).toEqual(
      errorBody(401, "authentication_required", "The token has been revoked."),
    );
    const before = await s.count("runs");
    const retry = await call(s, "POST", runs("hold"), { token: other.token, raw: gate.doc(), headers: h });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json.status).toBe("succeeded");
    expect(await s.count("runs")).toBe(before);
  });
});

describe("reading runs", () => {
  test("list: newest first, filters by workflow, status and created range; 400 on bad filters", async () => {
    const all = await call(s, "GET", "/api/v1/orgs/acme/runs/?page_size=200", { token: exec });
    expect(all.status).toBe(200);
    const times = all.json.results.map((r: { created_at: string }) => r.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const failed = await call(s, "GET", "/api/v1/orgs/acme/runs/?status=failed&workflow=schema", {
      token: exec,
    });
    expect(failed.json.count).toBeGreaterThan(0);
    expect(
      failed.json.results.every(
        (r: { status: string; workflow: { slug: string } }) =>
          r.status === "failed" && r.workflow.slug === "schema",
      ),
    ).toBe(true);
    const future = await call(s, "GET", "/api/v1/orgs/acme/runs/?created_after=2999-01-01T00:00:00Z", {
      token: exec,
    });
    expect(future.json.count).toBe(0);
    const past = await call(s, "GET", "/api/v1/orgs/acme/runs/?created_before=2000-01-01", { token: exec });
    expect(past.json.count).toBe(0);
    // Half-open windows, as on the audit log: created_after is inclusive, created_before
    // exclusive, so consecutive windows neither miss nor repeat a run made on the boundary (it
    // was in neither: both bounds were exclusive).
    const edge = all.json.results[0] as { id: string; created_at: string };
    const ids = async (q: string) =>
      (await call(s, "GET", `/api/v1/orgs/acme/runs/?page_size=200&${q}`, { token: exec })).json.results.map(
        (r: { id: string }) => r.id,
      );
    expect(await ids(`created_after=${edge.created_at}`)).toContain(edge.id);
    expect(await ids(`created_before=${edge.created_at}`)).not.toContain(edge.id);
    // Years past 9999 and before 0 name instants too (ECMAScript writes them "+010000-…", which
    // compared as text sorted before every stored time).
    const total = (await call(s, "GET", "/api/v1/orgs/acme/runs/", { token: exec })).json.count;
    expect(total).toBeGreaterThan(0);
    const at = (q: string) => call(s, "GET", `/api/v1/orgs/acme/runs/?${q}`, { token: exec });
    expect((await at("created_after=%2B010000-01-01T00:00:00Z")).json.count).toBe(0);
    expect((await at("created_before=%2B010000-01-01T00:00:00Z")).json.count).toBe(total);
    expect((await at("created_after=-000001-01-01T00:00:00Z")).json.count).toBe(total);
    expect((await at("created_before=-000001-01-01T00:00:00Z")).json.count).toBe(0);
    const bad = await call(s, "GET", "/api/v1/orgs/acme/runs/?status=done&created_after=yesterday", {
      token: exec,
    });
    expect(bad.json).toEqual(
      errorBody(400, "invalid_request", "Invalid filters.", [
        { field: "status", code: "invalid", message: expect.any(String) },
        { field: "created_after", code: "invalid", message: expect.any(String) },
      ]),
    );
    // Date.parse reads "1" as the year 2001 and "March 7, 2026" in the server's zone: not ISO 8601.
    for (const v of [
      "1",
      "March%207%2C%202026",
      "2026-03-07T10",
      "Sat%2C%2007%20Mar%202026%2010%3A00%3A00%20GMT",
      // Days a month lacks: Date.parse rolled them over into the next month.
      "2026-11-31",
      "2026-02-29",
      "2026-02-30T00:00:00Z",
      "2026-04-31T10:00",
      "2026-01-01T10:60",
      "2026-01-01T10:00:00%2B24:00",
    ]) {
      const r = await at(`created_after=${v}`);
      expect({ v, body: r.json }).toEqual({
        v,
        body: errorBody(400, "invalid_request", "Invalid filters.", [
          {
            field: "created_after",
            code: "invalid",
            message: "created_after must be an ISO 8601 date or date-time.",
          },
        ]),
      });
    }
    for (const v of ["2000-01-01", "2000-01-01T00:00Z", "2000-01-01t00:00:00.123456%2B02:00"])
      expect((await at(`created_after=${v}`)).json.count).toBe(total);
  });
  test("404 for an unknown run id, a malformed id, and another org's run", async () => {
    expect(
      (await call(s, "GET", "/api/v1/orgs/acme/runs/00000000-0000-7000-8000-000000000000/", { token: exec }))
        .json,
    ).toEqual(errorBody(404, "not_found", "Run not found."));
    expect((await call(s, "GET", "/api/v1/orgs/acme/runs/zzz/", { token: exec })).status).toBe(404);
    const other = (await s.user("oscar", "beta", "admin")).token;
    await createWorkflow(
      s,
      other,
      { slug: "b", allowed_file_types: ["JSON"], steps: [{ name: "s", validator: "syntax", config: {} }] },
      "beta",
    );
    const theirs = await call(s, "POST", "/api/v1/orgs/beta/workflows/b/runs/", {
      token: other,
      raw: "{}",
      headers: JSON_CT,
    });
    expect((await call(s, "GET", `/api/v1/orgs/acme/runs/${theirs.json.id}/`, { token: exec })).status).toBe(
      404,
    );
    expect(
      (await call(s, "GET", `/api/v1/orgs/acme/runs/${theirs.json.id}/content/`, { token: exec })).status,
    ).toBe(404);
  });
});

describe("concurrency", () => {
  test("200 concurrent submissions each reach a final status with their own content", async () => {
    const n = 200;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        call(s, "POST", runs("schema"), {
          token: exec,
          raw: JSON.stringify(i % 2 ? { id: i } : { id: `s${i}` }),
          headers: { ...JSON_CT, "x-filename": `doc-${i}.json`, prefer: i % 3 ? "wait=30" : "respond-async" },
        }),
      ),
    );
    const ids = new Set<string>();
    for (const [i, a] of answers.entries()) {
      expect([201, 202]).toContain(a.status);
      ids.add(a.json.id);
      const run = a.status === 201 ? a.json : await waitForRun(s, exec, a.json.url, 60000);
      expect(run.submission.filename).toBe(`doc-${i}.json`);
      expect(run.status).toBe(i % 2 ? "succeeded" : "failed");
      const c = await call(s, "GET", `/api/v1/orgs/acme/runs/${run.id}/content/`, { token: exec });
      expect(c.json).toEqual(i % 2 ? { id: i } : { id: `s${i}` });
    }
    expect(ids.size).toBe(n);
  });
});

describe("findings cap", () => {
  test("max_findings caps a step's findings and summary.truncated says so", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "capped",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "schema",
          validator: "json_schema",
          config: { schema: { type: "array", items: { type: "string" } }, max_findings: 3 },
        },
      ],
    });
    const r = await call(s, "POST", runs("capped"), { token: exec, raw: "[1,2,3,4,5,6]", headers: JSON_CT });
    expect(r.json.steps[0].findings).toHaveLength(3);
    expect(r.json.summary).toEqual(expect.objectContaining({ errors: 3, truncated: true }));
    const ok = await call(s, "POST", runs("capped"), { token: exec, raw: "[1]", headers: JSON_CT });
    expect(ok.json.summary.truncated).toBe(false);
  });
});
