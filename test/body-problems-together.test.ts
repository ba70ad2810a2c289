// A body with a value of the wrong type and a problem that a service checks itself (a slug's
// format, a name's length in characters) got a 400 naming only the first: the route's schema
// refused the body and the service never ran, so {"slug": "Bad", "name": 1} answered `name` and
// the slug's format came back on the next request (docs/api.md promises every problem of a body
// in one answer). Now the schema's 400 also lists the problems the services check without the
// database, of the fields present and of the right type, with the very items the service gives
// (src/http/errors.ts boundItems, documentedWith's check); after the schema's items, in the order
// of the endpoint's fields. A body with only such a problem answers as it did before.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { count as countOf } from "../src/db/program.ts";
import { DocumentError, parseDocument } from "../src/workflows/document.ts";
import { NAME_CHARACTERS } from "../src/lib/text.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startEmptyServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const INVALID = "The request is invalid.";
const notString = (field: string) => ({ field, code: "invalid", message: "must be a string" });
const WF_SLUG = {
  field: "slug",
  code: "invalid",
  message: "A slug is 1 to 63 characters: lowercase letters, digits, - and _, starting with a letter.",
};
const WF_NAME = { field: "name", code: "invalid", message: "A name of 1 to 200 characters is required." };
const ORG_SLUG = {
  field: "org_slug",
  code: "invalid",
  message: "An org slug is 1 to 63 characters: lowercase letters, digits and -, starting with a letter.",
};
const USERNAME = {
  field: "username",
  code: "invalid",
  message: "A username is 1 to 64 characters: letters, digits, . _ @ -, starting with a letter or digit.",
};
const PASSWORD_LENGTH = {
  field: "password",
  code: "invalid",
  message: "A password has 8 to 1024 characters.",
};
const URI = {
  field: "uri",
  code: "invalid",
  message: "Must be an absolute URI, e.g. https://schemas.example.com/address.json or urn:example:address.",
};
/** What a name with a control or bidirectional-override character is told (lib/text.ts). */
const ORG_NAME_CHARS = `A name ${NAME_CHARACTERS}.`;
const workflow = (o: Record<string, unknown>) => ({
  slug: "ok",
  name: "OK",
  allowed_file_types: ["JSON"],
  steps: [],
  ...o,
});
const WORKFLOWS = "/api/v1/orgs/acme/workflows/";

