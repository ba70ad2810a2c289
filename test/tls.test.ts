// HTTPS without a proxy (ASSAY_TLS_CERT_FILE, ASSAY_TLS_KEY_FILE; src/http/tls.ts, docs/deploy.md
// "HTTPS"): a certificate made for the test by openssl, trusted by the test's own requests only.
// The API, its Locations and the web session's cookie over HTTPS, HTTP threads too; and every
// problem with the files refused at start, with the setting it comes from, before anything is
// written.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SYSTEM } from "../src/audit/actor.ts";
import { ConfigError, loadConfig, testConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { selfSignedCertificate } from "./helpers/certificate.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";
import { NO_HOST } from "./helpers/raw-http.ts";
import { via } from "./helpers/threads.ts";

const dir = testTempDir("assay-tls-");
const file = (name: string) => join(dir, name);
let ca = "";

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  selfSignedCertificate(file("cert.pem"), file("key.pem"), "assay-test");
  selfSignedCertificate(file("other-cert.pem"), file("other-key.pem"), "other");
  ca = await Bun.file(file("cert.pem")).text();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TLS = () => ({ tls_cert_file: file("cert.pem"), tls_key_file: file("key.pem") });

/** A request that trusts the test's certificate only, on a fresh connection. */
async function https(
  s: { url: string },
  method: string,
  path: string,
  o: { token?: string; body?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { connection: "close", ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  const res = await fetch(s.url + path, { method, headers, body: o.body, tls: { ca } } as RequestInit);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : null };
}

describe.each([1, 2])("HTTPS with %i HTTP thread(s)", (threads) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...TLS(), ...(threads > 1 ? { http_threads: threads } : {}) });
    const wf = await https(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: JSON.stringify({
        slug: "tls",
        name: "tls",
        allowed_file_types: ["JSON"],
        steps: [{ name: "schema", validator: "json_schema", config: { schema: { type: "object" } } }],
      }),
      headers: { "content-type": "application/json" },
    });
    expect([wf.status, wf.text]).toEqual([201, expect.any(String)]);
  });
  afterAll(() => s.close());

  test("the server's URL is https; a run's Location names it", async () => {
    expect(s.url).toStartWith("https://127.0.0.1:");
    expect((await https(s, "GET", "/healthz")).status).toBe(200);
    const run = await https(s, "POST", "/api/v1/orgs/acme/workflows/tls/runs/", {
      token: s.rootToken,
      body: '{"a":1}',
      headers: { "content-type": "application/json" },
    });
    expect(run.status).toBe(201);
    expect(run.json.status).toBe("succeeded");
    expect(run.headers.get("location")).toBe(`${s.url}/api/v1/orgs/acme/runs/${run.json.id}/`);
  });

  test("a Host of one or two characters is refused (400), never routed to another path", async () => {
    for (const host of ["ab", "x"]) {
      const r = await https(s, "GET", "/api/v1/orgs/", { token: s.rootToken, headers: { host } });
      expect([r.status, r.json]).toEqual([400, NO_HOST]);
    }
    const r = await https(s, "GET", "/api/v1/orgs/", { token: s.rootToken, headers: { host: "abc" } });
    expect(r.status).toBe(200);
  });

  test("plain HTTP on the port gets no answer", async () => {
    const plain = s.url.replace("https:", "http:");
    expect(fetch(`${plain}/healthz`, { headers: { connection: "close" } })).rejects.toThrow();
  });

  test("a certificate nobody vouches for is refused by a client that checks", async () => {
    expect(fetch(`${s.url}/healthz`, { headers: { connection: "close" } })).rejects.toThrow();
  });

  test("the web session's cookie is Secure and __Host-: read back under that name only, cleared at sign-out", async () => {
    const u = await s.user(`tls-alice-${threads}`, "acme", "viewer");
    await s.deps.users.setPassword(u.id, await Bun.password.hash("correct horse battery"), SYSTEM);
    const r = await https(s, "POST", "/api/v1/auth/login/", {
      body: JSON.stringify({ username: `tls-alice-${threads}`, password: "correct horse battery" }),
      headers: { "content-type": "application/json", origin: s.url },
    });
    expect(r.status).toBe(200);
    const setCookie = r.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(
      /^__Host-assay_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200; Secure$/,
    );
    const cookie = setCookie.split(";")[0]!;
    const me = await https(s, "GET", "/api/v1/auth/session/", { headers: { cookie } });
    expect([me.status, me.json.csrf_token]).toEqual([200, r.json.csrf_token]);
    // The same secret under the plain name (as a sibling subdomain or plain HTTP could plant it).
    const plain = await https(s, "GET", "/api/v1/auth/session/", {
      headers: { cookie: cookie.replace("__Host-", "") },
    });
    expect([plain.status, plain.json]).toEqual([
      401,
      {
        detail: "Authentication credentials were not provided or are invalid.",
        code: "authentication_required",
        status: 401,
        errors: [],
      },
    ]);
    const out = await https(s, "POST", "/api/v1/auth/logout/", {
      headers: { cookie, "x-csrf-token": r.json.csrf_token, origin: s.url },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toBe(
      "__Host-assay_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
    );
    expect((await https(s, "GET", "/api/v1/auth/session/", { headers: { cookie } })).status).toBe(401);
  });

  test.skipIf(threads === 1)(
    "an HTTP thread serves HTTPS too: its own sync runs and what it relays",
    async () => {
      const run = () =>
        https(s, "POST", "/api/v1/orgs/acme/workflows/tls/runs/", {
          token: s.rootToken,
          body: '{"b":2}',
          headers: { "content-type": "application/json" },
        });
      expect(
        (
          await via(s, 1, "relay", () =>
            https(s, "GET", "/api/v1/orgs/acme/workflows/", { token: s.rootToken }),
          )
        ).status,
      ).toBe(200);
      expect((await via(s, 1, "local", run)).status).toBe(201);
    },
  );
});

