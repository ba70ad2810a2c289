// The sync-run lane (src/http/threads/lane.ts): a run start answered without the framework — by
// the HTTP thread that accepted it, which serves the run itself (thread-runs.ts), or by the main
// thread. Every answer it gives — the 201 and each error the route or its hooks can give such a
// request — must be the one the one-thread server gives, whole: status, body and headers. Which
// requests take it is asserted by the threads' counters (paths "local" and "lane"), never assumed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RUN_ROUTE } from "../src/http/threads/lane.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { type Answer, fresh, headersOf, sample, shape, via } from "./helpers/threads.ts";

let one: TestServer;
let two: TestServer;
const JSON_CT = { "content-type": "application/json" };
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;
const SCHEMA = { type: "object", required: ["id"], properties: { id: { type: "integer" } } };

async function workflow(s: TestServer, slug: string) {
  await createWorkflow(s, s.rootToken, {
    slug,
    allowed_file_types: ["JSON"],
    steps: [{ name: "schema", validator: "json_schema", config: { schema: SCHEMA } }],
  });
}

const runOn = (s: TestServer, wf = "order", token = s.rootToken) =>
  call(s, "POST", runs(wf), fresh({ token, raw: '{"id":1}', headers: JSON_CT }));

/** Until thread 1 has served a run of `wf` itself (its caches hold the workflow). */
const warm = (s: TestServer, wf: string) => via(s, 1, "local", () => runOn(s, wf));

beforeAll(async () => {
  [one, two] = await Promise.all([startTestServer(), startTestServer({ http_threads: 2 })]);
  for (const s of [one, two]) for (const wf of ["order", "later", "gone"]) await workflow(s, wf);
  await warm(two, "order");
});
afterAll(() => Promise.all([one?.close(), two?.close()]));

describe("the lane's 201", () => {
  test("is the one-thread server's answer, committed before it leaves", async () => {
    const ref = await runOn(one);
    const r = await via(two, 1, "local", () => runOn(two));
    expect(r.status).toBe(201);
    expect(headersOf(r)).toEqual(headersOf(ref));
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("location")).toBe(r.json.url);
    expect(Number(r.headers.get("content-length"))).toBe(Buffer.byteLength(r.text));
    expect(shape(r.json)).toEqual(shape(ref.json));
    const back = await call(two, "GET", new URL(r.json.url).pathname, { token: two.rootToken });
    expect(back.status).toBe(200);
    expect(back.json).toEqual(r.json);
  });

  test("counts in the request durations like any request the app answers", async () => {
    const count = async () =>
      sample(
        (await call(two, "GET", "/metrics", { token: two.rootToken })).text,
        "assay_http_request_duration_seconds_count",
        {
          method: "POST",
          route: RUN_ROUTE,
          status: "201",
        },
      );
    const before = await count();
    let sent = 0;
    await via(two, 1, "local", () => {
      sent++;
      return runOn(two);
    });
    expect(await count()).toBe(before + sent);
  });
});

