// Org-stored JSON Schemas (issue 4): CRUD with its refusals, and $ref from a workflow step to a
// stored schema, snapshotted at save time and executed by a real run.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
let viewer: string;
let outsider: string;
const base = "/api/v1/orgs/acme/schemas/";
const ADDRESS_URI = "https://example.com/address.json";
const ADDRESS = {
  type: "object",
  required: ["street", "zip"],
  properties: { street: { type: "string" }, zip: { type: "string", pattern: "^[0-9]{5}$" } },
};
const JSON_CT = { "content-type": "application/json" };
const unresolvable = (uri: string, at: string) =>
  `$ref "${uri}" at ${at} points to ${uri}, which is neither part of this schema nor stored by the ` +
  "organization; remote schemas are never fetched: inline it under $defs or store it " +
  "(POST /api/v1/orgs/{org_slug}/schemas/)";

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  author = (await s.user("sa", "acme", "author")).token;
  viewer = (await s.user("sv", "acme", "viewer")).token;
  outsider = (await s.user("so", "other", "admin")).token;
});
afterAll(() => s.close());

const create = (body: unknown, token = author) => call(s, "POST", base, { token, body });

describe("CRUD", () => {
  let id: number;
  test("201 stores a schema under its URI, with Location; Viewer reads it", async () => {
    const r = await create({ uri: "urn:example:person", schema: { type: "object" } });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      uri: "urn:example:person",
      kind: "json_schema",
      target_namespace: null,
      schema: { type: "object" },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    id = r.json.id;
    expect(r.headers.get("location")).toBe(`${s.url}${base}${id}/`);
    const got = await call(s, "GET", `${base}${id}/`, { token: viewer });
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r.json);
  });
  test("200 paginated list without schema bodies", async () => {
    const r = await call(s, "GET", `${base}?page_size=1`, { token: viewer });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [
        {
          id,
          uri: "urn:example:person",
          kind: "json_schema",
          target_namespace: null,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      ],
    });
  });
  test("200 PUT replaces uri and schema", async () => {
    const r = await call(s, "PUT", `${base}${id}/`, {
      token: author,
      body: { uri: "urn:example:human", schema: { type: "object", required: ["name"] } },
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(
      expect.objectContaining({
        id,
        uri: "urn:example:human",
        schema: { type: "object", required: ["name"] },
      }),
    );
  });
  test("200 PUT of the document already there writes nothing: updated_at and the audit log stay", async () => {
    const body = { uri: "urn:example:same", schema: { type: "object", required: ["id"] } };
    const created = (await create(body)).json;
    const entries = async () =>
      (
        await call(s, "GET", `/api/v1/orgs/acme/audit/?target_type=schema&target_id=${created.id}`, {
          token: s.rootToken,
        })
      ).json.count;
    const logged = await entries();
    const again = await call(s, "PUT", `${base}${created.id}/`, { token: author, body });
    expect([again.status, again.json]).toEqual([200, created]);
    expect((await call(s, "GET", `${base}${created.id}/`, { token: viewer })).json).toEqual(created);
    expect(await entries()).toBe(logged);
    const changed = await call(s, "PUT", `${base}${created.id}/`, {
      token: author,
      body: { ...body, schema: { type: "object" } },
    });
    expect([changed.status, changed.json.updated_at > created.updated_at]).toEqual([200, true]);
    expect(await entries()).toBe(logged + 1);
  });
  test("409 conflict on a URI the org already stores, by POST and by PUT", async () => {
    const message = 'The organization already stores a schema with the URI "urn:example:human".';
    const want = errorBody(409, "conflict", message, [{ field: "uri", code: "unique", message }]);
    const dup = await create({ uri: "urn:example:human", schema: {} });
    expect(dup.status).toBe(409);
    expect(dup.json).toEqual(want);
    const other = await create({ uri: "urn:example:other", schema: {} });
    const put = await call(s, "PUT", `${base}${other.json.id}/`, {
      token: author,
      body: { uri: "urn:example:human", schema: {} },
    });
    expect(put.status).toBe(409);
    expect(put.json).toEqual(want);
  });
  test("the same URI in another org is allowed; that org's id is 404 here", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/other/schemas/", {
      token: outsider,
      body: { uri: "urn:example:human", schema: {} },
    });
    expect(r.status).toBe(201);
    for (const method of ["GET", "PUT", "DELETE"]) {
      const x = await call(s, method, `${base}${r.json.id}/`, {
        token: author,
        body: method === "PUT" ? { uri: "urn:example:x", schema: {} } : undefined,
      });
      expect(x.status).toBe(404);
      expect(x.json).toEqual(errorBody(404, "not_found", "Schema not found."));
    }
  });
  test("404 for an id that is not a number", async () => {
    const r = await call(s, "GET", `${base}abc/`, { token: viewer });
    expect(r.json).toEqual(errorBody(404, "not_found", "Schema not found."));
  });
  test("403 when a Viewer writes", async () => {
    const r = await create({ uri: "urn:example:v", schema: {} }, viewer);
    expect(r.status).toBe(403);
    expect(r.json).toEqual(
      errorBody(403, "permission_denied", "This action needs the author role or higher."),
    );
  });
  test("204 DELETE, then 404", async () => {
    const r = await call(s, "DELETE", `${base}${id}/`, { token: author });
    expect(r.status).toBe(204);
    const again = await call(s, "GET", `${base}${id}/`, { token: viewer });
    expect(again.json).toEqual(errorBody(404, "not_found", "Schema not found."));
  });
});

