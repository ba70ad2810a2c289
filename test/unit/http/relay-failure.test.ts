// The relay's own failure line (src/http/threads/relay.ts): when the app itself throws on a request
// an HTTP thread relayed (a bug of ours; the app answers its own errors), the log line names the
// request's id, and the 500 carries the same id in X-Request-Id, as every other answer does, so a
// client that reports the id leads the operator to the line. The app is a stand-in that throws: no
// real route does.
import { expect, test } from "bun:test";
import { createLogger } from "../../../src/lib/log.ts";
import { decodeHeaders, encodeHeaders, type ToThread } from "../../../src/http/threads/protocol.ts";
import { ThreadCounts, attachRelay } from "../../../src/http/threads/relay.ts";

/** Relays one request to an app that throws; the log lines and the answer's head. */
async function relayFailure(headers: Record<string, string>) {
  const lines: Array<Record<string, unknown>> = [];
  const log = {
    ...createLogger("silent"),
    error: (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, ...fields }),
  };
  let head!: Extract<ToThread, { t: "head" }>;
  const answered = new Promise<void>((resolve) => {
    const worker = {
      postMessage(m: ToThread) {
        if (m.t === "head") {
          head = m;
          resolve();
        }
      },
    } as unknown as Worker;
    const app = {
      handle: async (): Promise<Response> => {
        throw new Error("boom");
      },
    };
    const relay = attachRelay(worker, 1, app, new ThreadCounts(2), log);
    relay.onMessage({
      t: "req",
      id: 1,
      method: "GET",
      url: "http://127.0.0.1:9/api/v1/orgs/",
      headers: encodeHeaders(new Headers(headers)),
      ip: "127.0.0.1",
      hasBody: false,
    });
  });
  await answered;
  return { lines, head, id: decodeHeaders(head.headers).get("x-request-id") };
}

test("a relayed request the app fails on: the log line names the request id the client sent, and so does the 500", async () => {
  const { lines, head, id } = await relayFailure({ "x-request-id": "ci-build-42" });
  expect(head.status).toBe(500);
  expect(JSON.parse(head.body as string)).toEqual({
    detail: "An internal error occurred.",
    code: "internal_error",
    status: 500,
    errors: [],
  });
  expect(id).toBe("ci-build-42");
  expect(lines).toEqual([
    {
      msg: "relayed request failed",
      request_id: "ci-build-42",
      method: "GET",
      path: "/api/v1/orgs/",
      error: "Error: boom",
    },
  ]);
});

test("without an id of its own, the server's id: the same in the log line and the 500", async () => {
  const { lines, id } = await relayFailure({});
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  expect(lines).toEqual([
    {
      msg: "relayed request failed",
      request_id: id,
      method: "GET",
      path: "/api/v1/orgs/",
      error: "Error: boom",
    },
  ]);
});
