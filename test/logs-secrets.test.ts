// What `assay serve` writes (stdout and stderr) while a client does everything that carries a
// secret: a failed and a good sign-in, a write with a wrong CSRF token, a made-up token, tokens
// in query strings and pasted into a path, Basic credentials, a webhook with its secret (and a key
// in its URL) delivered to a receiver that fails, and, on PostgreSQL, a database URL with a
// password. Every stderr line is one JSON object with `time`, `level` and `msg`, no output holds
// a secret or a usable prefix of one (docs/deploy.md, "Logs"), and on SQLite a request answered
// 503 because the database is locked has its id, method and path in both its access line and its
// `database unavailable` line. A child process: the outage line is written once a minute per
// process, so another test file's outage must not take it.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DB_FILE } from "../src/db/open.ts";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { MAIN, runAssay } from "./helpers/cli.ts";
import { until } from "./helpers/fixtures.ts";
import { testTempDir } from "./helpers/temp.ts";

const PASSWORD = "Correct-Horse-9-Battery";
const WRONG = "Wrong-Password-77-xyz";
const FAKE_TOKEN = "assay_FAKEtokenFAKEtokenFAKEtokenFAKE123";
const WRONG_CSRF = "WRONGCSRF-abcdefgh-1234";
const URL_KEY = "UrlKeySecret-5544332211";
const DB_PASSWORD = "Db-Pw-never-logged-3";