describe("400 refusals", () => {
  const refused = async (body: unknown, errors: unknown[], detail = "The schema is invalid.") => {
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.json).toEqual(errorBody(400, "invalid_request", detail, errors));
  };
  // The item names the filter as every other list filter does (`status`, `format`, `step`), not
  // `query.kind` as until 2026-11-29.
  test("an unknown ?kind= on the list, the item naming kind", async () => {
    for (const kind of ["bogus", "", "XSD"]) {
      const r = await call(s, "GET", `${base}?kind=${kind}`, { token: viewer });
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", "Invalid value for kind.", [
          { field: "kind", code: "invalid", message: "kind is one of json_schema, xsd." },
        ]),
      );
    }
    const ok = await call(s, "GET", `${base}?kind=json_schema`, { token: viewer });
    expect(ok.status).toBe(200);
    expect(ok.json.results.every((x: { kind: string }) => x.kind === "json_schema")).toBe(true);
  });
  test("a schema that fails its meta-schema", async () => {
    await refused({ uri: "urn:bad:schema", schema: { type: 12 } }, [
      {
        field: "schema",
        code: "invalid_schema",
        message:
          "/type: must be equal to one of the allowed values (meta-schema #/allOf/3/properties/type/anyOf/0)",
      },
      {
        field: "schema",
        code: "invalid_schema",
        message: "/type: must be array (meta-schema #/allOf/3/properties/type/anyOf/1)",
      },
    ]);
  });
  test("a relative URI, a URI with a fragment, a URI over 500 characters", async () => {
    const message =
      "Must be an absolute URI, e.g. https://schemas.example.com/address.json or urn:example:address.";
    await refused({ uri: "address.json", schema: {} }, [{ field: "uri", code: "invalid", message }]);
    await refused({ uri: "https://example.com/a.json#/x", schema: {} }, [
      { field: "uri", code: "invalid", message: "Must be an absolute URI without a fragment or spaces." },
    ]);
    await refused({ uri: `https://example.com/${"a".repeat(500)}`, schema: {} }, [
      { field: "uri", code: "invalid", message: "A URI may hold at most 500 characters." },
    ]);
  });
  test("a $ref to a URI the org does not store", async () => {
    await refused({ uri: "urn:bad:ref", schema: { $ref: "https://example.com/nowhere.json" } }, [
      {
        field: "schema",
        code: "unresolvable_ref",
        message: unresolvable("https://example.com/nowhere.json", "#"),
      },
    ]);
  });
  test("a schema that is not an object", async () => {
    const r = await create({ uri: "urn:bad:array", schema: [] });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The request is invalid.", [
        {
          field: "schema",
          code: "invalid",
          message: "must be a JSON object (json_schema) or a string of XML (xsd)",
        },
      ]),
    );
  });
});

