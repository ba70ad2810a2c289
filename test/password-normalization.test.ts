// Passwords are hashed in their NFKC form (NIST SP 800-63B §5.1.1.2, src/users/password-hash.ts):
// two spellings that differ only in normalization are one password on every path that sets one
// (admin API, self-service change, CLI reset, first-run setup) and at sign-in. A hash stored
// before (of the raw string) still signs in with that string, and is then replaced by the NFKC
// form's. Both backends.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { type TestServer, call, errorBody, startEmptyServer, startTestServer } from "./helpers/server.ts";

// [as set, as typed at sign-in]: each pair differs only in normalization.
const SPELLINGS: [string, string, string][] = [
  ["Å as U+00C5 / A + U+030A", "\u00c5ngstr\u00f6m units", "A\u030angstro\u0308m units"],
  ["the ligature ﬁ / f i", "\ufb01sh and \ufb01nches", "fish and finches"],
  ["full-width digits", "pin \uff17\uff13\uff19\uff12\uff18\uff14", "pin 739284"],
];

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const login = (username: string, password: string) =>
  call(s, "POST", "/api/v1/auth/login/", { body: { username, password } });
const BAD_LOGIN = errorBody(401, "authentication_required", "Invalid username or password.");
const storedHash = async (username: string) =>
  (await s.row<{ password_hash: string }>("SELECT password_hash FROM users WHERE username = ?", username))!
    .password_hash;

describe("one password, whichever spelling", () => {
  let n = 0;
  for (const [what, a, b] of SPELLINGS)
    for (const [set, typed] of [
      [a, b],
      [b, a],
    ] as const)
      test(`admin API sets one, sign-in with the other (${what})`, async () => {
        const username = `spell${n++}`;
        const made = await call(s, "POST", "/api/v1/admin/users/", {
          token: s.rootToken,
          body: { username, password: set },
        });
        expect(made.status).toBe(201);
        expect((await login(username, typed)).status).toBe(200);
        expect((await login(username, set)).status).toBe(200);
        // One hash of the NFKC form, whichever spelling was sent.
        expect(await Bun.password.verify(set.normalize("NFKC"), await storedHash(username))).toBe(true);
        expect((await login(username, `${typed}x`)).json).toEqual(BAD_LOGIN);
      });

  test("the self-service change: current and new password in either spelling", async () => {
    const [, a, b] = SPELLINGS[0]!;
    await call(s, "POST", "/api/v1/admin/users/", {
      token: s.rootToken,
      body: { username: "changer", password: a },
    });
    const first = await login("changer", b);
    expect(first.status).toBe(200);
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    const [, c, d] = SPELLINGS[1]!;
    const r = await call(s, "POST", "/api/v1/users/me/password/", {
      headers: { cookie, "x-csrf-token": first.json.csrf_token },
      body: { current_password: b, new_password: c },
    });
    expect(r.status).toBe(204);
    expect((await login("changer", d)).status).toBe(200);
    expect((await login("changer", b)).json).toEqual(BAD_LOGIN);
  });

  test("assay users set-password: stdin in one spelling, sign-in with the other", async () => {
    const [, a, b] = SPELLINGS[2]!;
    await s.user("reset");
    const p = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, "../src/main.ts"),
        "users",
        "set-password",
        "reset",
        "--password-stdin",
        ...s.cliArgs,
      ],
      { stdin: new TextEncoder().encode(`${a}\n`), stdout: "pipe", stderr: "pipe" },
    );
    expect(await p.exited).toBe(0);
    expect((await login("reset", b)).status).toBe(200);
  });
});

