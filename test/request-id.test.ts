// X-Request-Id on every answer and the access log (src/http/request-log.ts, docs/deploy.md "Logs"):
// the framework's routes, its 404 and 405, errors, the web app, and sync runs answered by the
// lane; a client's own id kept when it is a plain token; the access log's line per answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { expectNoHost, rawRequest } from "./helpers/raw-http.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const DOC = JSON.stringify({ id: 1 });

/**
 * Lines the server writes to stderr while `fn` runs (the in-process server's own log). The access
 * log's line is written after the answer went out: `fn` waits for what it expects with `lines`.
 */
async function logged(
  fn: (lines: () => Record<string, unknown>[]) => Promise<void>,
): Promise<Record<string, unknown>[]> {
  const chunks: string[] = [];
  const lines = () =>
    chunks
      .join("")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    await fn(lines);
  } finally {
    process.stderr.write = write;
  }
  return lines();
}

describe.each([false, true])("request ids (access log %p)", (accessLog) => {
  let s: TestServer;
  const run = (headers: Record<string, string> = {}) =>
    fetch(`${s.url}/api/v1/orgs/acme/workflows/ids/runs/`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.rootToken}`, "content-type": "application/json", ...headers },
      body: DOC,
    });

  beforeAll(async () => {
    s = await startTestServer(accessLog ? { access_log: true, log_level: "info" } : {});
    await createWorkflow(s, s.rootToken, {
      slug: "ids",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
  });
  afterAll(() => s.close());

  test("every kind of answer carries its own id", async () => {
    const auth = { authorization: `Bearer ${s.rootToken}` };
    const answers = [
      await fetch(`${s.url}/healthz`),
      await fetch(`${s.url}/api/v1/orgs/acme/workflows/`, { headers: auth }),
      await fetch(`${s.url}/api/v1/orgs/acme/workflows/`), // 401
      await fetch(`${s.url}/api/v1/nothing-here/`, { headers: auth }), // 404
      await fetch(`${s.url}/healthz`, { method: "DELETE" }), // 405
      await fetch(`${s.url}/`), // the web app
      await run(), // 201 from the sync-run lane
      await run({ "content-type": "text/csv" }), // an error from the lane: CSV not allowed
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 401, 404, 405, 200, 201, 400]);
    const ids = answers.map((r) => r.headers.get("x-request-id") ?? "");
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("a plain id the client sends is kept; anything else is replaced", async () => {
    const tagged = await run({ "x-request-id": "ci-build-42.step:3" });
    expect(tagged.status).toBe(201);
    expect(tagged.headers.get("x-request-id")).toBe("ci-build-42.step:3");
    const get = await fetch(`${s.url}/healthz`, { headers: { "x-request-id": "proxy/abc+def=@x_y" } });
    expect(get.headers.get("x-request-id")).toBe("proxy/abc+def=@x_y");
    for (const bad of ["has space", "a".repeat(129), 'quote"d', "é"]) {
      const r = await fetch(`${s.url}/healthz`, { headers: { "x-request-id": bad } });
      expect(r.headers.get("x-request-id")).toMatch(UUID);
    }
  });

  test("a request without a usable Host gets its 400 with its id too", async () => {
    const port = Number(new URL(s.url).port);
    const own = await rawRequest(port, "GET /healthz HTTP/1.0\r\nX-Request-Id: no-host-1\r\n\r\n");
    expectNoHost(own);
    expect(own.headers["x-request-id"]).toBe("no-host-1");
    const made = await rawRequest(port, "GET /healthz HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n");
    expectNoHost(made);
    expect(made.headers["x-request-id"]).toMatch(UUID);
  });

  test("an idempotent replay carries the id of the request that got it, not the first one's", async () => {
    const first = await run({ "idempotency-key": "req-id-replay" });
    const again = await run({ "idempotency-key": "req-id-replay" });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("x-request-id")).toMatch(UUID);
    expect(again.headers.get("x-request-id")).toMatch(UUID);
    expect(again.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
  });

  test(`the access log writes ${accessLog ? "one line per answer" : "nothing"}`, async () => {
    let ids: string[] = [];
    const lines = await logged(async (sofar) => {
      const a = await run({ "x-forwarded-for": "203.0.113.9" });
      const b = await fetch(`${s.url}/api/v1/orgs/acme/workflows/?limit=1&secret=q`, {
        headers: { authorization: `Bearer ${s.rootToken}` },
      });
      const c = await fetch(`${s.url}/api/v1/nothing-here/`);
      await Promise.all([a.text(), b.text(), c.text()]);
      ids = [a, b, c].map((r) => r.headers.get("x-request-id") ?? "");
      // With the log off, a fourth request's line would show up after these three's too.
      const d = await fetch(`${s.url}/healthz`);
      const last = d.headers.get("x-request-id");
      if (accessLog) await until(() => sofar().some((l) => l.request_id === last), "the last request's line");
    });
    const requests = lines.filter((l) => l.msg === "request" && ids.includes(l.request_id as string));
    if (!accessLog) return void expect(requests).toEqual([]);
    const byId = (id: string) => requests.find((l) => l.request_id === id);
    const shape = (l: Record<string, unknown> | undefined) => {
      const { time, duration_ms, ...rest } = l ?? {};
      expect(typeof time).toBe("string");
      expect(typeof duration_ms).toBe("number");
      return rest;
    };
    expect(requests).toHaveLength(3);
    expect(shape(byId(ids[0]!))).toEqual({
      level: "info",
      msg: "request",
      request_id: ids[0],
      method: "POST",
      path: "/api/v1/orgs/acme/workflows/ids/runs/",
      route: "/api/v1/orgs/:org_slug/workflows/:workflow/runs/",
      status: 201,
      client: "127.0.0.1", // X-Forwarded-For is not trusted unless ASSAY_TRUST_PROXY
    });
    expect(shape(byId(ids[1]!))).toEqual({
      level: "info",
      msg: "request",
      request_id: ids[1],
      method: "GET",
      path: "/api/v1/orgs/acme/workflows/", // never the query
      route: "/api/v1/orgs/:org_slug/workflows/",
      status: 200,
      client: "127.0.0.1",
    });
    expect(shape(byId(ids[2]!))).toMatchObject({
      path: "/api/v1/nothing-here/",
      route: "unmatched",
      status: 404,
    });
  });
});

/** A run start whose client sends part of its declared body and closes the connection. */
function goneMidBody(port: number, token: string, id: string): Promise<void> {
  return new Promise((resolve) => {
    const sock = connect(port, "127.0.0.1");
    sock.on("error", () => {});
    sock.on("close", () => resolve());
    sock.on("connect", () =>
      sock.end(
        "POST /api/v1/orgs/acme/workflows/gone/runs/ HTTP/1.1\r\nHost: x\r\n" +
          `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 900\r\n` +
          `X-Request-Id: ${id}\r\n\r\n{"a":1`,
      ),
    );
  });
}

describe.each([1, 2])("a run start whose client goes away mid-body (%i HTTP thread(s))", (threads) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      access_log: true,
      log_level: "info",
      ...(threads > 1 ? { http_threads: 2 } : {}),
    });
    await createWorkflow(s, s.rootToken, {
      slug: "gone",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
  });
  afterAll(() => s.close());

  test("is the 400 of an incomplete body in the access log, with its client, and no error line", async () => {
    const port = Number(new URL(s.url).port);
    const ids = ["gone-0", "gone-1", "gone-2", "gone-3"];
    const lines = await logged(async (sofar) => {
      for (const id of ids) {
        await goneMidBody(port, s.rootToken, id);
        await until(() => sofar().some((l) => l.msg === "request" && l.request_id === id), `${id}'s line`);
      }
    });
    const mine = lines.filter((l) => ids.includes(l.request_id as string));
    expect(mine.filter((l) => l.msg !== "request")).toEqual([]);
    for (const id of ids)
      expect(mine.find((l) => l.request_id === id)).toMatchObject({
        level: "info",
        msg: "request",
        method: "POST",
        route: "/api/v1/orgs/:org_slug/workflows/:workflow/runs/",
        status: 400,
        client: "127.0.0.1",
      });
  });
});