describe("workflow create: the schema's item and the draft check's, in one 400", () => {
  test('{"slug": "Bad", "name": 1}: name, then slug; nothing created', async () => {
    const before = await s.count("workflows");
    const r = await call(s, "POST", WORKFLOWS, {
      token: s.rootToken,
      body: workflow({ slug: "Bad", name: 1 }),
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(errorBody(400, "invalid_request", INVALID, [notString("name"), WF_SLUG]));
    expect(await s.count("workflows")).toBe(before);
  });

  test("every checked field, nested steps too, in the order of the fields", async () => {
    const r = await call(s, "POST", WORKFLOWS, {
      token: s.rootToken,
      body: workflow({
        slug: "Bad",
        name: " ",
        description: "x".repeat(5001),
        allowed_file_types: ["JSON", "JSON"],
        fail_fast: "yes",
        steps: [
          { name: "", validator: "syntax", config: {} },
          { name: "fine", validator: "syntax", is_active: 1 },
        ],
      }),
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "fail_fast", code: "invalid", message: "must be true or false" },
        { field: "steps[1].is_active", code: "invalid", message: "must be true or false" },
        WF_SLUG,
        WF_NAME,
        {
          field: "description",
          code: "invalid",
          message: "The description may hold at most 5000 characters.",
        },
        {
          field: "allowed_file_types",
          code: "invalid",
          message: "A non-empty list of distinct file types among JSON, XML, YAML, CSV, TEXT.",
        },
        {
          field: "steps[0].name",
          code: "invalid",
          message: "A step name of 1 to 200 characters is required.",
        },
      ]),
    );
  });

  test("lengths are counted in characters: 200 emoji are a name, 201 are not", async () => {
    const ok = await call(s, "POST", WORKFLOWS, {
      token: s.rootToken,
      body: workflow({ slug: 1, name: "😀".repeat(200) }),
    });
    expect(ok.json).toEqual(errorBody(400, "invalid_request", INVALID, [notString("slug")]));
    const long = await call(s, "POST", WORKFLOWS, {
      token: s.rootToken,
      body: workflow({ slug: 1, name: "😀".repeat(201) }),
    });
    expect(long.json).toEqual(errorBody(400, "invalid_request", INVALID, [notString("slug"), WF_NAME]));
  });

  test("a field the schema refuses is not checked again: one item for a list with a number in it", async () => {
    const r = await call(s, "POST", WORKFLOWS, {
      token: s.rootToken,
      body: workflow({ slug: "Bad", allowed_file_types: ["PDF", 1] }),
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        {
          field: "allowed_file_types[1]",
          code: "invalid",
          message: "must be one of JSON, XML, YAML, CSV, TEXT",
        },
        WF_SLUG,
      ]),
    );
  });

  test("a step with an unknown key still has its name checked", async () => {
    const r = await call(s, "POST", WORKFLOWS, {
      token: s.rootToken,
      body: workflow({ slug: "Bad", steps: [{ name: "", validator: "syntax", extra: 1 }] }),
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "steps[0].extra", code: "unknown_field", message: "is not a known field" },
        WF_SLUG,
        {
          field: "steps[0].name",
          code: "invalid",
          message: "A step name of 1 to 200 characters is required.",
        },
      ]),
    );
  });

  test("only the slug's problem: the draft check's answer, as before", async () => {
    const r = await call(s, "POST", WORKFLOWS, { token: s.rootToken, body: workflow({ slug: "Bad" }) });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [WF_SLUG]),
    );
  });

  test("a valid body is created as before", async () => {
    const r = await call(s, "POST", WORKFLOWS, { token: s.rootToken, body: workflow({ slug: "fine" }) });
    expect(r.status).toBe(201);
    expect(r.json.slug).toBe("fine");
  });
});

describe("a workflow's PATCH and its steps' POST and PATCH", () => {
  const WF = `${WORKFLOWS}edits/`;
  const STEP_NAME = {
    field: "name",
    code: "invalid",
    message: "A step name of 1 to 200 characters is required.",
  };
  let stepId = 0;
  beforeAll(async () => {
    const w = await createWorkflow(s, s.rootToken, {
      slug: "edits",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    stepId = w.steps[0].id;
  });

  test("PATCH: a flag of the wrong type and a bad slug: both; nothing changed", async () => {
    const r = await call(s, "PATCH", WF, { token: s.rootToken, body: { slug: "Bad", fail_fast: "x" } });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "fail_fast", code: "invalid", message: "must be true or false" },
        WF_SLUG,
      ]),
    );
    expect((await call(s, "GET", WF, { token: s.rootToken })).json.version).toBe(1);
  });

  test("a step's POST and PATCH: the step's fields are named as the step endpoints name them", async () => {
    const post = await call(s, "POST", `${WF}steps/`, {
      token: s.rootToken,
      body: { name: "", validator: "syntax", is_active: "x" },
    });
    expect(post.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "is_active", code: "invalid", message: "must be true or false" },
        STEP_NAME,
      ]),
    );
    const patch = await call(s, "PATCH", `${WF}steps/${stepId}/`, {
      token: s.rootToken,
      body: { name: "", order: "1" },
    });
    expect(patch.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "order", code: "invalid", message: "must be an integer from 1 to 50" },
        STEP_NAME,
      ]),
    );
  });

  test("only the step's name: the draft check's answer, as before", async () => {
    const post = await call(s, "POST", `${WF}steps/`, {
      token: s.rootToken,
      body: { name: "", validator: "syntax" },
    });
    expect(post.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [STEP_NAME]),
    );
    const patch = await call(s, "PATCH", `${WF}steps/${stepId}/`, { token: s.rootToken, body: { name: "" } });
    expect(patch.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [STEP_NAME]),
    );
  });
});

