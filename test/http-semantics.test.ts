// HTTP semantics found missing in the 2026-11-29 audit of every route (RFC 9110, Fetch), on real
// servers: a 202's Location, If-None-Match on the web app's files, Vary with CORS, a query
// parameter given twice, empty filter values.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { until } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.ts";

const APP = "https://app.example.com";
let s: TestServer;
let listed: TestServer;
let rx: Receiver;
beforeAll(async () => {
  rx = startReceiver();
  [s, listed] = await Promise.all([
    startTestServer({ webhook_allow_private: true }),
    startTestServer({ cors_origins: APP }),
  ]);
});
afterAll(async () => {
  await Promise.all([s.close(), listed.close()]);
  await rx.stop();
});

describe("202 Location (RFC 9110 §15.3.3: a 202 points at its status monitor)", () => {
  test("a ping and a redelivery answer Location: the delivery, which GET follows", async () => {
    const hooks = "/api/v1/orgs/acme/webhooks/";
    const hook = await call(s, "POST", hooks, { token: s.rootToken, body: { url: `${rx.url}/h` } });
    expect(hook.status).toBe(201);
    const ping = await call(s, "POST", `${hooks}${hook.json.id}/ping/`, { token: s.rootToken });
    expect(ping.status).toBe(202);
    const at = `${s.url}${hooks}${hook.json.id}/deliveries/${ping.json.id}/`;
    expect(ping.headers.get("location")).toBe(at);
    const read = () => call(s, "GET", at.slice(s.url.length), { token: s.rootToken });
    await until(async () => (await read()).json.status === "succeeded", "the ping delivered");
    expect((await read()).json.id).toBe(ping.json.id);
    const again = await call(s, "POST", `${at.slice(s.url.length)}redeliver/`, { token: s.rootToken });
    expect(again.status).toBe(202);
    expect(again.headers.get("location")).toBe(at);
    const doc = (await call(s, "GET", "/api/v1/openapi.json")).json;
    for (const p of ["/{id}/ping/", "/{id}/deliveries/{delivery_id}/redeliver/"])
      expect(
        doc.paths[`/api/v1/orgs/{org_slug}/webhooks${p}`].post.responses["202"].headers.Location,
      ).toEqual({
        $ref: "#/components/headers/Location",
      });
  });
});

describe("If-None-Match on the web app's files and the API docs page (RFC 9110 §13.1.2)", () => {
  test("304 for the tag weakened (W/), in a list, or *; 200 for another tag or a malformed one", async () => {
    for (const path of ["/", "/api/docs"]) {
      const first = await fetch(s.url + path, { headers: { "accept-encoding": "identity" } });
      const etag = first.headers.get("etag")!;
      expect(etag).toMatch(/^"[^"]+"$/);
      const status = async (inm: string) =>
        (await fetch(s.url + path, { headers: { "accept-encoding": "identity", "if-none-match": inm } }))
          .status;
      for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, `W/"other", W/${etag}`, "*"])
        expect([path, inm, await status(inm)]).toEqual([path, inm, 304]);
      for (const inm of ['"other"', etag.slice(1, -1), `${etag} ${etag}`])
        expect([path, inm, await status(inm)]).toEqual([path, inm, 200]);
    }
  });
});

describe("Vary with CORS (Fetch §3.2.6)", () => {
  test("a listed origin's answer of the web app's files varies on Origin as well as Accept-Encoding", async () => {
    const vary = (h: Headers) => (h.get("vary") ?? "").split(",").map((v) => v.trim().toLowerCase());
    for (const path of ["/", "/app/runs", "/api/docs"]) {
      const r = await fetch(listed.url + path, { headers: { origin: APP } });
      expect(r.status).toBe(200);
      expect(r.headers.get("access-control-allow-origin")).toBe(APP);
      expect(vary(r.headers).sort()).toEqual(["accept-encoding", "origin"]);
      const etag = r.headers.get("etag")!;
      const again = await fetch(listed.url + path, { headers: { origin: APP, "if-none-match": etag } });
      expect(again.status).toBe(304);
      expect(vary(again.headers).sort()).toEqual(["accept-encoding", "origin"]);
      const other = await fetch(listed.url + path); // no Origin: the answer a cache must keep apart
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
      expect(vary(other.headers).sort()).toEqual(["accept-encoding", "origin"]);
    }
  });
});

describe("query parameters", () => {
  const duplicate = (...fields: string[]) =>
    errorBody(
      400,
      "invalid_request",
      "A query parameter is given more than once.",
      fields.map((field) => ({
        field,
        code: "duplicate",
        message: `${field} is given more than once; send it once.`,
      })),
    );

  test("400 duplicate for a declared parameter given twice (the last one was used silently)", async () => {
    for (const q of [
      "/api/v1/orgs/acme/runs/?status=failed&status=succeeded",
      "/api/v1/orgs/acme/workflows/?page=1&page=2",
      "/api/v1/orgs/acme/audit/?page_size=10&actor=root&page_size=20",
    ]) {
      const r = await call(s, "GET", q, { token: s.rootToken });
      expect([q, r.status]).toEqual([q, 400]);
      expect(r.json).toEqual(
        duplicate(q.includes("status") ? "status" : q.includes("page=") ? "page" : "page_size"),
      );
      expect(r.headers.get("content-type")).toBe("application/json");
    }
    const both = await call(s, "GET", "/api/v1/orgs/acme/runs/?page=1&status=failed&page=1&status=failed", {
      token: s.rootToken,
    });
    expect(both.json).toEqual(duplicate("page", "status"));
    const head = await fetch(`${s.url}/api/v1/validators/?page=1&page=1`, {
      method: "HEAD",
      headers: { authorization: `Bearer ${s.rootToken}` },
    });
    expect(head.status).toBe(400);
  });

  test("an unknown parameter is ignored, given twice too; access is checked first", async () => {
    const r = await call(s, "GET", "/api/v1/orgs/acme/workflows/?x=1&x=2&page=1", { token: s.rootToken });
    expect(r.status).toBe(200);
    const anon = await call(s, "GET", "/api/v1/orgs/acme/runs/?status=failed&status=failed");
    expect(anon.status).toBe(401);
  });

  test("400 for an empty workflow filter on the runs list and an empty org on the admin audit log", async () => {
    const runs = await call(s, "GET", "/api/v1/orgs/acme/runs/?workflow=", { token: s.rootToken });
    expect(runs.status).toBe(400);
    expect(runs.json).toEqual(
      errorBody(400, "invalid_request", "Invalid filters.", [
        { field: "workflow", code: "invalid", message: "workflow is a workflow's slug or id." },
      ]),
    );
    const audit = await call(s, "GET", "/api/v1/admin/audit/?org=", { token: s.rootToken });
    expect(audit.status).toBe(400);
    expect(audit.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for org.", [
        { field: "org", code: "invalid", message: "org is an organization's slug." },
      ]),
    );
  });
});
