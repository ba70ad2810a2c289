// Requests written byte for byte on a socket of their own: what fetch cannot send (no Host, two
// Host lines, a bare path), read back whole. Used by the Host tests.
import { expect } from "bun:test";
import { connect } from "node:net";
import { DEFAULT_HEADERS } from "../../src/http/security.ts";
import { errorBody } from "./server.ts";

/** The JSON 400 of a request without a usable Host (src/http/fallback.ts). */
export const NO_HOST = errorBody(
  400,
  "invalid_request",
  "The request needs a Host header naming this server.",
  [{ field: "Host", code: "required", message: "Send a Host header with this server's host (and port)." }],
);

/** One request on its own connection; the whole answer once the server has sent or closed. */
export function rawRequest(port: number, head: string) {
  return new Promise<{ status: number; headers: Record<string, string>; body: string }>((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let out = "";
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no whole answer in 10 s: ${JSON.stringify(out)}`));
    }, 10_000);
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      const end = out.indexOf("\r\n\r\n");
      const lines = out.slice(0, end).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const at = l.indexOf(":");
        headers[l.slice(0, at).toLowerCase()] = l.slice(at + 1).trim();
      }
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? "")?.[1] ?? 0),
        headers,
        body: out.slice(end + 4),
      });
    };
    sock.on("data", (d) => {
      out += d.toString();
      const end = out.indexOf("\r\n\r\n");
      const len = /\r\ncontent-length: *(\d+)/i.exec(out)?.[1];
      if (end >= 0 && len !== undefined && out.length - end - 4 >= Number(len)) done();
    });
    sock.on("close", done);
    sock.on("error", () => {});
    sock.on("connect", () => sock.write(head));
  });
}

/** The answer is that JSON 400, with the headers every answer carries (its request id too). */
export function expectNoHost(r: Awaited<ReturnType<typeof rawRequest>>) {
  expect(r.status).toBe(400);
  expect(JSON.parse(r.body)).toEqual(NO_HOST);
  expect(r.headers["content-type"]).toBe("application/json");
  expect(r.headers["cache-control"]).toBe("no-store");
  for (const [k, v] of Object.entries(DEFAULT_HEADERS)) expect(r.headers[k]).toBe(v);
  expect(r.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:/+=@-]{1,128}$/);
}
