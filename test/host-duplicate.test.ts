// A request with two Host lines names no one server: RFC 9112 §3.2 asks a 400. Bun joins them
// ("a, b") and built the URL from the first, so a run's `url`, a list's `next` and a Location
// named whichever host the client put first, and a proxy routing on the other disagreed with
// Assay about the target. Every listener now answers the JSON 400 of a request without a usable
// Host (src/http/fallback.ts). Found attacking the built binary.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { expectNoHost, rawRequest as raw } from "./helpers/raw-http.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let port: number;
let exec: string;
beforeAll(async () => {
  s = await startTestServer();
  port = Number(new URL(s.url).port);
  exec = (await s.user("dup-exec", "acme", "executor")).token;
  await createWorkflow(s, s.rootToken, {
    slug: "dup",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

test("two Host lines: the 400, whichever comes first, the same host twice too", async () => {
  const self = `127.0.0.1:${port}`;
  for (const [a, b] of [
    [self, "evil.example"],
    ["evil.example", self],
    [self, self],
  ])
    expectNoHost(
      await raw(port, `GET /healthz HTTP/1.1\r\nHost: ${a}\r\nHost: ${b}\r\nConnection: close\r\n\r\n`),
    );
  const list = await raw(
    port,
    `GET /api/v1/orgs/acme/runs/?page_size=1 HTTP/1.1\r\nHost: evil.example\r\nHost: ${self}\r\nAuthorization: Bearer ${exec}\r\nConnection: close\r\n\r\n`,
  );
  expectNoHost(list);
});

test("a run start with two Host lines stores nothing; with one it is a run", async () => {
  const before = await s.count("runs");
  const body = '{"a":1}';
  const head = (hosts: string) =>
    `POST /api/v1/orgs/acme/workflows/dup/runs/ HTTP/1.1\r\n${hosts}Authorization: Bearer ${exec}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
  expectNoHost(await raw(port, head(`Host: evil.example\r\nHost: 127.0.0.1:${port}\r\n`)));
  expect(await s.count("runs")).toBe(before);
  const ok = await raw(port, head(`Host: 127.0.0.1:${port}\r\n`));
  expect(ok.status).toBe(201);
  expect(JSON.parse(ok.body).url).toStartWith(`http://127.0.0.1:${port}/`);
  expect(await s.count("runs")).toBe(before + 1);
});

test("with HTTP threads every listener answers the same 400", async () => {
  const t = await startTestServer({ http_threads: 2 });
  try {
    const p = Number(new URL(t.url).port);
    // A connection each: the kernel spreads them over both listeners (all on one: 2^-31).
    const answers = await Promise.all(
      Array.from({ length: 32 }, () =>
        raw(
          p,
          `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`,
        ),
      ),
    );
    for (const r of answers) expectNoHost(r);
  } finally {
    await t.close();
  }
});