describe("the lane's errors: the whole answer, as the one-thread server gives it", () => {
  const same = async (ref: Answer, r: Answer, status: number, code: string) => {
    expect(ref.status).toBe(status);
    expect(ref.json).toEqual(errorBody(status, code, expect.any(String), expect.any(Array)));
    expect(r.status).toBe(status);
    expect(r.json).toEqual(ref.json);
    expect(headersOf(r)).toEqual(headersOf(ref));
  };

  test("401 for an unknown token", async () => {
    const send = (s: TestServer) => runOn(s, "order", "assay_nope");
    await same(await send(one), await via(two, 1, "local", () => send(two)), 401, "authentication_required");
  });

  test("401 for a token revoked since its last run", async () => {
    const answers: Answer[] = [];
    for (const s of [one, two]) {
      const u = await s.user(`rita${s === one ? 1 : 2}`, "acme", "executor");
      expect((await runOn(s, "order", u.token)).status).toBe(201);
      const d = await call(s, "DELETE", `/api/v1/users/me/tokens/${u.tokenId}/`, { token: u.token });
      expect(d.status).toBe(204);
      answers.push(
        s === one
          ? await runOn(s, "order", u.token)
          : await via(s, 1, "local", () => runOn(s, "order", u.token)),
      );
    }
    await same(answers[0]!, answers[1]!, 401, "authentication_required");
  });

  test("412 for If-Match (a run has no entity tag) or If-None-Match: *, and no run", async () => {
    for (const cond of <Record<string, string>[]>[{ "if-match": '"x"' }, { "if-none-match": "*" }]) {
      const send = (s: TestServer) =>
        call(
          s,
          "POST",
          runs("order"),
          fresh({ token: s.rootToken, raw: '{"id":1}', headers: { ...JSON_CT, ...cond } }),
        );
      const before = await two.count("runs");
      await same(await send(one), await via(two, 1, "local", () => send(two)), 412, "precondition_failed");
      expect(await two.count("runs")).toBe(before);
    }
  });

  test("403 for a viewer", async () => {
    const tokens = [
      (await one.user("vic", "acme", "viewer")).token,
      (await two.user("vic", "acme", "viewer")).token,
    ];
    await same(
      await runOn(one, "order", tokens[0]),
      await via(two, 1, "local", () => runOn(two, "order", tokens[1])),
      403,
      "permission_denied",
    );
  });

  test("409 for a workflow made inactive since the thread checked its last run", async () => {
    await warm(two, "later");
    for (const s of [one, two]) {
      const r = await call(s, "PATCH", "/api/v1/orgs/acme/workflows/later/", {
        token: s.rootToken,
        body: { status: "inactive" },
      });
      expect(r.status).toBe(200);
    }
    const before = await two.count("runs");
    await same(
      await runOn(one, "later"),
      await via(two, 1, "local", () => runOn(two, "later")),
      409,
      "workflow_inactive",
    );
    // With a false If-Match too: the 409 comes first (RFC 9110 §13.2.1), not the 412.
    const withIfMatch = (s: TestServer) =>
      call(
        s,
        "POST",
        runs("later"),
        fresh({ token: s.rootToken, raw: '{"id":1}', headers: { ...JSON_CT, "if-match": '"x"' } }),
      );
    await same(
      await withIfMatch(one),
      await via(two, 1, "local", () => withIfMatch(two)),
      409,
      "workflow_inactive",
    );
    expect(await two.count("runs")).toBe(before);
  });

  test("404 for a workflow deleted since the thread checked its last run", async () => {
    await warm(two, "gone");
    for (const s of [one, two])
      expect(
        (await call(s, "DELETE", "/api/v1/orgs/acme/workflows/gone/", { token: s.rootToken })).status,
      ).toBe(204);
    const before = await two.count("runs");
    await same(
      await runOn(one, "gone"),
      await via(two, 1, "local", () => runOn(two, "gone")),
      404,
      "not_found",
    );
    expect(await two.count("runs")).toBe(before);
  });
});

describe("requests the lane leaves to the app", () => {
  test("a query string (?version=) takes the app's path, with the same answer", async () => {
    const send = (s: TestServer) =>
      call(
        s,
        "POST",
        `${runs("order")}?version=1`,
        fresh({ token: s.rootToken, raw: '{"id":1}', headers: JSON_CT }),
      );
    const ref = await send(one);
    const [lane, local] = [two.threadCounts!.get(1, "lane"), two.threadCounts!.get(1, "local")];
    const r = await via(two, 1, "relay", () => send(two));
    expect(two.threadCounts!.get(1, "lane")).toBe(lane);
    expect(two.threadCounts!.get(1, "local")).toBe(local);
    expect(headersOf(r)).toEqual(headersOf(ref));
    expect(shape(r.json)).toEqual(shape(ref.json));
  });

  test("with CORS on, every run start takes the app's path (its answers depend on Origin)", async () => {
    const cors = await startTestServer({ http_threads: 2, cors_origins: "https://app.example" });
    try {
      await workflow(cors, "order");
      for (let i = 0; i < 3; i++) await via(cors, 1, "relay", () => runOn(cors));
      expect(cors.threadCounts!.get(1, "lane")).toBe(0);
      expect(cors.threadCounts!.get(1, "local")).toBe(0);
      const r = await via(cors, 1, "relay", () =>
        call(
          cors,
          "POST",
          runs("order"),
          fresh({
            token: cors.rootToken,
            raw: '{"id":1}',
            headers: { ...JSON_CT, origin: "https://app.example" },
          }),
        ),
      );
      expect(r.status).toBe(201);
      expect(r.headers.get("access-control-allow-origin")).toBe("https://app.example");
      expect(r.headers.get("vary")).toBe("Origin");
    } finally {
      await cors.close();
    }
  });
});

