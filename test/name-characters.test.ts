// Names shown to people (org, workflow, step, token and user display names) are one line of text:
// no control characters (a NUL, which PostgreSQL cannot store and SQLite would, so the backends
// answered differently), no line or paragraph separator (U+2028, U+2029: stored until 2026-11-28,
// though a name is "one line"), no bidirectional overrides or isolates (a name displayed as another), no
// unpaired surrogates (stored as U+FFFD). A description may hold line breaks, not a NUL
// (src/lib/text.ts). Each refusal is the whole error object and stores nothing; scripts written
// right to left, with their marks, are names.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const BAD = [
  "a\u0000b",
  "Acme\u202etset",
  "a\u2066b\u2069",
  "a\nb",
  "a\u0085b",
  "a\ud800b",
  "a\u2028b",
  "a\u2029b",
];
const GOOD = ["\u05d0\u05e7\u05de\u05d4 \u200f2026", "\u0634\u0631\u0643\u0629", "Acme \u2014 QA"];
const MESSAGE =
  "may not contain control characters, line separators, bidirectional overrides or isolates, or unpaired surrogates";
const field = (f: string, message: string, detail = `Invalid value for ${f}.`) =>
  errorBody(400, "invalid_request", detail, [{ field: f, code: "invalid", message }]);

let s: TestServer;
let admin: string;
beforeAll(async () => {
  s = await startTestServer();
  admin = s.rootToken;
});
afterAll(() => s.close());

async function refusedWithNothingStored(
  tables: string[],
  send: () => ReturnType<typeof call>,
  expected: unknown,
) {
  const before = await Promise.all(tables.map((t) => s.count(t)));
  const r = await send();
  expect(r.json).toEqual(expected);
  expect(r.status).toBe(400);
  expect(await Promise.all(tables.map((t) => s.count(t)))).toEqual(before);
}

test("token names", async () => {
  for (const name of BAD)
    await refusedWithNothingStored(
      ["api_tokens"],
      () => call(s, "POST", "/api/v1/users/me/tokens/", { token: admin, body: { name } }),
      field("name", `A token name ${MESSAGE}.`),
    );
  for (const name of GOOD) {
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", { token: admin, body: { name } });
    expect(r.status).toBe(201);
    expect(r.json.name).toBe(name);
  }
});

test("org names, created and renamed", async () => {
  for (const name of BAD) {
    await refusedWithNothingStored(
      ["orgs"],
      () => call(s, "POST", "/api/v1/admin/orgs/", { token: admin, body: { org_slug: "neworg", name } }),
      field("name", `A name ${MESSAGE}.`),
    );
    const r = await call(s, "PATCH", "/api/v1/orgs/acme/", { token: admin, body: { name } });
    expect(r.json).toEqual(field("name", `A name ${MESSAGE}.`));
    expect((await call(s, "GET", "/api/v1/orgs/acme/", { token: admin })).json.name).not.toBe(name);
  }
  const ok = await call(s, "PATCH", "/api/v1/orgs/acme/", { token: admin, body: { name: GOOD[0] } });
  expect(ok.status).toBe(200);
  expect(ok.json.name).toBe(GOOD[0]);
});

test("workflow and step names; a description keeps its line breaks but not a NUL", async () => {
  const draft = (over: Record<string, unknown>, step: Record<string, unknown> = {}) => ({
    slug: "w",
    name: "W",
    allowed_file_types: ["JSON"],
    steps: [{ name: "s", validator: "syntax", config: {}, ...step }],
    ...over,
  });
  const post = (body: unknown) => call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: admin, body });
  const invalid = (f: string, message: string) =>
    errorBody(400, "invalid_request", "The workflow definition is invalid.", [
      { field: f, code: "invalid", message },
    ]);
  for (const name of BAD) {
    await refusedWithNothingStored(
      ["workflows"],
      () => post(draft({ name })),
      invalid("name", `A name ${MESSAGE}.`),
    );
    await refusedWithNothingStored(
      ["workflows"],
      () => post(draft({}, { name })),
      invalid("steps[0].name", `A step name ${MESSAGE}.`),
    );
  }
  for (const description of ["a\u0000b", "a\ud800b"])
    await refusedWithNothingStored(
      ["workflows"],
      () => post(draft({ description })),
      invalid("description", "The description may not contain U+0000 or unpaired surrogates."),
    );
  const ok = await post(
    draft({ name: GOOD[1], description: "line one\nline two\tand a tab" }, { name: GOOD[2] }),
  );
  expect(ok.status).toBe(201);
  expect([ok.json.name, ok.json.description, ok.json.steps[0].name]).toEqual([
    GOOD[1],
    "line one\nline two\tand a tab",
    GOOD[2],
  ]);
});

test("user display names", async () => {
  for (const name of BAD)
    await refusedWithNothingStored(
      ["users"],
      () => call(s, "POST", "/api/v1/admin/users/", { token: admin, body: { username: "newuser", name } }),
      field("name", `A name ${MESSAGE}.`),
    );
  const r = await call(s, "POST", "/api/v1/admin/users/", {
    token: admin,
    body: { username: "newuser", name: GOOD[0] },
  });
  expect(r.status).toBe(201);
  expect(r.json.name).toBe(GOOD[0]);
});

// A schema URI and an email are one line too. The URI's controls were dropped by the URL parser
// ("\u0001urn:zz\u001f" stored as "urn:zz"); an email's NUL was stored on SQLite and a generic 400
// on PostgreSQL. Now the same 400 naming the field on both.
test("a schema URI with a control character is refused, not stored without it", async () => {
  for (const uri of ["\u0001urn:zz\u001f", "urn:zz\u0002", "urn:z\u0000z", "urn:a\tb", "urn:a\u2028b"])
    await refusedWithNothingStored(
      ["org_schemas"],
      () => call(s, "POST", "/api/v1/orgs/acme/schemas/", { token: admin, body: { uri, schema: {} } }),
      errorBody(400, "invalid_request", "The schema is invalid.", [
        { field: "uri", code: "invalid", message: `A URI ${MESSAGE}.` },
      ]),
    );
});

test("an email with a control character is refused", async () => {
  for (const email of ["a\u0000@b", "a@b\u0001", "a\u0085@b", "a@\u202eb"])
    await refusedWithNothingStored(
      ["users"],
      () => call(s, "POST", "/api/v1/admin/users/", { token: admin, body: { username: "mailer", email } }),
      field("email", "Not an email address."),
    );
});
