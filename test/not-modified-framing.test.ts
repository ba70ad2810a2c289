// A 304 Not Modified says no Content-Length (RFC 9110 §8.6, §15.4.5: it may only repeat the 200's,
// and none is always right), on GET and HEAD alike, on every route that answers one. Until
// 2026-11-29 a HEAD's 304 said `Content-Length: 0` (the framework counted the empty body of the
// GET it ran for the HEAD), where the 200 said e.g. 403; a GET's 304 said none (Bun.serve adds
// none to a bodiless 304). Read from the socket: fetch would not show what was sent.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { rawRequest } from "./helpers/raw-http.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const A = "/api/v1/orgs/acme";
const paths: string[] = [];

beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "wf",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  const run = await call(s, "POST", `${A}/workflows/wf/runs/`, {
    token: s.rootToken,
    body: { content: { a: 1 } },
  });
  expect(run.status).toBe(201);
  const html = await (await fetch(`${s.url}/`)).text();
  const docs = await (await fetch(`${s.url}/api/docs`)).text();
  paths.push(
    `${A}/workflows/wf/`,
    `${A}/`,
    `${A}/runs/${run.json.id}/`,
    `${A}/runs/${run.json.id}/content/`,
    `${A}/runs/${run.json.id}/report/?format=html`,
    `${A}/workflows/wf/versions/1/`,
    "/api/v1/users/me/",
    "/api/v1/admin/settings/",
    "/",
    "/app/runs",
    /\/assets\/[^"]+\.js/.exec(html)![0],
    "/api/docs",
    /\/api\/docs\/assets\/[^"]+\.js/.exec(docs)![0],
  );
});
afterAll(() => s?.close());

const ask = (method: string, path: string, extra = "") => {
  const port = Number(new URL(s.url).port);
  return rawRequest(
    port,
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${s.rootToken}\r\nAccept-Encoding: gzip\r\nConnection: close\r\n${extra}\r\n`,
  );
};

test("a 304 carries no Content-Length, GET and HEAD, wherever it is answered", async () => {
  for (const path of paths) {
    const ok = await ask("GET", path);
    expect([path, ok.status]).toEqual([path, 200]);
    for (const method of ["GET", "HEAD"]) {
      const r = await ask(method, path, `If-None-Match: ${ok.headers.etag ?? "*"}\r\n`);
      const framing: (string | null)[] = [
        r.headers["content-length"] ?? null,
        r.headers["transfer-encoding"] ?? null,
      ];
      expect([path, method, r.status, r.body, framing]).toEqual([path, method, 304, "", [null, null]]);
    }
  }
});
