// SSRF guard (issue 7, CONTRACT §7) with ASSAY_WEBHOOK_ALLOW_PRIVATE off (the default): targets
// on loopback, private, link-local or metadata addresses are refused at creation and on PATCH,
// and again at each delivery, since DNS can change after creation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { type Receiver, eventually, startReceiver } from "./helpers/webhook-receiver.ts";

let s: TestServer;
let rx: Receiver;
const base = "/api/v1/orgs/acme/webhooks/";
// A public address (TEST-NET ranges are refused too): nothing is ever sent to it in these tests.
const PUBLIC_URL = "https://1.1.1.1/assay-test-hook";

beforeAll(async () => {
  s = await startTestServer();
  rx = startReceiver();
});
afterAll(async () => {
  await rx.stop();
  await s.close();
});

const privateRefusal = errorBody(400, "invalid_request", "The webhook is invalid.", [
  { field: "url", code: "private_address", message: expect.stringContaining("non-public address") },
]);

describe("refused at creation", () => {
  const targets: [string, string][] = [
    ["loopback", "http://127.0.0.1:8080/hook"],
    ["loopback, elsewhere in 127/8", "http://127.1.2.3/hook"],
    ["loopback, written as a decimal integer", "http://2130706433/hook"],
    ["10/8", "http://10.20.30.40/hook"],
    ["172.16/12 (low end)", "http://172.16.0.1/hook"],
    ["172.16/12 (high end)", "https://172.31.255.254/hook"],
    ["192.168/16", "http://192.168.1.10/hook"],
    ["the cloud metadata address", "http://169.254.169.254/latest/meta-data/"],
    ["the unspecified address", "http://0.0.0.0/hook"],
    ["IPv6 loopback", "http://[::1]:8080/hook"],
    ["IPv4-mapped IPv6 loopback", "http://[::ffff:127.0.0.1]/hook"],
    // Issue #19: IPv4-translated addresses (::ffff:0:0/96, RFC 6145) were missing.
    ["IPv4-translated loopback", "http://[::ffff:0:127.0.0.1]/hook"],
    ["IPv4-translated metadata address", "http://[::ffff:0:a9fe:a9fe]/hook"],
    ["IPv4-translated public address (never a real target)", "http://[::ffff:0:808:808]/hook"],
    ["IPv6 unique local", "http://[fd00:ec2::254]/hook"],
    ["IPv6 link-local", "http://[fe80::1]/hook"],
  ];
  for (const [what, url] of targets) {
    test(`400 private_address: ${what}`, async () => {
      const before = await s.count("webhooks");
      const r = await call(s, "POST", base, { token: s.rootToken, body: { url } });
      expect(r.status).toBe(400);
      expect(r.json).toEqual(privateRefusal);
      expect(await s.count("webhooks")).toBe(before);
    });
  }
  test("a host name that does not resolve and one that resolves to loopback get the same answer", async () => {
    // Told apart, they let an org admin map the names the server's resolver knows.
    const notPublic = (host: string) =>
      errorBody(400, "invalid_request", "The webhook is invalid.", [
        {
          field: "url",
          code: "not_public",
          message: `The host name "${host}" does not resolve to a public address; webhook targets must be public unless ASSAY_WEBHOOK_ALLOW_PRIVATE=true.`,
        },
      ]);
    const before = await s.count("webhooks");
    for (const host of ["localhost", "no-such-host.invalid"]) {
      const r = await call(s, "POST", base, {
        token: s.rootToken,
        body: { url: `http://${host}:8080/hook` },
      });
      expect([r.status, r.json]).toEqual([400, notPublic(host)]);
    }
    expect(await s.count("webhooks")).toBe(before);
  });
  test("201 for a public address; 400 when PATCHed to a private one", async () => {
    const created = await call(s, "POST", base, {
      token: s.rootToken,
      body: { url: PUBLIC_URL, is_active: false },
    });
    expect(created.status).toBe(201);
    const r = await call(s, "PATCH", `${base}${created.json.id}/`, {
      token: s.rootToken,
      body: { url: "http://192.168.0.1/" },
    });
    expect(r.json).toEqual(privateRefusal);
    const still = await call(s, "GET", `${base}${created.json.id}/`, { token: s.rootToken });
    expect(still.json.url).toBe(PUBLIC_URL);
  });
});

describe("checked again at delivery", () => {
  /**
   * A webhook created for a public address whose stored target then becomes `target` (what a DNS
   * change would do), pinged: the ping's first attempt.
   */
  async function pingAfterChange(target: string) {
    const created = await call(s, "POST", base, {
      token: s.rootToken,
      body: { url: PUBLIC_URL, is_active: false },
    });
    await s.sql("UPDATE webhooks SET url = ? WHERE id = ?", target, created.json.id);
    const path = `${base}${created.json.id}/`;
    await call(s, "PATCH", path, { token: s.rootToken, body: { is_active: true } });
    const ping = await call(s, "POST", `${path}ping/`, { token: s.rootToken });
    const attempt = await eventually(async () => {
      const d = (await call(s, "GET", `${path}deliveries/${ping.json.id}/`, { token: s.rootToken })).json;
      return d.attempts[0];
    });
    await call(s, "PATCH", path, { token: s.rootToken, body: { is_active: false } });
    return attempt;
  }

  test("a target that now points at a private address is refused, and nothing is sent", async () => {
    const attempt = await pingAfterChange(`${rx.url}/hook`);
    expect(attempt).toMatchObject({ http_status: null, response_excerpt: null });
    expect(attempt.error).toStartWith("refused: The URL points at a non-public address (loopback)");
    expect(rx.received).toEqual([]);
  });
  test("by a host name: the same words whether it resolves to a private address or not at all", async () => {
    const errors: string[] = [];
    for (const host of ["localhost", "no-such-host.invalid"]) {
      const attempt = await pingAfterChange(`http://${host}:${new URL(rx.url).port}/hook`);
      errors.push(attempt.error.replace(host, "HOST"));
    }
    expect(errors).toEqual([
      'refused: The host name "HOST" does not resolve to a public address; webhook targets must be public unless ASSAY_WEBHOOK_ALLOW_PRIVATE=true.',
      'refused: The host name "HOST" does not resolve to a public address; webhook targets must be public unless ASSAY_WEBHOOK_ALLOW_PRIVATE=true.',
    ]);
    expect(rx.received).toEqual([]);
  });
});