describe("$ref to a stored schema", () => {
  beforeAll(async () => {
    const r = await create({ uri: ADDRESS_URI, schema: ADDRESS });
    expect(r.status).toBe(201);
  });
  const step = (ref: string) => ({
    name: "shape",
    validator: "json_schema",
    config: {
      schema: { type: "object", required: ["address"], properties: { address: { $ref: ref } } },
    },
  });
  test("the step is saved with a snapshot; a run finds the violation at the right path", async () => {
    const wf = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: author,
      body: { slug: "shipping", name: "Shipping", allowed_file_types: ["JSON"], steps: [step(ADDRESS_URI)] },
    });
    expect(wf.status).toBe(201);
    expect(wf.json.steps[0].config.resources).toEqual({ [ADDRESS_URI]: ADDRESS });
    const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/shipping/runs/", {
      token: author,
      raw: JSON.stringify({ address: { street: "Main St", zip: "ABCDE" } }),
      headers: JSON_CT,
    });
    expect([201, 202]).toContain(run.status);
    const done = await waitForRun(s, author, run.json.url);
    expect(done.status).toBe("failed");
    expect(done.steps[0].findings).toEqual([
      expect.objectContaining({ severity: "error", code: "json_schema.pattern", path: "/address/zip" }),
    ]);
  });
  test("changing the stored schema later leaves the saved workflow's snapshot alone", async () => {
    const list = await call(s, "GET", base, { token: viewer });
    const stored = list.json.results.find((x: { uri: string }) => x.uri === ADDRESS_URI);
    const put = await call(s, "PUT", `${base}${stored.id}/`, {
      token: author,
      body: { uri: ADDRESS_URI, schema: { type: "object" } },
    });
    expect(put.status).toBe(200);
    const wf = await call(s, "GET", "/api/v1/orgs/acme/workflows/shipping/", { token: viewer });
    expect(wf.json.steps[0].config.resources).toEqual({ [ADDRESS_URI]: ADDRESS });
    await call(s, "PUT", `${base}${stored.id}/`, {
      token: author,
      body: { uri: ADDRESS_URI, schema: ADDRESS },
    });
  });
  test("a stored schema may $ref another; the step snapshots both", async () => {
    const zip = await create({ uri: "urn:example:zip", schema: { type: "string", minLength: 5 } });
    expect(zip.status).toBe(201);
    const place = { type: "object", properties: { zip: { $ref: "urn:example:zip" } } };
    expect((await create({ uri: "urn:example:place", schema: place })).status).toBe(201);
    const wf = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: author,
      body: {
        slug: "places",
        name: "Places",
        allowed_file_types: ["JSON"],
        steps: [step("urn:example:place")],
      },
    });
    expect(wf.status).toBe(201);
    expect(wf.json.steps[0].config.resources).toEqual({
      "urn:example:place": place,
      "urn:example:zip": { type: "string", minLength: 5 },
    });
    const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/places/runs/", {
      token: author,
      raw: JSON.stringify({ address: { zip: "1" } }),
      headers: JSON_CT,
    });
    const done = await waitForRun(s, author, run.json.url);
    expect(done.steps[0].findings).toEqual([
      expect.objectContaining({ code: "json_schema.minLength", path: "/address/zip" }),
    ]);
  });
  test("400 at save time when the step references a URI the org does not store", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: author,
      body: {
        slug: "dangling",
        name: "Dangling",
        allowed_file_types: ["JSON"],
        steps: [step("https://example.com/unknown.json")],
      },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "unresolvable_ref",
          message: unresolvable("https://example.com/unknown.json", "#/properties/address"),
        },
      ]),
    );
  });
  test("another org cannot reference acme's stored schema", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/other/workflows/", {
      token: outsider,
      body: { slug: "steal", name: "Steal", allowed_file_types: ["JSON"], steps: [step(ADDRESS_URI)] },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "unresolvable_ref",
          message: unresolvable(ADDRESS_URI, "#/properties/address"),
        },
      ]),
    );
  });
});
