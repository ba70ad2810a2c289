// The web app's files go gzip-compressed only to a client whose Accept-Encoding accepts gzip with a
// weight above 0 (RFC 9110 §12.5.3). Until 2026-11-29 the header was searched for the word, so
// `gzip;q=0` (a client saying it cannot read gzip) got gzip. Found attacking the built binary.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { type TestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

/** The page as sent: its Content-Encoding and its bytes, not inflated by fetch. */
async function page(acceptEncoding: string) {
  const res = await fetch(`${s.url}/`, { headers: { "accept-encoding": acceptEncoding }, decompress: false });
  return { encoding: res.headers.get("content-encoding"), bytes: new Uint8Array(await res.arrayBuffer()) };
}

test("gzip goes only where it is accepted with a weight above 0", async () => {
  const plain = await page("identity");
  expect(plain.encoding).toBeNull();
  const html = new TextDecoder().decode(plain.bytes);
  expect(html).toStartWith("<!");
  const cases: [string, boolean][] = [
    ["gzip", true],
    ["gzip, deflate, br", true],
    ["br;q=1.0, gzip;q=0.5", true],
    ["x-gzip", true],
    ["*", true],
    ["gzip;q=0", false],
    ["gzip; q=0.000", false],
    ["br, gzip;q=0", false],
    ["*;q=0", false],
    ["gzip;q=0, *", false],
    ["*;q=0.5, gzip;q=0", false],
    ["deflate, br", false],
    ["gzipped", false],
    // A weight for identity above gzip's prefers the plain bytes (RFC 9110 §12.4.2; until
    // 2026-11-29 gzip went out whenever it weighed above 0).
    ["identity, gzip;q=0.5", false],
    ["gzip;q=0.5, identity;q=0.8", false],
    ["identity;q=0.5, gzip", true],
    ["gzip;q=0.5, identity;q=0.5", true],
    ["identity;q=0, gzip;q=0.1", true],
    // `*` weighs identity too when identity is not named (RFC 9110 §12.5.3).
    ["gzip;q=0.5, *", false],
    ["*;q=0.8, gzip;q=0.5, identity;q=0.2", true],
    ["", false],
  ];
  const got = [];
  for (const [header] of cases) {
    const r = await page(header);
    got.push([header, r.encoding === "gzip"]);
    // Whatever was chosen, the bytes are that representation of the same page.
    expect(new TextDecoder().decode(r.encoding === "gzip" ? gunzipSync(r.bytes) : r.bytes)).toBe(html);
  }
  expect(got).toEqual(cases);
});
