// The `webhooks` map of the OpenAPI document says what Assay really sends: a real server delivers
// every event type to a real receiver, and each delivery's body, Content-Type and headers are
// checked with Ajv against the entry of the document that very server serves
// (test/helpers/model-fuzz/schema-check.ts, the checker the model-based test reads answers with).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EVENTS } from "../src/webhooks/model.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { webhookChecker } from "./helpers/model-fuzz/schema-check.ts";
import { type TestServer, call, restartTestServer, startTestServer } from "./helpers/server.ts";
import {
  type Receiver,
  type Received,
  startReceiver,
  verifyStandardWebhook,
} from "./helpers/webhook-receiver.ts";

const JSON_CT = { "content-type": "application/json" };
/** What the HTTP client adds to any request (Bun's fetch): not Assay's to document. */
const TRANSPORT = ["accept", "connection", "content-length", "host"];
const RUN_EVENTS = EVENTS.filter((e) => e !== "ping");

let s: TestServer;
let rx: Receiver;
beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true, max_attempts: 2 });
  rx = startReceiver();
});
afterAll(async () => {
  await rx.stop();
  await s.close();
});

const served = async (server: TestServer) => (await fetch(`${server.url}/api/v1/openapi.json`)).json();

/** Every delivery fits its event's entry, and sends no header the entry does not name. */
function expectDocumented(check: ReturnType<typeof webhookChecker>, got: Received[]) {
  for (const g of got) {
    const { problems, undocumented } = check(g.json.type, g.headers, g.body);
    expect({ event: g.json.type, problems, undocumented }).toEqual({
      event: g.json.type,
      problems: [],
      undocumented: TRANSPORT,
    });
  }
}

describe("the webhooks map", () => {
  test("holds one post per event a webhook can be sent, with the run as the Run component", async () => {
    const doc = await served(s);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENTS].sort());
    for (const event of EVENTS) expect(Object.keys(doc.webhooks[event])).toEqual(["post"]);
    const run =
      doc.webhooks["run.failed"].post.requestBody.content["application/json"].schema.properties.data
        .properties.run;
    expect(run.anyOf[0].allOf[0]).toEqual({ $ref: "#/components/schemas/Run" });
  });

  test("each event as delivered fits its entry: succeeded, failed, canceled, ping, a ping after a rotation", async () => {
    const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: `${rx.url}/hook`, events: RUN_EVENTS },
    });
    expect(hook.status).toBe(201);
    const path = `/api/v1/orgs/acme/webhooks/${hook.json.id}/`;
    for (const [slug, validator] of [
      ["orders", "syntax"],
      ["held", "test_hold"],
    ])
      await createWorkflow(s, s.rootToken, {
        slug,
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator, config: {} }],
      });
    const run = (wf: string, doc: string, headers = {}) =>
      call(s, "POST", `/api/v1/orgs/acme/workflows/${wf}/runs/`, {
        token: s.rootToken,
        raw: doc,
        headers: { ...JSON_CT, ...headers },
      });
    expect((await run("orders", '{"a": 1}')).json.status).toBe("succeeded");
    expect((await run("orders", '{"a": ')).json.status).toBe("failed");
    const gate = s.gates.gate();
    const held = await run("held", gate.doc(), { prefer: "respond-async" });
    expect(held.status).toBe(202);
    await gate.held();
    const canceled = await call(s, "POST", `/api/v1/orgs/acme/runs/${held.json.id}/cancel/`, {
      token: s.rootToken,
    });
    expect(canceled.json.status).toBe("canceled");
    expect((await call(s, "POST", `${path}ping/`, { token: s.rootToken })).status).toBe(202);
    // 2 + 2 + 1 + the ping, then a ping signed twice (the old secret signs for 24 h).
    await rx.waitFor((x) => x.length === 6);
    const rotated = await call(s, "POST", `${path}rotate-secret/`, { token: s.rootToken });
    expect(rotated.status).toBe(200);
    expect((await call(s, "POST", `${path}ping/`, { token: s.rootToken })).status).toBe(202);
    const got = await rx.waitFor((x) => x.length === 7);
    expect(
      got.map((g) => `${g.json.type} ${(g.json.data.run as { status?: string })?.status ?? ""}`).sort(),
    ).toEqual([
      "ping ",
      "ping ",
      "run.completed canceled",
      "run.completed failed",
      "run.completed succeeded",
      "run.failed failed",
      "run.succeeded succeeded",
    ]);
    expect(got[6]!.headers.get("webhook-signature")!.split(" ")).toHaveLength(2);
    expect(verifyStandardWebhook(rotated.json.secret, got[6]!.headers, got[6]!.body)).toBe(true);
    expectDocumented(webhookChecker(await served(s)), got);
  });

  test("run.error, from a run given up after interruptions, fits its entry", async () => {
    const before = rx.received.length;
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
      token: s.rootToken,
      raw: "{}",
      headers: JSON_CT,
    });
    expect(r.json.status).toBe("succeeded");
    await rx.waitFor((x) => x.length === before + 2);
    // What two crashes in the middle of this run would have left behind (test/durability.test.ts).
    await s.sql(
      "UPDATE runs SET status = 'running', attempts = 2, finished_at = NULL WHERE id = ?",
      r.json.id,
    );
    s = await restartTestServer(s, { webhook_allow_private: true, max_attempts: 2 });
    const errored = (x: Received[]) =>
      x.filter((g) => (g.json.data.run as { status?: string } | null)?.status === "error");
    const got = await rx.waitFor((x) => errored(x).length >= 2);
    expect(
      errored(got)
        .map((g) => g.json.type)
        .sort(),
    ).toEqual(["run.completed", "run.error"]);
    expectDocumented(webhookChecker(await served(s)), got.slice(before));
  });
});
