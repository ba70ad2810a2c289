// The first run over the API (src/web/setup-routes.ts): while there is no user, GET /api/v1/setup/
// says so and POST creates the first admin and org with the setup code from the server's log,
// then signs in. Every refusal changes nothing. The browser side: test/browser/setup.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { count as countOf } from "../src/db/program.ts";
import { call, errorBody, startEmptyServer } from "./helpers/server.ts";

const SETUP = "/api/v1/setup/";
let s: Awaited<ReturnType<typeof startEmptyServer>>;
const count = (table: string) => s.deps.db.exec(countOf(`SELECT count(*) AS n FROM ${table}`));
const body = (o: Record<string, unknown> = {}) => ({
  setup_code: s.setupCode,
  username: "ada",
  password: "correct horse battery",
  org_slug: "acme",
  org_name: "ACME Ltd",
  ...o,
});

beforeAll(async () => {
  s = await startEmptyServer();
});
afterAll(() => s.close());

describe("before the first user", () => {
  test("the server has a one-time code, and GET says setup is needed", async () => {
    expect(s.setupCode).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect((await call(s, "GET", SETUP)).json).toEqual({ needed: true });
  });

  test("400 for a wrong code, before anything else is looked at; nothing written", async () => {
    const r = await call(s, "POST", SETUP, { body: body({ setup_code: "AAAA-AAAA", password: "x" }) });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The setup code is not the one in the server's log.", [
        {
          field: "setup_code",
          code: "incorrect",
          message: "Copy the setup code from the log of the running server (printed at start).",
        },
      ]),
    );
    expect([await count("users"), await count("orgs")]).toEqual([0, 0]);
  });

  test("400 with every problem at once for bad fields; nothing written", async () => {
    const r = await call(s, "POST", SETUP, {
      body: body({ username: " x", password: "short", org_slug: "Acme!", org_name: " " }),
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The first administrator and organization cannot be created.", [
        {
          field: "org_slug",
          code: "invalid",
          message:
            "An org slug is 1 to 63 characters: lowercase letters, digits and -, starting with a letter.",
        },
        { field: "org_name", code: "invalid", message: "A name of 1 to 200 characters." },
        {
          field: "username",
          code: "invalid",
          message:
            "A username is 1 to 64 characters: letters, digits, . _ @ -, starting with a letter or digit.",
        },
        { field: "password", code: "invalid", message: "A password has 8 to 1024 characters." },
      ]),
    );
    expect([await count("users"), await count("orgs"), await count("memberships")]).toEqual([0, 0, 0]);
  });

  test("400 for an unknown field or a missing one (the body's schema)", async () => {
    expect((await call(s, "POST", SETUP, { body: { ...body(), is_admin: false } })).status).toBe(400);
    const { password: _p, ...without } = body();
    expect((await call(s, "POST", SETUP, { body: without })).status).toBe(400);
    expect(await count("users")).toBe(0);
  });

  test("the code is read as typed by a person: case and dashes do not matter", async () => {
    // Checked through a wrong field, so this attempt writes nothing either.
    const typed = s.setupCode!.toLowerCase().replace("-", "");
    const r = await call(s, "POST", SETUP, { body: body({ setup_code: typed, password: "short" }) });
    expect(r.json.errors.map((e: { field: string }) => e.field)).toEqual(["password"]);
  });
});

describe("the setup", () => {
  test("201: the admin, the org and the membership in one go, signed in by a session cookie", async () => {
    const r = await call(s, "POST", SETUP, { body: body() });
    expect(r.status).toBe(201);
    // What was created that a client can read: the org (the setup test server sets no base URL).
    expect(r.headers.get("location")).toBe(`${s.url}/api/v1/orgs/acme/`);
    expect(r.json).toEqual({
      user: expect.objectContaining({ username: "ada", is_admin: true }),
      csrf_token: expect.any(String),
      expires_at: expect.any(String),
      org_slug: "acme",
    });
    const cookie = r.headers.get("set-cookie")!.split(";")[0]!;
    const me = await call(s, "GET", "/api/v1/users/me/", { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.json.orgs).toEqual([expect.objectContaining({ org_slug: "acme", role: "admin" })]);
    const org = await call(s, "GET", "/api/v1/orgs/acme/", { headers: { cookie } });
    expect(org.json.name).toBe("ACME Ltd");
    // The password works for a later sign-in too.
    const login = await call(s, "POST", "/api/v1/auth/login/", {
      body: { username: "ada", password: "correct horse battery" },
    });
    expect(login.status).toBe(200);
  });

  test("then 409 for everyone, the right code included, and GET says it is done", async () => {
    const r = await call(s, "POST", SETUP, { body: body({ username: "eve", org_slug: "evil" }) });
    expect(r.json).toEqual(
      errorBody(
        409,
        "conflict",
        "This instance is already set up; sign in, or use `assay users` and `orgs`.",
      ),
    );
    expect((await call(s, "GET", SETUP)).json).toEqual({ needed: false });
    expect([await count("users"), await count("orgs")]).toEqual([1, 1]);
  });
});
