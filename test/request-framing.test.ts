// Request framing on a raw socket (RFC 9112 §6): the shapes request smuggling is made of are
// refused with a 400 and the connection closed, never read one way here and another way by a
// proxy in front; the shapes the RFC lets a recipient accept are read as it says. Bun's parser
// decides all of these before the app (docs/limits.md): this file holds them against an upgrade.
// Each request is sent whole and read until the server closes, so a second request hidden in a
// body would show as a second answer.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const RUNS = "/api/v1/orgs/acme/workflows/framing/runs/";
beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "framing",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

/** Sends `bytes` and reads until the server closes the connection: every status line it sent. */
function exchange(bytes: string) {
  return new Promise<{ statuses: number[]; text: string }>((resolve, reject) => {
    const sock = connect(Number(new URL(s.url).port), "127.0.0.1");
    let out = "";
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`the server did not close in 10 s: ${JSON.stringify(out)}`));
    }, 10_000);
    sock.on("data", (d) => {
      out += d.toString("latin1");
    });
    sock.on("close", () => {
      clearTimeout(timer);
      resolve({ statuses: [...out.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])), text: out });
    });
    sock.on("error", () => {});
    sock.on("connect", () => sock.write(Buffer.from(bytes, "latin1")));
  });
}

const head = (extra: string, version = "1.1") =>
  `POST ${RUNS} HTTP/${version}\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.rootToken}\r\nContent-Type: application/json\r\n${extra}`;
// What a request hidden in a body would ask: a second run start.
const SMUGGLED = `POST ${RUNS} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer x\r\nContent-Length: 2\r\n\r\n{}`;
const runs = () => s.count("runs");

test("smuggling shapes: a bare 400, the connection closed, nothing stored, nothing hidden answered", async () => {
  const shapes: Record<string, string> = {
    "Content-Length and Transfer-Encoding": `${head("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n")}0\r\n\r\n${SMUGGLED}`,
    "Transfer-Encoding and Content-Length": `${head("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n")}0\r\n\r\n${SMUGGLED}`,
    "two Content-Lengths that differ": `${head("Content-Length: 2\r\nContent-Length: 7\r\n\r\n")}{}${SMUGGLED}`,
    "a Content-Length list": `${head("Content-Length: 2, 2\r\n\r\n")}{}`,
    "a signed Content-Length": `${head("Content-Length: +2\r\n\r\n")}{}`,
    "a coding after chunked": `${head("Transfer-Encoding: chunked, identity\r\n\r\n")}2\r\n{}\r\n0\r\n\r\n`,
    "a coding other than chunked": `${head("Transfer-Encoding: gzip\r\n\r\n")}{}`,
    "chunked given twice": `${head("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n")}2\r\n{}\r\n0\r\n\r\n`,
    "a look-alike coding": `${head("Transfer-Encoding: xchunked\r\n\r\n")}2\r\n{}\r\n0\r\n\r\n`,
    "whitespace before the colon": `${head("Transfer-Encoding : chunked\r\n\r\n")}2\r\n{}\r\n0\r\n\r\n`,
    "obs-fold (a folded line)": `${head("Transfer-Encoding:\r\n chunked\r\n\r\n")}2\r\n{}\r\n0\r\n\r\n`,
    "Transfer-Encoding in HTTP/1.0": `${head("Transfer-Encoding: chunked\r\n\r\n", "1.0")}2\r\n{}\r\n0\r\n\r\n`,
    "a chunk size in hex with 0x": `${head("Transfer-Encoding: chunked\r\n\r\n")}0x2\r\n{}\r\n0\r\n\r\n`,
    "chunks ended by a bare LF": `${head("Transfer-Encoding: chunked\r\n\r\n")}2\n{}\n0\n\n`,
  };
  const before = await runs();
  const got: Record<string, unknown> = {};
  for (const [name, bytes] of Object.entries(shapes)) {
    const r = await exchange(bytes);
    got[name] = [r.statuses, r.text.includes('"id"')];
  }
  expect(got).toEqual(Object.fromEntries(Object.keys(shapes).map((k) => [k, [[400], false]])));
  expect(await runs()).toBe(before);
});

test("what RFC 9112 lets a recipient read is read as it says: the run stores exactly the body", async () => {
  const close = "Connection: close\r\n";
  const shapes: Record<string, string> = {
    // §7: transfer coding names are case-insensitive.
    "Transfer-Encoding: Chunked": `${head(`${close}Transfer-Encoding: Chunked\r\n\r\n`)}3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n`,
    // §7.1.1: a chunk extension the recipient does not know is ignored.
    "a chunk extension": `${head(`${close}Transfer-Encoding: chunked\r\n\r\n`)}7;name=value\r\n{"a":1}\r\n0\r\n\r\n`,
    // RFC 9110 §8.6: identical Content-Length lines may be taken as one.
    "the same Content-Length twice": `${head(`${close}Content-Length: 7\r\nContent-Length: 7\r\n\r\n`)}{"a":1}`,
  };
  const sha = new Bun.CryptoHasher("sha256").update('{"a":1}').digest("hex");
  const got: Record<string, unknown> = {};
  for (const [name, bytes] of Object.entries(shapes)) {
    const r = await exchange(bytes);
    const body = JSON.parse(r.text.slice(r.text.indexOf("\r\n\r\n") + 4));
    got[name] = [r.statuses, body.submission?.size, body.submission?.sha256];
  }
  expect(got).toEqual(Object.fromEntries(Object.keys(shapes).map((k) => [k, [[201], 7, sha]])));
});