describe("the certificate and key are checked at start, before anything is written", () => {
  const refused = async (overrides: Record<string, unknown>, problem: string) => {
    const dataDir = join(testTempDir("assay-tls-start-"), "data");
    const e = await startServer(
      testConfig({ port: 0, log_level: "silent", data_dir: dataDir, ...TLS(), ...overrides }),
    ).then(
      async (s) => {
        await s.stop();
        return null;
      },
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).problems).toEqual([problem]);
    expect(existsSync(dataDir)).toBe(false);
  };

  test("one of the two files alone is a configuration error", () => {
    const only = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return null;
      } catch (e) {
        return (e as ConfigError).problems;
      }
    };
    expect(only({ ASSAY_TLS_CERT_FILE: file("cert.pem") })).toEqual([
      "ASSAY_TLS_CERT_FILE: HTTPS needs both a certificate and its key: set ASSAY_TLS_CERT_FILE and ASSAY_TLS_KEY_FILE",
    ]);
    expect(only({ ASSAY_TLS_KEY_FILE: file("key.pem") })).toEqual([
      "ASSAY_TLS_KEY_FILE: HTTPS needs both a certificate and its key: set ASSAY_TLS_CERT_FILE and ASSAY_TLS_KEY_FILE",
    ]);
  });

  test("a file that cannot be read", () =>
    refused(
      { tls_cert_file: file("missing.pem") },
      `ASSAY_TLS_CERT_FILE (--tls-cert-file): cannot read "${file("missing.pem")}" (ENOENT)`,
    ));

  test("a key file holding a certificate", () =>
    refused(
      { tls_key_file: file("cert.pem") },
      `ASSAY_TLS_KEY_FILE (--tls-key-file): "${file("cert.pem")}" holds no PEM private key`,
    ));

  test("a key that is not the certificate's", () =>
    refused(
      { tls_key_file: file("other-key.pem") },
      "ASSAY_TLS_CERT_FILE (--tls-cert-file) / ASSAY_TLS_KEY_FILE (--tls-key-file): the key is not the certificate's",
    ));

  test("a certificate file whose PEM is broken", () => {
    writeFileSync(
      file("broken.pem"),
      "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n",
    );
    return refused(
      { tls_cert_file: file("broken.pem") },
      expect.stringMatching(
        /^ASSAY_TLS_CERT_FILE \(--tls-cert-file\) \/ ASSAY_TLS_KEY_FILE \(--tls-key-file\): the certificate or key was refused \(ERR_OSSL_/,
      ) as unknown as string,
    );
  });
});