const dir = testTempDir("assay-logs-secrets-");
let databaseUrl: string | null = null;
let drop = async () => {};
beforeAll(async () => {
  if (!onPostgres) return;
  const pg = await freshPgDatabase();
  // The test cluster trusts local connections: the password is there to be kept out of output.
  databaseUrl = pg.url.replace(/^postgres:\/\/([^:@/]+)@/, `postgres://$1:${DB_PASSWORD}@`);
  expect(databaseUrl).toContain(DB_PASSWORD);
  drop = pg.drop;
}, 120_000);
afterAll(async () => {
  await drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Reads a stream into `into` as it comes. */
async function collect(stream: ReadableStream<Uint8Array>, into: { text: string }) {
  const dec = new TextDecoder();
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    into.text += dec.decode(value, { stream: true });
  }
}

test("no secret reaches the output, every line is JSON, and a failed request's lines carry its id", async () => {
  const {
    ASSAY_DATA_DIR: _d,
    ASSAY_DATABASE_URL: _u,
    ASSAY_SERVER: _s,
    ASSAY_TOKEN: _t,
    ...base
  } = process.env;
  const env = {
    ...base,
    ...(databaseUrl ? { ASSAY_DATABASE_URL: databaseUrl } : { ASSAY_DATA_DIR: dir }),
    ASSAY_LOG_LEVEL: "debug",
    ASSAY_ACCESS_LOG: "true",
    ASSAY_WEBHOOK_ALLOW_PRIVATE: "true",
    ASSAY_RATE_LIMIT_DISABLED: "true",
  };
  const init = Bun.spawn(
    [process.execPath, MAIN, "init", "--org", "acme", "--admin", "me", "--password-stdin"],
    {
      env,
      stdin: Buffer.from(`${PASSWORD}\n`),
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [initOut, initErr, initCode] = await Promise.all([
    new Response(init.stdout).text(),
    new Response(init.stderr).text(),
    init.exited,
  ]);
  expect({ initCode, initErr }).toEqual({ initCode: 0, initErr: "" });
  const token = initOut.trim().split("\n").pop()!.trim();
  expect(token).toMatch(/^assay_[A-Za-z0-9_-]{40,}$/);

  // A webhook receiver that answers 500 to every attempt.
  const attempts: Request[] = [];
  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (r) => {
      attempts.push(r);
      return new Response("no", { status: 500 });
    },
  });
  const proc = Bun.spawn([process.execPath, MAIN, "serve", "--port", "0"], {
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = { text: "" };
  const err = { text: "" };
  const reading = Promise.all([collect(proc.stdout, out), collect(proc.stderr, err)]);
  const secrets: string[] = [PASSWORD, WRONG, FAKE_TOKEN, WRONG_CSRF, URL_KEY, DB_PASSWORD, token];
  let lockedId = "";
  try {
    await until(() => /listening on http:\/\/\S+/.test(out.text), "the server to listen", 60_000);
    const url = /listening on (http:\/\/[^\s/]+)/.exec(out.text)![1]!;
    const bearer = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const json = { "content-type": "application/json" };
    const login = (username: string, password: string) =>
      fetch(`${url}/api/v1/auth/login/`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ username, password }),
      });

    expect((await login("me", WRONG)).status).toBe(401);
    expect((await login("nobody", WRONG)).status).toBe(401);
    const ok = await login("me", PASSWORD);
    expect(ok.status).toBe(200);
    const session = /=([^;]+)/.exec(ok.headers.get("set-cookie") ?? "")![1]!;
    const csrf = ((await ok.json()) as { csrf_token: string }).csrf_token;
    secrets.push(session, csrf);
    const badCsrf = await fetch(`${url}/api/v1/users/me/tokens/`, {
      method: "POST",
      headers: { ...json, cookie: `assay_session=${session}`, "x-csrf-token": WRONG_CSRF },
      body: JSON.stringify({ name: "x" }),
    });
    expect(badCsrf.status).toBe(403);
    const made = await fetch(`${url}/api/v1/users/me/tokens/`, {
      method: "POST",
      headers: { ...json, cookie: `assay_session=${session}`, "x-csrf-token": csrf },
      body: JSON.stringify({ name: "made" }),
    });
    expect(made.status).toBe(201);
    secrets.push(((await made.json()) as { token: string }).token);

    const answered = [
      await fetch(`${url}/api/v1/orgs/acme/workflows/`, {
        headers: { authorization: `Bearer ${FAKE_TOKEN}` },
      }),
      await fetch(`${url}/api/v1/orgs/acme/workflows/?token=${token}&access_token=${FAKE_TOKEN}`, {
        headers: bearer,
      }),
      await fetch(`${url}/api/v1/orgs/acme/workflows/`, {
        headers: { authorization: `Basic ${btoa(`me:${PASSWORD}`)}` },
      }),
      // A token pasted into a path: an unknown path, and a token's id in the API's own.
      await fetch(`${url}/${token}`, { headers: bearer }),
      await fetch(`${url}/api/v1/users/me/tokens/${token}/`, { method: "DELETE", headers: bearer }),
    ];
    expect(answered.map((r) => r.status)).toEqual([401, 200, 401, 404, 404]);

    const hook = await fetch(`${url}/api/v1/orgs/acme/webhooks/`, {
      method: "POST",
      headers: bearer,
      body: JSON.stringify({
        url: `http://127.0.0.1:${receiver.port}/hook?key=${URL_KEY}`,
        events: ["run.completed"],
      }),
    });
    expect(hook.status).toBe(201);
    const { id: hookId, secret } = (await hook.json()) as { id: number; secret: string };
    secrets.push(secret);
    const ping = await fetch(`${url}/api/v1/orgs/acme/webhooks/${hookId}/ping/`, {
      method: "POST",
      headers: bearer,
    });
    expect(ping.status).toBeLessThan(300);
    await until(() => attempts.length > 0, "a webhook attempt");

    if (!onPostgres) {
      // Another connection holds the SQLite write lock: the write is answered 503.
      const other = new Database(join(dir, DB_FILE));
      other.exec("PRAGMA busy_timeout = 5000");
      try {
        other.exec("BEGIN EXCLUSIVE");
        lockedId = "logs-locked-1";
        const locked = await fetch(`${url}/api/v1/users/me/tokens/`, {
          method: "POST",
          headers: { ...bearer, "x-request-id": lockedId },
          body: JSON.stringify({ name: "locked" }),
        });
        expect(locked.status).toBe(503);
        expect(locked.headers.get("x-request-id")).toBe(lockedId);
      } finally {
        if (other.inTransaction) other.exec("ROLLBACK");
        other.close();
      }
    }
    const last = await fetch(`${url}/healthz`, { headers: { "x-request-id": "logs-last" } });
    expect(last.status).toBe(200);
    await until(() => err.text.includes('"request_id":"logs-last"'), "the last access line");
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    await reading;
    receiver.stop(true);
  }

  const lines = err.text.split("\n").filter((l) => l !== "");
  const parsed = lines.map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      return { notJson: l };
    }
  });
  const malformed = parsed.filter(
    (o) =>
      typeof o.time !== "string" ||
      !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(o.time) ||
      !["debug", "info", "warn", "error"].includes(o.level as string) ||
      typeof o.msg !== "string",
  );
  expect(malformed).toEqual([]);

  // No secret, and no prefix of one long enough to matter (12 characters past a known prefix).
  const output = out.text + err.text;
  const leaked = secrets.flatMap((s) => {
    const prefix = s.slice(0, (/^(assay_|whsec_)/.exec(s)?.[0].length ?? 0) + 12);
    return [s, prefix].filter((x) => output.includes(x));
  });
  expect(leaked).toEqual([]);
  // The pasted token's paths are logged, masked.
  const paths = parsed.filter((o) => o.msg === "request").map((o) => o.path);
  expect(paths).toContain("/assay_***");
  expect(paths).toContain("/api/v1/users/me/tokens/assay_***/");

  if (!onPostgres) {
    const mine = parsed.filter((o) => o.request_id === lockedId);
    expect(mine.map(({ time, duration_ms, client, error, ...rest }) => rest)).toEqual([
      {
        level: "warn",
        msg: "database unavailable",
        method: "POST",
        path: "/api/v1/users/me/tokens/",
        request_id: lockedId,
      },
      {
        level: "info",
        msg: "request",
        method: "POST",
        path: "/api/v1/users/me/tokens/",
        route: "/api/v1/users/me/tokens/",
        status: 503,
        request_id: lockedId,
      },
    ]);
  }
}, 180_000);

