// A request whose Host is missing (HTTP/1.0) or not a host (`Host:`, `Host: a b`): Bun then hands
// the app a bare path instead of a URL. Every listener answers it with the JSON 400 before anything
// parses the URL — never Bun's development error page, which showed the stack and the bundle's
// source lines — and nothing is stored (src/http/fallback.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hostRequired, internalError } from "../src/http/fallback.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { expectNoHost, rawRequest as raw } from "./helpers/raw-http.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let port: number;
let exec: string;
beforeAll(async () => {
  s = await startTestServer();
  port = Number(new URL(s.url).port);
  exec = (await s.user("exec", "acme", "executor")).token;
  const author = (await s.user("author", "acme", "author")).token;
  await createWorkflow(s, author, {
    slug: "j",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

test("HTTP/1.0 without a Host: 400 with the whole JSON error and the security headers", async () => {
  expectNoHost(await raw(port, "GET /healthz HTTP/1.0\r\n\r\n"));
  expectNoHost(
    await raw(port, `GET /api/v1/orgs/acme/workflows/ HTTP/1.0\r\nAuthorization: Bearer ${exec}\r\n\r\n`),
  );
});

test("an empty Host, or one that is not a host (or no URL parser accepts): the same 400", async () => {
  expectNoHost(await raw(port, "GET /healthz HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n"));
  expectNoHost(await raw(port, "GET /healthz HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n"));
  // Hosts Bun passes on inside a URL that no parser accepts.
  for (const host of ['a"b', "[::1", "x:99999", ":80"])
    expectNoHost(await raw(port, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
  // A Host naming another server is still a host: served.
  const other = await raw(port, "GET /healthz HTTP/1.1\r\nHost: [::1]:80\r\nConnection: close\r\n\r\n");
  expect(other.status).toBe(200);
});

test("a run start without a Host is refused and stores nothing", async () => {
  const before = await s.count("runs");
  const body = '{"a":1}';
  const head = `POST /api/v1/orgs/acme/workflows/j/runs/ HTTP/1.0\r\nAuthorization: Bearer ${exec}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  expectNoHost(await raw(port, head));
  expect(await s.count("runs")).toBe(before);
  // With a Host, the same request is a run.
  const ok = await raw(port, head.replace("HTTP/1.0\r\n", `HTTP/1.0\r\nHost: 127.0.0.1:${port}\r\n`));
  expect(ok.status).toBe(201);
  expect(JSON.parse(ok.body).status).toBe("succeeded");
  expect(await s.count("runs")).toBe(before + 1);
});

test("HTTP/1.0 with a Host is served as usual", async () => {
  const r = await raw(port, `GET /healthz HTTP/1.0\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  expect(r.status).toBe(200);
  expect((await call(s, "GET", "/healthz")).status).toBe(200);
});

test("with HTTP threads every listener answers the same 400", async () => {
  const t = await startTestServer({ http_threads: 2 });
  try {
    const p = Number(new URL(t.url).port);
    // A connection each: the kernel spreads them over both listeners (all on one: 2^-31).
    const answers = await Promise.all(
      Array.from({ length: 32 }, () => raw(p, "GET /healthz HTTP/1.0\r\n\r\n")),
    );
    for (const r of answers) expectNoHost(r);
  } finally {
    await t.close();
  }
});

test("the listeners' last resort is the app's JSON 500, never Bun's error page", async () => {
  const r = internalError();
  expect(r.status).toBe(500);
  expect(r.headers.get("content-type")).toBe("application/json");
  expect(await r.json()).toEqual(errorBody(500, "internal_error", "An internal error occurred."));
  expect(hostRequired(new Request("http://x/healthz")).status).toBe(400);
});