describe("org create (admin API)", () => {
  test("a name of the wrong type and a bad slug: both; nothing created", async () => {
    const before = await s.count("orgs");
    const r = await call(s, "POST", "/api/v1/admin/orgs/", {
      token: s.rootToken,
      body: { org_slug: "Bad!", name: 7 },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(errorBody(400, "invalid_request", INVALID, [notString("name"), ORG_SLUG]));
    expect(await s.count("orgs")).toBe(before);
  });

  test("only the bad slug: as before", async () => {
    const r = await call(s, "POST", "/api/v1/admin/orgs/", {
      token: s.rootToken,
      body: { org_slug: "Bad!" },
    });
    expect(r.json).toEqual(errorBody(400, "invalid_request", "Invalid value for org_slug.", [ORG_SLUG]));
  });

  test("a bad slug and a bad name, both strings: both (the service reported the slug alone)", async () => {
    const before = await s.count("orgs");
    const r = await call(s, "POST", "/api/v1/admin/orgs/", {
      token: s.rootToken,
      body: { org_slug: "Bad!", name: "Acme\u202e" },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        ORG_SLUG,
        { field: "name", code: "invalid", message: ORG_NAME_CHARS },
      ]),
    );
    expect(await s.count("orgs")).toBe(before);
  });
});

describe("user create (admin API)", () => {
  test("is_admin of the wrong type with a bad username, password and email: all four", async () => {
    const before = await s.count("users");
    const r = await call(s, "POST", "/api/v1/admin/users/", {
      token: s.rootToken,
      body: { username: "bad name", password: "short", email: "nope", is_admin: "yes" },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "is_admin", code: "invalid", message: "must be true or false" },
        USERNAME,
        PASSWORD_LENGTH,
        { field: "email", code: "invalid", message: "Not an email address." },
      ]),
    );
    expect(await s.count("users")).toBe(before);
  });

  test("the password is checked against the username beside it, as the service checks it", async () => {
    const r = await call(s, "POST", "/api/v1/admin/users/", {
      token: s.rootToken,
      body: { username: "grace", password: "grace-2024!", is_admin: 1 },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "is_admin", code: "invalid", message: "must be true or false" },
        { field: "password", code: "invalid", message: "A password must not contain the username." },
      ]),
    );
  });

  test("only the bad username: the service's answer, as before", async () => {
    const r = await call(s, "POST", "/api/v1/admin/users/", {
      token: s.rootToken,
      body: { username: "bad name", password: "a-long-enough-one" },
    });
    expect(r.json).toEqual(errorBody(400, "invalid_request", "Invalid value for username.", [USERNAME]));
  });

  test("every field of the right type but wrong: all of them (the service reported the first alone)", async () => {
    const before = await s.count("users");
    const r = await call(s, "POST", "/api/v1/admin/users/", {
      token: s.rootToken,
      body: { username: "bad name", password: "short", name: "Ada\u0000", email: "nope" },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        USERNAME,
        PASSWORD_LENGTH,
        { field: "name", code: "invalid", message: ORG_NAME_CHARS },
        { field: "email", code: "invalid", message: "Not an email address." },
      ]),
    );
    expect(await s.count("users")).toBe(before);
  });
});

describe("member add", () => {
  const MEMBERS = "/api/v1/orgs/acme/members/";
  // No user can have a name the username rules refuse: the lookup's not_found, without the lookup.
  const NO_SUCH = { field: "username", code: "not_found", message: 'There is no user "no one!".' };

  test("a role of the wrong type and a username no user can have: both", async () => {
    const r = await call(s, "POST", MEMBERS, { token: s.rootToken, body: { username: "no one!", role: 5 } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "role", code: "invalid", message: "must be one of viewer, executor, author, admin" },
        NO_SUCH,
      ]),
    );
  });

  test("only the username: the lookup's answer, as before", async () => {
    const r = await call(s, "POST", MEMBERS, {
      token: s.rootToken,
      body: { username: "no one!", role: "viewer" },
    });
    expect(r.json).toEqual(errorBody(400, "invalid_request", "No such user.", [NO_SUCH]));
  });

  test("a well-formed unknown username needs the database: the second answer", async () => {
    const r = await call(s, "POST", MEMBERS, { token: s.rootToken, body: { username: "nobody", role: 5 } });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "role", code: "invalid", message: "must be one of viewer, executor, author, admin" },
      ]),
    );
  });
});