test("a URL given where a data dir or postgres:// URL belongs is echoed without its password or query values, whatever they hold", async () => {
  const { ASSAY_DATA_DIR: _d, ASSAY_DATABASE_URL: _u, ...env } = process.env;
  // Passwords pasted raw: a `/`, an `@`, a `?` in them.
  const cases: [string, string][] = [
    ["postgres://u:Pw/Slash-99@db.example/x", "postgres://u:***@db.example/x"],
    ["postgres://u:Pw@At-99@db.example/x", "postgres://u:***@db.example/x"],
    ["postgres://u:Pw?Mark-99@db.example/x", "postgres://u:***@db.example/x"],
    [
      "postgres://db.example/x?password=Query-Pw-99&sslmode=require",
      "postgres://db.example/x?password=***&sslmode=***",
    ],
  ];
  for (const [url, shown] of cases) {
    const serve = await runAssay(["serve", "--port", "0", "--data-dir", url], {
      env: env as Record<string, string>,
    });
    expect({ code: serve.code, out: serve.out, err: serve.err }).toEqual({
      code: 2,
      out: "",
      err: `assay serve: Invalid configuration:\n  --data-dir: "${shown}" is a URL, not a directory (a PostgreSQL database is given with --database-url or ASSAY_DATABASE_URL)\n`,
    });
    const mysql = url.replace(/^postgres/, "mysql");
    const copy = await runAssay(["db", "copy", "--from", mysql, "--to", join(dir, "copy")], {
      env: env as Record<string, string>,
    });
    expect({ code: copy.code, out: copy.out, err: copy.err }).toEqual({
      code: 2,
      out: "",
      err: `assay db: --from "${shown.replace(/^postgres/, "mysql")}" is a URL but not postgres://…: give a postgres:// URL or a data dir\nRun "assay db -h" for help.\n`,
    });
  }
}, 120_000);
