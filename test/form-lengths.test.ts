// The web app's forms and the server agree on lengths. A browser counts minlength/maxlength in
// UTF-16 code units, the server in characters (code points; a password's least length in its NFKC
// form): with emoji, maxlength="200" stopped a name at 100 the server takes, and minlength="8" let
// through a password of 4 emoji the server refuses. So the forms bound by attribute only the fields
// the server takes in ASCII alone (slugs, usernames, the setup code), where both counts are one, and
// leave every other bound to the server, whose message goes next to the field (data-field). And
// the audit log's filters counted code units though their message says characters.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const E = "\u{1F600}"; // one character, two UTF-16 code units
const emoji = (n: number) => E.repeat(n);
/** n different emoji (U+1F600 on): a password the policy takes (no character repeated). */
const varied = (n: number) => Array.from({ length: n }, (_, i) => String.fromCodePoint(0x1f600 + i)).join("");
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "t",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s?.close());

test("the served app bounds lengths by attribute only on ASCII-only fields", async () => {
  const html = await (await fetch(`${s.url}/`)).text();
  let script = "";
  for (const m of html.matchAll(/\/assets\/[^"]+\.js/g)) script += await (await fetch(s.url + m[0])).text();
  expect(script.length).toBeGreaterThan(10_000);
  expect(script.match(/minlength/gi)).toBeNull();
  const bounds = [...script.matchAll(/maxlength:"(\d+)"/gi)].map((m) => Number(m[1])).sort((a, b) => a - b);
  // 63: an org's and a workflow's slug; 64: usernames; 100: the setup code; 200: the sign-in's
  // username (the server's bound on it; every username is ASCII).
  expect(bounds).toEqual([63, 63, 63, 64, 64, 64, 64, 100, 200]);
  // type="email" makes a browser refuse a non-ASCII local part the server takes (below).
  expect(script.match(/type:"email"/gi)).toBeNull();
});

test("an email with a non-ASCII local part, which type=email browsers refuse, is taken by the server", async () => {
  const r = await call(s, "POST", "/api/v1/admin/users/", {
    token: s.rootToken,
    body: { username: "fl-mail", email: "jos\u00e9@exemple.fr" },
  });
  expect(r.status).toBe(201);
  expect((r.json as { email: string }).email).toBe("jos\u00e9@exemple.fr");
});

describe("the server's bounds in characters, where the forms no longer say them", () => {
  const PASSWORD = errorBody(400, "invalid_request", "Invalid value for password.", [
    { field: "password", code: "invalid", message: "A password has 8 to 1024 characters." },
  ]);

  test("a new user's password: 4 emoji (8 code units) refused, 8 emoji taken and signed in with", async () => {
    const create = (username: string, password: string) =>
      call(s, "POST", "/api/v1/admin/users/", { token: s.rootToken, body: { username, password } });
    const short = await create("fl-short", varied(4));
    expect([short.status, short.json]).toEqual([400, PASSWORD]);
    expect((await create("fl-ok", varied(8))).status).toBe(201);
    const login = await call(s, "POST", "/api/v1/auth/login/", {
      body: { username: "fl-ok", password: varied(8) },
    });
    expect(login.status).toBe(200);
  });

  test("one's own new password: 4 emoji refused next to new_password", async () => {
    await call(s, "POST", "/api/v1/admin/users/", {
      token: s.rootToken,
      body: { username: "fl-self", password: "first pass phrase" },
    });
    const login = await call(s, "POST", "/api/v1/auth/login/", {
      body: { username: "fl-self", password: "first pass phrase" },
    });
    const change = (new_password: string) =>
      call(s, "POST", "/api/v1/users/me/password/", {
        headers: {
          cookie: login.headers.get("set-cookie")!.split(";")[0]!,
          "x-csrf-token": login.json.csrf_token,
        },
        body: { current_password: "first pass phrase", new_password },
      });
    const r = await change(varied(4));
    expect([r.status, r.json]).toEqual([
      400,
      errorBody(400, "invalid_request", "The new password is not acceptable.", [
        { field: "new_password", code: "invalid", message: "A password has 8 to 1024 characters." },
      ]),
    ]);
  });

  test("a run's filename: 255 emoji taken, 256 refused", async () => {
    const start = (filename: string) =>
      call(s, "POST", "/api/v1/orgs/acme/workflows/t/runs/", {
        token: s.rootToken,
        body: { content: { a: 1 }, filename },
      });
    const ok = await start(emoji(255));
    expect([ok.status, ok.json.submission.filename]).toEqual([201, emoji(255)]);
    const r = await start(emoji(256));
    expect([r.status, r.json]).toEqual([
      400,
      errorBody(400, "invalid_request", "The run request is invalid.", [
        { field: "filename", code: "too_long", message: "filename may hold at most 255 characters." },
      ]),
    ]);
  });

  test("an audit filter: 200 emoji taken (until 2026-11-29 refused past 100), 201 refused", async () => {
    const list = (actor: string) =>
      call(s, "GET", `/api/v1/orgs/acme/audit/?actor=${encodeURIComponent(actor)}`, { token: s.rootToken });
    const ok = await list(emoji(200));
    expect([ok.status, ok.json.count]).toEqual([200, 0]);
    const r = await list(emoji(201));
    expect([r.status, r.json]).toEqual([
      400,
      errorBody(400, "invalid_request", "Invalid filters.", [
        { field: "actor", code: "invalid", message: "actor is 1 to 200 characters." },
      ]),
    ]);
  });

  test("a step's and a workflow's name: 200 emoji taken", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug: "fl-names",
        name: emoji(200),
        allowed_file_types: ["CSV"],
        steps: [
          {
            name: emoji(200),
            validator: "csv_table",
            // The delimiter field took one UTF-16 code unit (maxlength="1"): an emoji is one character.
            config: { schema: { fields: [{ name: "a" }] }, dialect: { delimiter: E } },
          },
        ],
      },
    });
    expect([r.status, r.json.name, r.json.steps[0].name]).toEqual([201, emoji(200), emoji(200)]);
  });
});
