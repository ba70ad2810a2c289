import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
let viewer: string;
let outsider: string;
beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("alice", "acme", "author")).token;
  viewer = (await s.user("vic", "acme", "viewer")).token;
  outsider = (await s.user("olga", "other", "admin")).token;
});
afterAll(() => s.close());

const base = "/api/v1/orgs/acme/workflows/";
const wf = (slug: string, extra: Record<string, unknown> = {}) => ({
  slug,
  name: `Workflow ${slug}`,
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
  ...extra,
});

describe("create and read", () => {
  test("201 creates a workflow with steps, version 1, absolute url and Location", async () => {
    const r = await call(s, "POST", base, {
      token: author,
      body: wf("orders", { description: "Orders feed" }),
    });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      slug: "orders",
      name: "Workflow orders",
      description: "Orders feed",
      org_slug: "acme",
      status: "active",
      allowed_file_types: ["JSON"],
      fail_fast: true,
      retention_days: null,
      version: 1,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      url: `${s.url}/api/v1/orgs/acme/workflows/orders/`,
      steps: [
        {
          id: expect.any(Number),
          order: 1,
          name: "syntax",
          validator: "syntax",
          is_active: true,
          config: {},
        },
      ],
    });
    expect(r.headers.get("location")).toBe(r.json.url);
  });
  test("200 detail by slug and by numeric id", async () => {
    const bySlug = await call(s, "GET", `${base}orders/`, { token: viewer });
    expect(bySlug.status).toBe(200);
    const byId = await call(s, "GET", `${base}${bySlug.json.id}/`, { token: viewer });
    expect(byId.json).toEqual(bySlug.json);
    const noSlash = await call(s, "GET", `${base}orders`, { token: viewer });
    expect(noSlash.status).toBe(200);
  });
  test("a list item is the detail without steps, with step_count; allowed_file_types on both", async () => {
    // CONTRACT §2: detail adds `steps`, list items add `step_count`; the spec: allowed_file_types
    // is present in the list and detail responses.
    const detail = await call(s, "GET", `${base}orders/`, { token: viewer });
    const list = await call(s, "GET", base, { token: viewer });
    const item = list.json.results.find((w: { slug: string }) => w.slug === "orders");
    const { steps, ...rest } = detail.json;
    expect(steps).toHaveLength(1);
    expect(item).toEqual({ ...rest, step_count: 1 });
    expect(Object.keys(item).sort()).toEqual([...Object.keys(rest), "step_count"].sort());
    expect(detail.json).not.toHaveProperty("step_count");
    expect(item.allowed_file_types).toEqual(["JSON"]);
  });
  test("409 conflict when the slug is taken", async () => {
    const before = await s.count("workflows");
    const r = await call(s, "POST", base, { token: author, body: wf("orders") });
    expect(r.status).toBe(409);
    expect(r.json).toEqual(
      errorBody(409, "conflict", 'A workflow with the slug "orders" already exists in this organization.', [
        { field: "slug", code: "unique", message: expect.any(String) },
      ]),
    );
    expect(await s.count("workflows")).toBe(before);
  });
  test("400 invalid_request lists every problem in errors[]", async () => {
    const before = await s.count("workflows");
    const r = await call(s, "POST", base, {
      token: author,
      body: {
        slug: "Bad Slug",
        name: "",
        allowed_file_types: ["PDF"],
        steps: [{ name: "x", validator: "nope", config: {} }],
      },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        { field: "slug", code: "invalid", message: expect.any(String) },
        { field: "name", code: "invalid", message: expect.any(String) },
        { field: "allowed_file_types", code: "invalid", message: expect.any(String) },
        { field: "steps[0].validator", code: "unknown_validator", message: expect.any(String) },
      ]),
    );
    expect(await s.count("workflows")).toBe(before);
  });
  test("400 with a field for a wrong type (request schema)", async () => {
    const r = await call(s, "POST", base, { token: author, body: { ...wf("typed"), fail_fast: "yes" } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The request is invalid.", [
        { field: "fail_fast", code: "invalid", message: "must be true or false" },
      ]),
    );
  });
  test("400 with a field for an unknown key", async () => {
    const r = await call(s, "POST", base, { token: author, body: { ...wf("extra"), colour: "red" } });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe("invalid_request");
    expect(r.json.errors.length).toBeGreaterThan(0);
  });
  test("400 a bad step config is refused at save time (JSON Schema that is not a schema)", async () => {
    const r = await call(s, "POST", base, {
      token: author,
      body: wf("badschema", {
        steps: [{ name: "schema", validator: "json_schema", config: { schema: { type: 12 } } }],
      }),
    });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe("invalid_request");
    expect(r.json.errors[0].field).toMatch(/^steps\[0\]\.config/);
  });
  test("slugs that look like ids are refused so the path identifier is never ambiguous", async () => {
    const r = await call(s, "POST", base, { token: author, body: wf("123") });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].field).toBe("slug");
  });
});

