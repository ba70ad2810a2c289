// Every JSON answer says `Content-Type: application/json`, nothing more (CONTRACT §5; RFC 8259 §11
// defines no charset parameter): successes, every error family, the framework's 404 and 405, the
// sync-run lane and the framework's path for a run start, and an HTTP thread's own answers and the
// ones it relays. Until 2026-11-29 successes said `application/json;charset=utf-8` and errors
// `application/json`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { type TestServer, call } from "./helpers/server.ts";
import { startTestServer } from "./helpers/server.ts";
import { type Answer, fresh, via } from "./helpers/threads.ts";

let one: TestServer;
let two: TestServer;
const A = "/api/v1/orgs/acme";
const RUNS = `${A}/workflows/wf/runs/`;

async function seed(s: TestServer) {
  await createWorkflow(s, s.rootToken, {
    slug: "wf",
    allowed_file_types: ["JSON"],
    // A step the inline lane runs, so that an HTTP thread serves the run itself (thread-runs.ts).
    steps: [{ name: "schema", validator: "json_schema", config: { schema: { type: "object" } } }],
  });
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
}

beforeAll(async () => {
  [one, two] = await Promise.all([
    startTestServer({
      max_payload_bytes: 4096,
      rate_limit_disabled: false,
      rate_limit_user_runs_per_minute: 5,
    }),
    startTestServer({ http_threads: 2 }),
  ]);
  await Promise.all([seed(one), seed(two)]);
});
afterAll(() => Promise.all([one?.close(), two?.close()]));

/** The status and Content-Type of each answer, with its label: one list compared at once. */
const seen: [string, number, string | null][] = [];
const note = (label: string, r: Answer) => {
  seen.push([label, r.status, r.headers.get("content-type")]);
  return r;
};

describe("one JSON media type", () => {
  test("successes, errors, the lane and the framework's path on one thread", async () => {
    const s = one;
    const t = { token: s.rootToken };
    note("list", await call(s, "GET", "/api/v1/orgs/", t));
    note("detail", await call(s, "GET", `${A}/`, t));
    note("healthz", await call(s, "GET", "/healthz"));
    note("readyz", await call(s, "GET", "/readyz"));
    note("openapi", await call(s, "GET", "/api/v1/openapi.json"));
    note("setup status (web app)", await call(s, "GET", "/api/v1/setup/"));
    note("me", await call(s, "GET", "/api/v1/users/me/", t));
    note("validators", await call(s, "GET", "/api/v1/validators/", t));
    note("created", await call(s, "POST", "/api/v1/users/me/tokens/", { ...t, body: { name: "n" } }));
    const run = note("run, lane", await call(s, "POST", RUNS, { ...t, body: { content: { a: 1 } } }));
    note("run, framework", await call(s, "POST", `${RUNS}?version=1`, { ...t, body: { content: { a: 1 } } }));
    const path = new URL(run.json.url).pathname;
    note("run detail", await call(s, "GET", path, t));
    note("findings", await call(s, "GET", `${path}findings/`, t));
    note("report", await call(s, "GET", `${path}report/?format=json`, t));
    const held = await call(s, "POST", `${A}/workflows/${HOLD_WORKFLOW.slug}/runs/`, {
      ...t,
      body: { content: { a: 1 } },
      headers: { prefer: "respond-async" },
    });
    note("202, lane", held);
    note("running run", await call(s, "GET", new URL(held.json.url).pathname, t));
    s.gates.openAll();
    // Errors: each family.
    note("400 body", await call(s, "PATCH", `${A}/`, { ...t, body: { name: 7 } }));
    note(
      "400 run",
      await call(s, "POST", RUNS, { ...t, raw: "{", headers: { "content-type": "application/json" } }),
    );
    note("401", await call(s, "GET", "/api/v1/orgs/", { token: "assay_nope" }));
    note("401 lane", await call(s, "POST", RUNS, { token: "assay_nope", body: { content: {} } }));
    note(
      "403",
      await call(s, "PATCH", `${A}/`, { token: (await s.user("v", "acme", "viewer")).token, body: {} }),
    );
    note("404 route", await call(s, "GET", `${A}/webhooks/999/`, t));
    note("404 lane", await call(s, "POST", `${A}/workflows/nope/runs/`, { ...t, body: { content: {} } }));
    note("404 unknown path", await call(s, "GET", "/api/v1/nope/"));
    note("405", await call(s, "DELETE", "/api/v1/orgs/", t));
    note("409", await call(s, "DELETE", `${A}/members/root/`, t));
    note("412", await call(s, "DELETE", `${A}/`, { ...t, headers: { "if-match": '"x"' } }));
    note(
      "413",
      await call(s, "POST", RUNS, { ...t, raw: "x".repeat(5000), headers: { "content-type": "text/plain" } }),
    );
    note(
      "415",
      await call(s, "PATCH", `${A}/`, { ...t, raw: "x", headers: { "content-type": "text/plain" } }),
    );
    const limited = (await s.user("busy", "acme", "executor")).token;
    let r: Answer;
    do r = await call(s, "POST", RUNS, { token: limited, body: { content: {} } });
    while (r.status === 201 && seen.length < 200);
    note("429 lane", r);
    note(
      "web sign-in 401",
      await call(s, "POST", "/api/v1/auth/login/", { body: { username: "x", password: "y" } }),
    );
    const statuses = new Set(seen.map(([, status]) => status));
    for (const status of [200, 201, 202, 400, 401, 403, 404, 405, 409, 412, 413, 415, 429])
      expect([status, statuses.has(status)]).toEqual([status, true]);
    expect(seen.filter(([, , ct]) => ct !== "application/json")).toEqual([]);
  });

  test("HTTP threads: a thread's own run start and error, and the answers it relays", async () => {
    const s = two;
    const start = (token = s.rootToken, wf = "wf") =>
      call(
        s,
        "POST",
        `${A}/workflows/${wf}/runs/`,
        fresh({ token, raw: '{"a":1}', headers: { "content-type": "application/json" } }),
      );
    const answers: [string, Answer][] = [
      ["thread's run", await via(s, 1, "local", () => start())],
      ["thread's 404", await via(s, 1, "local", () => start(s.rootToken, "nope"))],
      ["thread's 401", await via(s, 1, "local", () => start("assay_nope"))],
      [
        "relayed list",
        await via(s, 1, "relay", () => call(s, "GET", "/api/v1/orgs/", fresh({ token: s.rootToken }))),
      ],
      ["relayed 404", await via(s, 1, "relay", () => call(s, "GET", "/api/v1/nope/", fresh()))],
      [
        "relayed 412",
        await via(s, 1, "relay", () =>
          call(s, "DELETE", `${A}/`, fresh({ token: s.rootToken, headers: { "if-match": '"x"' } })),
        ),
      ],
    ];
    expect(answers.map(([label, r]) => [label, r.status, r.headers.get("content-type")])).toEqual([
      ["thread's run", 201, "application/json"],
      ["thread's 404", 404, "application/json"],
      ["thread's 401", 401, "application/json"],
      ["relayed list", 200, "application/json"],
      ["relayed 404", 404, "application/json"],
      ["relayed 412", 412, "application/json"],
    ]);
  });
});
