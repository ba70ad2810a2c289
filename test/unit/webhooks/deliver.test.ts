// One delivery attempt against real local receivers (src/webhooks/deliver.ts), with a host name
// given two addresses by the test's resolver: where nothing was connected to (refused), the next
// checked address is tried; an answer of any status ends the attempt there.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { attempt } from "../../../src/webhooks/deliver.ts";

let status = 200;
const seen: { host: string | null; body: string }[] = [];
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  // On 127.0.0.1 only: the same port on 127.0.0.2 (loopback too on Linux) refuses the connection.
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      seen.push({ host: req.headers.get("host"), body: await req.text() });
      return new Response("thanks", { status });
    },
  });
});
afterAll(() => receiver.stop(true));

const send = (addresses: string[]) => {
  seen.length = 0;
  return attempt(
    `http://hooks.example.test:${receiver.port}/in`,
    { "content-type": "application/json" },
    '{"n":1}',
    {
      timeoutMs: 10_000,
      allowPrivate: true,
      shutdown: new AbortController().signal,
      resolve: async () => ({ ok: true, addresses }),
    },
  );
};

test("a refused first address: the next one is tried, and gets the request once, under the URL's host", async () => {
  status = 200;
  const a = await send(["127.0.0.2", "127.0.0.1"]);
  expect(a).toMatchObject({ http_status: 200, error: null, response_excerpt: "thanks" });
  expect(seen).toEqual([{ host: `hooks.example.test:${receiver.port}`, body: '{"n":1}' }]);
});

test("an answer of any status from the first address ends the attempt", async () => {
  status = 503;
  const a = await send(["127.0.0.1", "127.0.0.1"]);
  expect(a).toMatchObject({ http_status: 503, error: "HTTP 503" });
  expect(seen).toHaveLength(1);
});

test("every address refused: the attempt fails with the connection error", async () => {
  const a = await send(["127.0.0.2", "127.0.0.3"]);
  expect(a).toMatchObject({
    http_status: null,
    error: "connection failed (ECONNREFUSED)",
    response_excerpt: null,
  });
  expect(seen).toEqual([]);
});
