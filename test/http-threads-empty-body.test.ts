// A request without a body (no Content-Length, no Transfer-Encoding) that an HTTP thread relays to
// the main thread (src/http/threads/worker.ts) is relayed without one: the relay gave every
// method but GET and HEAD an empty body stream, so a DELETE sent with `Content-Type:
// application/json` and no body was a 400 parse_error on an HTTP thread and the route's answer
// (404 here) on the main one. Found by test/logs-secrets.test.ts run with ASSAY_HTTP_THREADS=2.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { fresh, via } from "./helpers/threads.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ http_threads: 2 });
});
afterAll(() => s.close());

describe("a body-less request with a JSON Content-Type", () => {
  for (const [thread, path] of [
    [0, "main"],
    [1, "relay"],
  ] as const)
    test(`answers the route's 404 on thread ${thread} (${path})`, async () => {
      const send = () =>
        call(
          s,
          "DELETE",
          "/api/v1/users/me/tokens/987654/",
          fresh({ token: s.rootToken, headers: { "content-type": "application/json" } }),
        );
      const r = await via(s, thread, path, send);
      expect({ status: r.status, json: r.json }).toEqual({
        status: 404,
        json: errorBody(404, "not_found", "Token not found."),
      });
    });
});