describe("schema create", () => {
  const SCHEMAS = "/api/v1/orgs/acme/schemas/";

  test("a kind of the wrong type and a bad URI: both; nothing stored", async () => {
    const before = await s.count("org_schemas");
    const r = await call(s, "POST", SCHEMAS, {
      token: s.rootToken,
      body: { uri: "not a uri", kind: 3, schema: {} },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "kind", code: "invalid", message: 'must be "json_schema" or "xsd"' },
        URI,
      ]),
    );
    expect(await s.count("org_schemas")).toBe(before);
  });

  test("only the bad URI: as before", async () => {
    const r = await call(s, "POST", SCHEMAS, { token: s.rootToken, body: { uri: "not a uri", schema: {} } });
    expect(r.json).toEqual(errorBody(400, "invalid_request", "The schema is invalid.", [URI]));
  });
});

describe("token create and webhook create", () => {
  test("token: expires_in_days of the wrong type and a blank name", async () => {
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", {
      token: s.rootToken,
      body: { name: " ", expires_in_days: "7" },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "expires_in_days", code: "invalid", message: "must be an integer from 1 to 36500 or null" },
        { field: "name", code: "invalid", message: "A token name of 1 to 100 characters is required." },
      ]),
    );
  });

  test("webhook: events of the wrong type and a URL that is no http(s) URL (no lookup needed)", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: "ftp://example.com/", events: "run.completed" },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "events", code: "invalid", message: "must be a non-empty array of events" },
        { field: "url", code: "invalid", message: "The URL must use https or http." },
      ]),
    );
  });
});

describe("the setup form (JSON)", () => {
  const SETUP = "/api/v1/setup/";
  let fresh: Awaited<ReturnType<typeof startEmptyServer>>;
  const users = () => fresh.deps.db.exec(countOf("SELECT count(*) AS n FROM users"));

  beforeAll(async () => {
    fresh = await startEmptyServer();
  });
  afterAll(() => fresh.close());

  test("a password of the wrong type with a bad username and org slug: all three; nothing written", async () => {
    const r = await call(fresh, "POST", SETUP, {
      body: { setup_code: fresh.setupCode, username: "bad name", password: 5, org_slug: "Acme!" },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", INVALID, [
        { field: "password", code: "invalid", message: "must be a string of at most 1024 characters" },
        USERNAME,
        ORG_SLUG,
      ]),
    );
    expect(await users()).toBe(0);
  });

  test("an org name with a bidirectional override is refused, as org create and rename refuse it", async () => {
    const r = await call(fresh, "POST", SETUP, {
      body: {
        setup_code: fresh.setupCode,
        username: "admin",
        password: "a-long-enough-one",
        org_slug: "acme",
        org_name: "Acme\u202e",
      },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The first administrator and organization cannot be created.", [
        { field: "org_name", code: "invalid", message: ORG_NAME_CHARS },
      ]),
    );
    expect(await users()).toBe(0);
  });

  test("only the bad fields: the service's answer, as before", async () => {
    const r = await call(fresh, "POST", SETUP, {
      body: { setup_code: fresh.setupCode, username: "bad name", password: "short", org_slug: "Acme!" },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The first administrator and organization cannot be created.", [
        ORG_SLUG,
        USERNAME,
        PASSWORD_LENGTH,
      ]),
    );
    expect(await users()).toBe(0);
  });
});

describe("a workflow document (assay workflows import, validate --local)", () => {
  test("the same items as the API's 400: the schema's, then the draft check's", () => {
    let caught: unknown;
    try {
      parseDocument(JSON.stringify(workflow({ slug: "Bad", name: 1 })));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(DocumentError);
    expect((caught as DocumentError).items).toEqual([notString("name"), WF_SLUG]);
  });
});
