// Every answer to a HEAD carries Date, as GET's does (RFC 9110 §6.6.1: an origin server with a
// clock MUST send Date in every 2xx, 3xx and 4xx answer; §9.3.2: HEAD sends GET's header fields).
// Bun 1.4.5 adds Date to every answer except a HEAD's that says a Content-Length or is chunked:
// until 2026-11-29 every HEAD of the API, the web app and the docs (200, 404, 405 alike) went
// out without one. Read from the socket, on the main listener and on an HTTP thread's relay.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { rawRequest } from "./helpers/raw-http.ts";
import { via } from "./helpers/threads.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let threaded: TestServer;
const A = "/api/v1/orgs/acme";
const paths: string[] = [];
// IMF-fixdate (RFC 9110 §5.6.7), the only form a sender may generate.
const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

beforeAll(async () => {
  [s, threaded] = await Promise.all([startTestServer(), startTestServer({ http_threads: 2 })]);
  await createWorkflow(s, s.rootToken, {
    slug: "wf",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  const small = await call(s, "POST", `${A}/workflows/wf/runs/`, {
    token: s.rootToken,
    body: { content: { a: 1 } },
  });
  // Over 1 MiB: stored in slices and sent chunked (docs/api.md, "HEAD").
  const large = await call(s, "POST", `${A}/workflows/wf/runs/`, {
    token: s.rootToken,
    raw: JSON.stringify({ a: "x".repeat(1_200_000) }),
    headers: { "content-type": "application/json" },
  });
  expect([small.status, large.status]).toEqual([201, 201]);
  const html = await (await fetch(`${s.url}/`)).text();
  paths.push(
    `${A}/`,
    `${A}/runs/`,
    `${A}/runs/${small.json.id}/`,
    `${A}/runs/${small.json.id}/content/`,
    `${A}/runs/${large.json.id}/content/`,
    `${A}/runs/${small.json.id}/report/?format=html`,
    "/healthz",
    "/api/v1/openapi.json",
    "/api/docs",
    "/",
    /\/assets\/[^"]+\.js/.exec(html)![0],
    `${A}/runs/nope/`, // 404
    "/api/v1/nothing-here/", // 404, no route
    `${A}/workflows/wf/runs/`, // 405: POST only
  );
});
afterAll(() => Promise.all([s?.close(), threaded?.close()]));

const ask = (server: TestServer, method: string, path: string) => {
  const port = Number(new URL(server.url).port);
  return rawRequest(
    port,
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${server.rootToken}\r\nConnection: close\r\n\r\n`,
  );
};

test("HEAD carries Date wherever GET does: 200, chunked, 404, 405", async () => {
  const seen: Record<string, [number, boolean, number, boolean]> = {};
  for (const p of paths) {
    const [get, head] = [await ask(s, "GET", p), await ask(s, "HEAD", p)];
    seen[p] = [
      get.status,
      IMF_FIXDATE.test(get.headers.date ?? ""),
      head.status,
      IMF_FIXDATE.test(head.headers.date ?? ""),
    ];
    expect(head.body).toBe("");
  }
  const status = (p: string) =>
    p.endsWith("/nope/") || p.includes("nothing-here") ? 404 : p.endsWith("/wf/runs/") ? 405 : 200;
  expect(seen).toEqual(
    Object.fromEntries(paths.map((p) => [p, [status(p), true, status(p), true] as const])),
  );
});

test("a HEAD without a Host: its JSON 400 carries Date too (src/http/fallback.ts)", async () => {
  for (const server of [s, threaded]) {
    const r = await rawRequest(Number(new URL(server.url).port), "HEAD /healthz HTTP/1.0\r\n\r\n");
    expect(r.status).toBe(400);
    expect(r.headers.date).toMatch(IMF_FIXDATE);
  }
});

test("an HTTP thread's HEAD, relayed to the main thread, carries Date too", async () => {
  const r = await via(threaded, 1, "relay", async () => {
    const a = await ask(threaded, "HEAD", `${A}/`);
    return { status: a.status, headers: new Headers(a.headers), json: null, text: a.body };
  });
  expect(r.status).toBe(200);
  expect(r.headers.get("date")).toMatch(IMF_FIXDATE);
});