describe("a hash stored before normalization (of the raw string)", () => {
  // Written as the code before this change wrote it: Bun.password.hash of the string as sent.
  const RAW = "A\u030angstro\u0308m legacy";
  const COMPOSED = RAW.normalize("NFKC");
  let id: number;
  beforeAll(async () => {
    id = (await s.user("legacy")).id;
    await s.deps.users.setPassword(id, await Bun.password.hash(RAW), SYSTEM);
  });

  test("a wrong password is 401 and leaves the stored hash alone", async () => {
    const before = await storedHash("legacy");
    expect((await login("legacy", `${RAW}!`)).json).toEqual(BAD_LOGIN);
    expect(await storedHash("legacy")).toBe(before);
  });

  test("another spelling does not match it until the user signs in once with the old one", async () => {
    expect((await login("legacy", COMPOSED)).json).toEqual(BAD_LOGIN);
  });

  test("the raw spelling signs in; the hash becomes the NFKC form's, and the sign-in's entry says so", async () => {
    const before = await storedHash("legacy");
    const r = await login("legacy", RAW);
    expect(r.status).toBe(200);
    const after = await storedHash("legacy");
    expect(after).not.toBe(before);
    expect(await Bun.password.verify(COMPOSED, after)).toBe(true);
    expect(await Bun.password.verify(RAW, after)).toBe(false);
    const log = await call(s, "GET", `/api/v1/admin/audit/?action=auth.login&target_id=${id}`, {
      token: s.rootToken,
    });
    expect(log.json.results[0].changes.after).toEqual({
      session_id: expect.any(Number),
      expires_at: r.json.expires_at,
      password_rehashed: true,
    });
    // Now every spelling signs in, and a second sign-in re-hashes nothing.
    expect((await login("legacy", COMPOSED)).status).toBe(200);
    expect((await login("legacy", RAW)).status).toBe(200);
    expect(await storedHash("legacy")).toBe(after);
  });
});

describe("the policy judges the form that is hashed", () => {
  const create = (username: string, password: string) =>
    call(s, "POST", "/api/v1/admin/users/", { token: s.rootToken, body: { username, password } });
  const refused = (message: string) =>
    errorBody(400, "invalid_request", "Invalid value for password.", [
      { field: "password", code: "invalid", message },
    ]);

  test("full-width letters of a common password are that password: 400", async () => {
    expect((await create("wide", "\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44\uff11")).json).toEqual(
      refused("This password is one of the most common; attackers try it first. Choose another."),
    );
  });

  test("the least length counts the NFKC form: A + U+030A is one character, ﬁ two", async () => {
    const length = refused("A password has 8 to 1024 characters.");
    // 8 code points as sent, 7 once composed: refused as its composed spelling is.
    expect((await create("short1", "A\u030abcdefg")).json).toEqual(length);
    expect((await create("short2", "\u00c5bcdefg")).json).toEqual(length);
    // 4 code points as sent, "fifififi" once normalized: accepted, as "fifififi" is.
    expect((await create("liga", "\ufb01\ufb01\ufb01\ufb01")).status).toBe(201);
    expect((await login("liga", "fifififi")).status).toBe(200);
  });

  test("the most counts what is sent: 1024 of U+FDFA (18 characters each in NFKC) pass and sign in, 1025 do not", async () => {
    const longest = "\ufdfa".repeat(1024);
    expect(longest.normalize("NFKC").length).toBe(18 * 1024);
    expect((await create("long", longest)).status).toBe(201);
    expect((await login("long", longest)).status).toBe(200);
    expect((await create("toolong", `${longest}\ufdfa`)).json).toEqual(
      refused("A password has 8 to 1024 characters."),
    );
  });
});

describe("first-run setup", () => {
  let empty: Awaited<ReturnType<typeof startEmptyServer>>;
  beforeAll(async () => {
    empty = await startEmptyServer();
  });
  afterAll(() => empty.close());

  test("the first administrator's password in one spelling signs in with the other", async () => {
    const [, a, b] = SPELLINGS[1]!;
    const r = await call(empty, "POST", "/api/v1/setup/", {
      body: { setup_code: empty.setupCode, username: "ada", password: a, org_slug: "acme", org_name: "Acme" },
    });
    expect(r.status).toBe(201);
    const signIn = await call(empty, "POST", "/api/v1/auth/login/", {
      body: { username: "ada", password: b },
    });
    expect(signIn.status).toBe(200);
  });
});