describe("on the main listener: the lane answers as the framework's path does", () => {
  // The same request twice on one server: on the plain path the lane takes it; with a query
  // string (one the route ignores) the framework does. The answers must be the same, whole.
  let s: TestServer;
  let viewerToken: string;
  beforeAll(async () => {
    s = await startTestServer({
      rate_limit_disabled: false,
      rate_limit_per_minute: 10_000,
      rate_limit_runs_per_minute: 10_000,
      max_payload_bytes: 4096,
    });
    for (const wf of ["order", "off"]) await workflow(s, wf);
    await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
    const off = await call(s, "PATCH", "/api/v1/orgs/acme/workflows/off/", {
      token: s.rootToken,
      body: { status: "inactive" },
    });
    expect(off.status).toBe(200);
    viewerToken = (await s.user("val", "acme", "viewer")).token;
  });
  afterAll(() => s?.close());

  const cases: [string, number, string | null, (q: string) => Promise<Answer>][] = [
    [
      "a run",
      201,
      null,
      (q) => call(s, "POST", runs("order") + q, { token: s.rootToken, raw: '{"id":1}', headers: JSON_CT }),
    ],
    [
      "a failing document",
      201,
      null,
      (q) => call(s, "POST", runs("order") + q, { token: s.rootToken, raw: '{"id":"x"}', headers: JSON_CT }),
    ],
    [
      "an unknown token",
      401,
      "authentication_required",
      (q) => call(s, "POST", runs("order") + q, { token: "assay_nope", raw: '{"id":1}', headers: JSON_CT }),
    ],
    [
      "a viewer",
      403,
      "permission_denied",
      (q) => call(s, "POST", runs("order") + q, { token: viewerToken, raw: '{"id":1}', headers: JSON_CT }),
    ],
    [
      "an unknown workflow",
      404,
      "not_found",
      (q) => call(s, "POST", runs("nope") + q, { token: s.rootToken, raw: '{"id":1}', headers: JSON_CT }),
    ],
    [
      "an inactive workflow",
      409,
      "workflow_inactive",
      (q) => call(s, "POST", runs("off") + q, { token: s.rootToken, raw: '{"id":1}', headers: JSON_CT }),
    ],
    [
      "a file type not allowed",
      400,
      "file_type_unsupported",
      (q) =>
        call(s, "POST", runs("order") + q, {
          token: s.rootToken,
          raw: "<a/>",
          headers: { "content-type": "application/xml" },
        }),
    ],
    [
      "a body over the limit",
      413,
      "payload_too_large",
      (q) =>
        call(s, "POST", runs("order") + q, {
          token: s.rootToken,
          raw: `{"id":1,"p":"${"x".repeat(5000)}"}`,
          headers: JSON_CT,
        }),
    ],
    [
      "a bad Idempotency-Key",
      400,
      "invalid_request",
      (q) =>
        call(s, "POST", runs("order") + q, {
          token: s.rootToken,
          raw: '{"id":1}',
          headers: { ...JSON_CT, "idempotency-key": "a b" },
        }),
    ],
  ];
  for (const [name, status, code, send] of cases)
    test(`${status}: ${name}`, async () => {
      const viaFramework = await send("?via=framework");
      const viaLane = await send("");
      expect(viaFramework.status).toBe(status);
      expect(viaLane.status).toBe(status);
      const drop = ["ratelimit", "retry-after"];
      expect(headersOf(viaLane, drop)).toEqual(headersOf(viaFramework, drop));
      if (code) {
        expect(viaFramework.json).toEqual(errorBody(status, code, expect.any(String), expect.any(Array)));
        expect(viaLane.json).toEqual(viaFramework.json);
      } else expect(shape(viaLane.json)).toEqual(shape(viaFramework.json));
    });

  test("202: respond-async, the run held by the test until both answers are in", async () => {
    const gate = s.gates.gate("async");
    const send = (q: string) =>
      call(s, "POST", runs("hold") + q, {
        token: s.rootToken,
        raw: gate.doc(),
        headers: { ...JSON_CT, prefer: "respond-async" },
      });
    try {
      const viaFramework = await send("?via=framework");
      const viaLane = await send("");
      for (const r of [viaFramework, viaLane]) {
        expect(r.status).toBe(202);
        expect(["queued", "running"]).toContain(r.json.status);
      }
      expect(headersOf(viaLane, ["ratelimit"])).toEqual(headersOf(viaFramework, ["ratelimit"]));
      // Queued or already running, whichever the worker reached first: the rest is the same.
      const settled = (j: Record<string, unknown>) => ({
        ...(shape(j) as object),
        status: 0,
        started_at: 0,
        steps: 0,
      });
      expect(settled(viaLane.json)).toEqual(settled(viaFramework.json));
    } finally {
      gate.open();
    }
  });

  test("an idempotent replay: the lane's first answer is replayed whole, with the framework's headers", async () => {
    const send = (q: string, key: string) =>
      call(s, "POST", runs("order") + q, {
        token: s.rootToken,
        raw: '{"id":7}',
        headers: { ...JSON_CT, "idempotency-key": key },
      });
    const first = await send("", "k-lane-1");
    const again = await send("", "k-lane-1");
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    // The security headers and no-store on a replay too, as the framework's replay has them.
    await send("?via=framework", "k-lane-2");
    const framework = await send("?via=framework", "k-lane-2");
    expect(framework.headers.get("idempotent-replayed")).toBe("true");
    const drop = ["ratelimit", "ratelimit-policy"];
    expect(headersOf(again, drop)).toEqual(headersOf(framework, drop));
    expect(headersOf(again, drop)).toEqual({ ...headersOf(first, drop), "idempotent-replayed": "true" });
    expect(again.headers.get("x-content-type-options")).toBe("nosniff");
    expect(again.headers.get("cache-control")).toBe("no-store");
  });
});