describe("roles and isolation", () => {
  test("403 permission_denied for a viewer creating", async () => {
    const r = await call(s, "POST", base, { token: viewer, body: wf("v") });
    expect(r.json).toEqual(
      errorBody(403, "permission_denied", "This action needs the author role or higher."),
    );
  });
  test("403 for a non-member, 404 for an unknown org", async () => {
    expect((await call(s, "GET", base, { token: outsider })).json).toEqual(
      errorBody(403, "permission_denied", "You are not a member of this organization."),
    );
    expect((await call(s, "GET", "/api/v1/orgs/nope/workflows/", { token: viewer })).json).toEqual(
      errorBody(404, "not_found", "Organization not found."),
    );
  });
  test("404 for another org's workflow id through my org", async () => {
    const mine = await call(s, "POST", "/api/v1/orgs/other/workflows/", {
      token: outsider,
      body: wf("secret"),
    });
    expect(mine.status).toBe(201);
    const r = await call(s, "GET", `${base}${mine.json.id}/`, { token: viewer });
    expect(r.json).toEqual(errorBody(404, "not_found", "Workflow not found."));
    const r2 = await call(s, "GET", `${base}secret/`, { token: viewer });
    expect(r2.status).toBe(404);
  });
  test("403 for a suspended and for a deleted org", async () => {
    const id = await s.org("frozen");
    const t = (await s.user("fred", "frozen", "admin")).token;
    await s.deps.orgs.update(id, { status: "suspended" }, SYSTEM);
    expect((await call(s, "GET", "/api/v1/orgs/frozen/workflows/", { token: t })).json).toEqual(
      errorBody(403, "permission_denied", "The organization is suspended."),
    );
    await s.deps.orgs.update(id, { status: "active", deleted_at: new Date().toISOString() }, SYSTEM);
    expect((await call(s, "GET", "/api/v1/orgs/frozen/workflows/", { token: t })).json).toEqual(
      errorBody(403, "permission_denied", "The organization has been deleted."),
    );
  });
});

describe("authoring", () => {
  test("PATCH changes named fields and bumps the version; inactive and back", async () => {
    const r = await call(s, "PATCH", `${base}orders/`, {
      token: author,
      body: { status: "inactive", fail_fast: false },
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(expect.objectContaining({ status: "inactive", fail_fast: false, version: 2 }));
    expect(r.json.steps).toHaveLength(1);
    const back = await call(s, "PATCH", `${base}orders/`, { token: author, body: { status: "active" } });
    expect(back.json.version).toBe(3);
  });
  test("PUT replaces the definition", async () => {
    const r = await call(s, "PUT", `${base}orders/`, {
      token: author,
      body: wf("orders", { allowed_file_types: ["JSON", "YAML"], steps: [] }),
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(
      expect.objectContaining({
        allowed_file_types: ["JSON", "YAML"],
        fail_fast: true,
        version: 4,
        steps: [],
      }),
    );
  });
  test("steps: add at a position, edit, reorder, deactivate, delete — each bumps the version", async () => {
    const a = await call(s, "POST", `${base}orders/steps/`, {
      token: author,
      body: { name: "a", validator: "syntax", config: {} },
    });
    expect(a.status).toBe(201);
    expect(a.json).toEqual({
      id: expect.any(Number),
      order: 1,
      name: "a",
      validator: "syntax",
      is_active: true,
      config: {},
    });
    const b = await call(s, "POST", `${base}orders/steps/`, {
      token: author,
      body: { name: "b", validator: "syntax", config: {}, order: 1 },
    });
    expect(b.json.order).toBe(1);
    const moved = await call(s, "PATCH", `${base}orders/steps/${b.json.id}/`, {
      token: author,
      body: { order: 2, is_active: false },
    });
    expect(moved.json).toEqual(expect.objectContaining({ order: 2, is_active: false, name: "b" }));
    const detail = await call(s, "GET", `${base}orders/`, { token: author });
    expect(detail.json.steps.map((x: { name: string }) => x.name)).toEqual(["a", "b"]);
    expect(detail.json.version).toBe(7);
    const del = await call(s, "DELETE", `${base}orders/steps/${a.json.id}/`, { token: author });
    expect(del.status).toBe(204);
    const after = await call(s, "GET", `${base}orders/`, { token: author });
    expect(after.json.steps).toEqual([expect.objectContaining({ name: "b", order: 1 })]);
    expect(after.json.version).toBe(8);
  });
  test("404 for a step of another workflow", async () => {
    const r = await call(s, "PATCH", `${base}orders/steps/999999/`, { token: author, body: { name: "x" } });
    expect(r.json).toEqual(errorBody(404, "not_found", "Step not found."));
  });
  test("400 for a bad step config on PATCH names the field", async () => {
    const steps = (await call(s, "GET", `${base}orders/`, { token: author })).json.steps;
    const r = await call(s, "PATCH", `${base}orders/steps/${steps[0].id}/`, {
      token: author,
      body: { validator: "json_schema", config: { schema: { minimum: "x" } } },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].field).toMatch(/^config/);
  });
  test("DELETE frees the slug; detail answers 404", async () => {
    await call(s, "POST", base, { token: author, body: wf("temp") });
    expect((await call(s, "DELETE", `${base}temp/`, { token: author })).status).toBe(204);
    expect((await call(s, "GET", `${base}temp/`, { token: author })).status).toBe(404);
    expect((await call(s, "POST", base, { token: author, body: wf("temp") })).status).toBe(201);
  });
});

describe("a draft's problems", () => {
  test("are listed step by step, each step's config problems with its other ones", async () => {
    const r = await call(s, "POST", base, {
      token: author,
      body: wf("order-of-problems", {
        steps: [
          { name: "shape", validator: "json_schema", config: { schema: { type: "nope" } } },
          { name: "", validator: "syntax", config: {} },
          {
            name: "rules",
            validator: "assertions",
            config: { rules: [{ id: "r", expr: "1 +", message: "m" }] },
          },
        ],
      }),
    });
    expect(r.status).toBe(400);
    const fields = (r.json.errors as { field: string }[]).map((e) => e.field.replace(/\..*/, ""));
    expect(fields.length).toBeGreaterThanOrEqual(3);
    expect(fields).toEqual([...fields].sort());
    expect(new Set(fields)).toEqual(new Set(["steps[0]", "steps[1]", "steps[2]"]));
  });
});

describe("integers in bodies are JSON numbers, bounded", () => {
  // A string where an integer goes is a 400 naming the field, like -1 is: "-1" used to be saved as
  // 1 or -1, "0x10" as 16, and 1e300 was a 500 (SQLite: cannot store REAL value in INTEGER column).
  const invalidAs = (field: string, message: string) => ({
    detail: "The request is invalid.",
    code: "invalid_request",
    status: 400,
    errors: [{ field, code: "invalid", message }],
  });
  const RETENTION = "must be an integer from 0 to 36500 or null";
  const ORDER = "must be an integer from 1 to 50";
  const BAD = ["-1", "0x10", "1e3", "5", " ", "", 1e300, 9e15, -1, 36501, 2.5];

  test("retention_days: 400 on POST, PUT and PATCH, and the workflow stays as it was", async () => {
    expect(
      (await call(s, "POST", base, { token: author, body: wf("typed", { retention_days: 30 }) })).status,
    ).toBe(201);
    const before = (await call(s, "GET", `${base}typed/`, { token: author })).json;
    for (const retention_days of BAD) {
      const patch = await call(s, "PATCH", `${base}typed/`, { token: author, body: { retention_days } });
      expect(patch.status).toBe(400);
      expect(patch.json).toEqual(invalidAs("retention_days", RETENTION));
      const put = await call(s, "PUT", `${base}typed/`, {
        token: author,
        body: wf("typed", { retention_days }),
      });
      expect(put.json).toEqual(invalidAs("retention_days", RETENTION));
      const post = await call(s, "POST", base, { token: author, body: wf("typed-new", { retention_days }) });
      expect(post.json).toEqual(invalidAs("retention_days", RETENTION));
    }
    expect((await call(s, "GET", `${base}typed/`, { token: author })).json).toEqual(before);
    expect((await call(s, "GET", `${base}typed-new/`, { token: author })).status).toBe(404);
    expect(await s.sql("SELECT retention_days FROM workflows WHERE slug = 'typed'")).toEqual([
      { retention_days: 30 },
    ]);
    // The bounds themselves are accepted.
    for (const retention_days of [0, 36500, null])
      expect(
        (await call(s, "PATCH", `${base}typed/`, { token: author, body: { retention_days } })).json
          .retention_days,
      ).toBe(retention_days);
  });

  test("a step's order: 400 on add and on edit, and the steps stay as they were", async () => {
    await call(s, "POST", base, {
      token: author,
      body: wf("typed-steps", {
        steps: [
          { name: "a", validator: "syntax", config: {} },
          { name: "b", validator: "syntax", config: {} },
        ],
      }),
    });
    const before = (await call(s, "GET", `${base}typed-steps/`, { token: author })).json;
    const b = before.steps[1];
    for (const order of [...BAD, 0, 51]) {
      const edit = await call(s, "PATCH", `${base}typed-steps/steps/${b.id}/`, {
        token: author,
        body: { order },
      });
      expect(edit.status).toBe(400);
      expect(edit.json).toEqual(invalidAs("order", ORDER));
      const add = await call(s, "POST", `${base}typed-steps/steps/`, {
        token: author,
        body: { name: "c", validator: "syntax", config: {}, order },
      });
      expect(add.json).toEqual(invalidAs("order", ORDER));
    }
    expect((await call(s, "GET", `${base}typed-steps/`, { token: author })).json).toEqual(before);
    const moved = await call(s, "PATCH", `${base}typed-steps/steps/${b.id}/`, {
      token: author,
      body: { order: 1 },
    });
    expect(moved.json).toEqual({ ...b, order: 1 });
    // An order past the end (up to 50, the most steps a workflow has) still means "last".
    const last = await call(s, "POST", `${base}typed-steps/steps/`, {
      token: author,
      body: { name: "c", validator: "syntax", config: {}, order: 50 },
    });
    expect(last.json.order).toBe(3);
  });
});

describe("pagination", () => {
  beforeAll(async () => {
    for (let i = 0; i < 5; i++) await call(s, "POST", base, { token: author, body: wf(`p${i}`) });
  });
  test("count, next and previous as absolute URLs keeping other parameters", async () => {
    const all = await call(s, "GET", base, { token: viewer });
    const n = all.json.count;
    expect(all.json.results).toHaveLength(n);
    expect(all.json.results[0]).toEqual(
      expect.objectContaining({ allowed_file_types: expect.any(Array), step_count: expect.any(Number) }),
    );
    const p2 = await call(s, "GET", `${base}?page_size=2&page=2&x=1`, { token: viewer });
    expect(p2.json.results).toHaveLength(2);
    expect(p2.json.next).toBe(`${s.url}${base}?page_size=2&page=3&x=1`);
    expect(p2.json.previous).toBe(`${s.url}${base}?page_size=2&page=1&x=1`);
  });
  test("past the end: empty results, next null", async () => {
    const r = await call(s, "GET", `${base}?page=99`, { token: viewer });
    expect(r.status).toBe(200);
    expect(r.json.results).toEqual([]);
    expect(r.json.next).toBeNull();
    expect(r.json.previous).not.toBeNull();
  });
  test.each([
    ["page=0", "page"],
    ["page=abc", "page"],
    ["page_size=0", "page_size"],
    ["page_size=1000", "page_size"],
    ["page_size=201", "page_size"],
  ])("400 for %s", async (q, field) => {
    const r = await call(s, "GET", `${base}?${q}`, { token: viewer });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "Invalid pagination parameters.", [
        { field, code: "invalid", message: expect.any(String) },
      ]),
    );
  });
  test("page_size=200 and page_size=1 are allowed", async () => {
    expect((await call(s, "GET", `${base}?page_size=200`, { token: viewer })).status).toBe(200);
    const one = await call(s, "GET", `${base}?page_size=1`, { token: viewer });
    expect(one.json.results).toHaveLength(1);
  });
});

describe("a change that changes nothing", () => {
  test("PATCH {} or the same values: 200 with the workflow as it is, no new version", async () => {
    await call(s, "POST", base, { token: author, body: wf("same") });
    const before = (await call(s, "GET", `${base}same/`, { token: author })).json;
    expect(before.version).toBe(1);
    for (const body of [
      {},
      { name: before.name },
      { status: "active", fail_fast: true },
      { steps: [{ name: "syntax", validator: "syntax", config: {} }] },
    ]) {
      const r = await call(s, "PATCH", `${base}same/`, { token: author, body });
      expect(r.status).toBe(200);
      expect(r.json).toEqual(before);
    }
    const put = await call(s, "PUT", `${base}same/`, { token: author, body: wf("same") });
    expect(put.json).toEqual(before);
    const step = await call(s, "PATCH", `${base}same/steps/${before.steps[0].id}/`, {
      token: author,
      body: { order: 1 },
    });
    expect(step.json).toEqual(before.steps[0]);
    expect((await call(s, "GET", `${base}same/`, { token: author })).json).toEqual(before);
    // A real change still counts.
    expect(
      (await call(s, "PATCH", `${base}same/`, { token: author, body: { name: "Renamed" } })).json.version,
    ).toBe(2);
  });

  test("400 for a body that is null, an array, a number or missing; nothing is saved", async () => {
    const before = (await call(s, "GET", `${base}same/`, { token: author })).json;
    const notObject = errorBody(400, "invalid_request", "The request body must be a JSON object.", [
      { field: "body", code: "invalid", message: "The body must be a JSON object ({…})." },
    ]);
    for (const raw of ["null", "[]", '[{"name": "x"}]', "1", '"name"'])
      expect(
        (
          await call(s, "PATCH", `${base}same/`, {
            token: author,
            raw,
            headers: { "content-type": "application/json" },
          })
        ).json,
      ).toEqual(notObject);
    const missing = errorBody(400, "invalid_request", "The request body is missing.", [
      { field: "body", code: "required", message: "This endpoint takes a JSON object ({…})." },
    ]);
    expect((await call(s, "PATCH", `${base}same/`, { token: author })).json).toEqual(missing);
    expect(
      (
        await call(s, "PATCH", `${base}same/`, {
          token: author,
          raw: "",
          headers: { "content-type": "application/json" },
        })
      ).json,
    ).toEqual(missing);
    expect((await call(s, "GET", `${base}same/`, { token: author })).json).toEqual(before);
  });
});

describe("file types the steps read", () => {
  test("400 when a step reads none of the allowed file types, naming the step", async () => {
    const r = await call(s, "POST", base, {
      token: author,
      body: wf("xml-json", {
        allowed_file_types: ["XML"],
        steps: [
          { name: "well-formed", validator: "syntax", config: {} },
          { name: "order schema", validator: "json_schema", config: { schema: { type: "object" } } },
        ],
      }),
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[1].validator",
          code: "file_type_unsupported",
          message: `Step 2 "order schema" (json_schema) reads JSON, YAML: none of the workflow's allowed_file_types (XML).`,
        },
      ]),
    );
    expect((await call(s, "GET", `${base}xml-json/`, { token: author })).status).toBe(404);
  });

  test("400 when no allowed type is read by every active step", async () => {
    const r = await call(s, "POST", base, {
      token: author,
      body: wf("mixed", {
        allowed_file_types: ["JSON", "XML"],
        steps: [
          { name: "json", validator: "json_schema", config: { schema: {} } },
          {
            name: "xml",
            validator: "xml_schema",
            config: { schema_type: "dtd", schema: "<!ELEMENT a EMPTY>" },
          },
        ],
      }),
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "allowed_file_types",
          code: "file_type_unsupported",
          message:
            'No allowed file type is read by every active step, so every run would be refused: Step 1 "json" (json_schema) reads JSON, YAML; Step 2 "xml" (xml_schema) reads XML.',
        },
      ]),
    );
  });

  test("an inactive step does not count; adding or activating one that cannot read is 400", async () => {
    const r = await call(s, "POST", base, {
      token: author,
      body: wf("xml-only", {
        allowed_file_types: ["XML"],
        steps: [
          { name: "syntax", validator: "syntax", config: {} },
          { name: "later", validator: "json_schema", config: { schema: {} }, is_active: false },
        ],
      }),
    });
    expect(r.status).toBe(201);
    const activate = await call(s, "PATCH", `${base}xml-only/steps/${r.json.steps[1].id}/`, {
      token: author,
      body: { is_active: true },
    });
    expect(activate.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "validator",
          code: "file_type_unsupported",
          message: `Step 2 "later" (json_schema) reads JSON, YAML: none of the workflow's allowed_file_types (XML).`,
        },
      ]),
    );
    const add = await call(s, "POST", `${base}xml-only/steps/`, {
      token: author,
      body: { name: "csv", validator: "csv_table", config: { schema: { fields: [{ name: "id" }] } } },
    });
    expect(add.status).toBe(400);
    expect(add.json.errors).toEqual([
      {
        field: "validator",
        code: "file_type_unsupported",
        message: `Step 3 "csv" (csv_table) reads CSV: none of the workflow's allowed_file_types (XML).`,
      },
    ]);
    const narrowing = await call(s, "PATCH", `${base}xml-only/`, {
      token: author,
      body: { allowed_file_types: ["CSV"] },
    });
    expect(narrowing.status).toBe(200); // syntax reads CSV; the json_schema step is inactive
    expect((await call(s, "GET", `${base}xml-only/`, { token: author })).json.version).toBe(2);
  });
});
