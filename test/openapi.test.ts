// The OpenAPI document as served: what a client generator reads. The linters (npm run
// lint:openapi) check it against the OpenAPI rules; this file checks what they cannot know —
// that it says what the API does: the run start's three modes and headers, named schemas, the
// route conventions of docs/api.md, 204s without content, JSON-only bodies, security.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { conventionProblems } from "../src/http/openapi/document.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

// biome-ignore lint/suspicious/noExplicitAny: a JSON document walked by path
type J = any;
let s: TestServer;
let doc: J;
const op = (path: string, method: string) => doc.paths[path][method];
const RUN = "/api/v1/orgs/{org_slug}/workflows/{workflow}/runs/";

beforeAll(async () => {
  s = await startTestServer();
  const r = await call(s, "GET", "/api/v1/openapi.json");
  expect(r.status).toBe(200);
  doc = r.json;
});
afterAll(() => s.close());

/** Every keyword used at a schema position, with where (properties' names are not keywords). */
function schemaKeywords(schema: J, at: string, out: [string, string][]) {
  if (!schema || typeof schema !== "object") return;
  for (const [k, v] of Object.entries(schema)) {
    out.push([k, at]);
    if (["properties", "patternProperties", "$defs"].includes(k))
      for (const [name, sub] of Object.entries(v as J)) schemaKeywords(sub, `${at}/${k}/${name}`, out);
    else if (["anyOf", "oneOf", "allOf", "prefixItems"].includes(k))
      (v as J[]).forEach((sub, i) => {
        schemaKeywords(sub, `${at}/${k}/${i}`, out);
      });
    else if (["items", "additionalProperties", "not", "contains"].includes(k) && typeof v === "object")
      schemaKeywords(v, `${at}/${k}`, out);
  }
}
function allSchemas(): [J, string][] {
  const found: [J, string][] = [];
  for (const [name, sch] of Object.entries(doc.components.schemas)) found.push([sch, `schemas/${name}`]);
  for (const [path, item] of Object.entries(doc.paths as J))
    for (const [method, o] of Object.entries(item as J) as [string, J][]) {
      const at = `${method} ${path}`;
      for (const p of o.parameters ?? []) if (p.schema) found.push([p.schema, `${at} ${p.name}`]);
      for (const [type, m] of Object.entries(o.requestBody?.content ?? {}) as [string, J][])
        found.push([m.schema, `${at} body ${type}`]);
      for (const [status, r] of Object.entries(o.responses) as [string, J][])
        for (const [type, m] of Object.entries(r.content ?? {}) as [string, J][])
          found.push([m.schema, `${at} ${status} ${type}`]);
    }
  return found;
}

describe("the document", () => {
  test("is OpenAPI 3.1 naming the server it came from", () => {
    expect(doc.openapi).toBe("3.1.1");
    expect(doc.servers).toEqual([{ url: s.url }]);
    expect(doc.info.license).toEqual({ name: "Apache-2.0", identifier: "Apache-2.0" });
  });

  test("every route follows the conventions of docs/api.md", () => {
    expect(conventionProblems(doc)).toEqual([]);
    // Readable ids, not postApiV1OrgsByOrg_slug…
    expect(op("/api/v1/orgs/{org_slug}/workflows/", "get").operationId).toBe("listWorkflows");
    expect(op(RUN, "post").operationId).toBe("startRun");
    for (const t of doc.tags) expect(t.description.length).toBeGreaterThan(10);
  });

  test("schemas hold no TypeBox `error`, no `nullable`, no numeric-text branch", () => {
    const bad: string[] = [];
    for (const [schema, at] of allSchemas()) {
      const kws: [string, string][] = [];
      schemaKeywords(schema, at, kws);
      for (const [k, where] of kws) if (k === "error" || k === "nullable") bad.push(`${where}: ${k}`);
    }
    expect(bad).toEqual([]);
    const text = JSON.stringify(doc);
    expect(text).not.toContain('"format":"integer"');
    expect(text).not.toContain('"type":"void"');
    // t.Nullable is a 3.1 type array
    expect(doc.components.schemas.Finding.properties.line).toEqual({ type: ["integer", "null"] });
  });

  test("named reusable schemas, referred to by $ref", () => {
    const names = Object.keys(doc.components.schemas);
    for (const n of [
      "Run",
      "Step",
      "StepResult",
      "Finding",
      "Workflow",
      "WorkflowSummary",
      "Error",
      "ErrorItem",
    ])
      expect(names).toContain(n);
    for (const n of ["RunPage", "WorkflowSummaryPage", "OrganizationPage", "TokenPage", "WebhookPage"])
      expect(names).toContain(n);
    expect(doc.components.schemas.RunPage.properties.results.items).toEqual({
      $ref: "#/components/schemas/Run",
    });
    expect(doc.components.schemas.Workflow.properties.steps.items).toEqual({
      $ref: "#/components/schemas/Step",
    });
    expect(op("/api/v1/orgs/{org_slug}/runs/{run_id}/", "get").responses["200"].content).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/Run" } },
    });
    // A nullable named schema: a $ref beside a null branch.
    expect(doc.components.schemas.Run.properties.summary).toEqual({
      anyOf: [{ $ref: "#/components/schemas/RunSummary" }, { type: "null" }],
    });
  });

  test("paths are not doubled with and without the trailing slash", () => {
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.endsWith("/") && paths.includes(p.slice(0, -1)))).toEqual([]);
    expect(paths).not.toContain("/api/v1/openapi.json");
    expect(paths.some((p) => p.startsWith("/api/docs") || p.startsWith("/app") || p === "/")).toBe(false);
  });
});

describe("the document does not depend on what was served before it", () => {
  test("a server that listed organizations (both lists) first serves the same document", async () => {
    const other = await startTestServer();
    try {
      const u = await other.user("lister", "acme", "viewer");
      expect((await call(other, "GET", "/api/v1/orgs/", { token: u.token })).status).toBe(200);
      expect((await call(other, "GET", "/api/v1/admin/orgs/", { token: other.rootToken })).status).toBe(200);
      expect((await call(other, "GET", "/api/v1/orgs/acme/", { token: u.token })).status).toBe(200);
      const r = await call(other, "GET", "/api/v1/openapi.json");
      expect(r.status).toBe(200);
      expect({ ...r.json, servers: doc.servers }).toEqual(doc);
    } finally {
      await other.close();
    }
  });
});

describe("operations", () => {
  test("startRun takes the three modes as its requestBody", () => {
    const body = op(RUN, "post").requestBody;
    expect(body.required).toBe(true);
    expect(body.content["application/json"].schema.anyOf[0]).toEqual({
      $ref: "#/components/schemas/RunEnvelope",
    });
    for (const raw of ["application/xml", "text/xml", "application/yaml", "text/csv", "text/plain"])
      expect(body.content[raw].schema.type).toBe("string");
    expect(body.content["multipart/form-data"].schema).toEqual({ $ref: "#/components/schemas/RunMultipart" });
    const multipart = doc.components.schemas.RunMultipart.properties;
    expect(Object.keys(multipart).sort()).toEqual(
      ["content", "content_encoding", "content_type", "file", "filename", "metadata"].sort(),
    );
    expect(Object.keys(doc.components.schemas.RunEnvelope.properties).sort()).toEqual(
      ["content", "content_encoding", "content_type", "filename", "metadata"].sort(),
    );
  });

  test("startRun declares its request headers and answer headers", () => {
    const o = op(RUN, "post");
    const refs = o.parameters
      .filter((p: J) => p.$ref)
      .map((p: J) => doc.components.parameters[p.$ref.split("/").pop()]);
    expect(refs.map((p: J) => `${p.in}:${p.name}`).sort()).toEqual(
      [
        "header:Content-Encoding",
        "header:Idempotency-Key",
        "header:Prefer",
        "header:X-Filename",
        "header:X-Submission-Mode",
      ].sort(),
    );
    for (const status of ["201", "202"]) {
      const h = Object.keys(o.responses[status].headers);
      for (const name of [
        "Location",
        "Preference-Applied",
        "Idempotent-Replayed",
        "RateLimit-Policy",
        "RateLimit",
      ])
        expect(h).toContain(name);
    }
    expect(Object.keys(o.responses["202"].headers)).toContain("Retry-After");
    const tooMany = doc.components.responses.TooManyRequests;
    expect(Object.keys(tooMany.headers).sort()).toEqual([
      "RateLimit",
      "RateLimit-Policy",
      "Retry-After",
      "Warning",
      "X-Request-Id",
    ]);
    for (const status of ["401", "403", "404", "409", "413", "415", "422", "429"])
      expect(o.responses[status].$ref).toStartWith("#/components/responses/");
  });

  test("a token beyond the user's 100 active ones: createToken documents its 409", () => {
    expect(op("/api/v1/users/me/tokens/", "post").responses["409"]).toEqual({
      $ref: "#/components/responses/Conflict",
    });
  });

  test("JSON bodies are advertised as JSON only", () => {
    for (const [path, item] of Object.entries(doc.paths as J))
      for (const [method, o] of Object.entries(item as J) as [string, J][]) {
        if (!o.requestBody || o.operationId === "startRun") continue;
        expect({ at: `${method} ${path}`, types: Object.keys(o.requestBody.content) }).toEqual({
          at: `${method} ${path}`,
          types: ["application/json"],
        });
        // and a non-JSON body is answered 415 (the Public variant on a public operation: no Warning)
        expect(o.responses["415"].$ref).toMatch(/^#\/components\/responses\/(Public)?UnsupportedMediaType$/);
      }
    expect(
      op("/api/v1/orgs/{org_slug}/workflows/", "post").requestBody.content["application/json"].schema,
    ).toEqual({
      $ref: "#/components/schemas/WorkflowInput",
    });
  });

  test("204 and 304 answers have no content; every other answer describes its body", () => {
    let n = 0;
    for (const item of Object.values(doc.paths as J))
      for (const o of Object.values(item as J) as J[]) {
        const r = o.responses["204"];
        if (r) {
          n++;
          expect(r.content).toBeUndefined();
        }
        for (const [status, res] of Object.entries(o.responses) as [string, J][])
          if (status === "304") expect(res.content).toBeUndefined();
          else if (status !== "204" && !res.$ref) expect(res.content).toBeDefined();
      }
    expect(n).toBeGreaterThan(8);
  });

  test("errors per operation; every operation has a 4XX (at least the Host header's 400)", () => {
    const without: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as J))
      for (const [method, o] of Object.entries(item as J) as [string, J][])
        if (!Object.keys(o.responses).some((st) => st.startsWith("4"))) without.push(`${method} ${path}`);
    // Even the probes, which read one flag and are never rate limited, refuse a request without
    // a usable Host header (src/http/fallback.ts).
    expect(without.sort()).toEqual([]);
    expect(Object.keys(op("/api/v1/orgs/{org_slug}/runs/{run_id}/content/", "get").responses)).toContain(
      "410",
    );
  });

  test("security: a bearer token or the session cookie unless the operation is public", () => {
    expect(doc.security).toEqual([{ bearer: [] }, { session: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    // Over HTTPS the cookie has another name (src/web/sessions.ts): both are said.
    expect(doc.components.securitySchemes.session).toMatchObject({
      type: "apiKey",
      in: "cookie",
      name: "assay_session",
    });
    expect(doc.components.securitySchemes.session.description).toContain("`__Host-assay_session` over HTTPS");
    expect(doc.components.headers.SetCookie.description).toContain("over HTTPS `__Host-assay_session`");
    const pub: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as J))
      for (const [method, o] of Object.entries(item as J) as [string, J][])
        if (o.security) pub.push(`${method} ${path} ${JSON.stringify(o.security)}`);
    expect(pub.sort()).toEqual([
      "get /api/v1/setup/ []",
      "get /healthz []",
      "get /readyz []",
      "post /api/v1/auth/login/ []",
      'post /api/v1/auth/logout/ [{"session":[]},{}]',
      "post /api/v1/setup/ []",
    ]);
    // Authenticated answers carry the request id, the rate-limit headers, and Warning near a
    // token's rotation deadline.
    expect(Object.keys(op("/api/v1/orgs/", "get").responses["200"].headers)).toEqual([
      "X-Request-Id",
      "RateLimit-Policy",
      "RateLimit",
      "Warning",
    ]);
    // Public ones carry the address's budget (CONTRACT §8: every answer), never a Warning.
    expect(Object.keys(op("/healthz", "get").responses["200"].headers)).toEqual([
      "X-Request-Id",
      "RateLimit-Policy",
      "RateLimit",
    ]);
  });

  test("page numbers are documented as the integers they are", () => {
    const params = op("/api/v1/orgs/{org_slug}/runs/", "get").parameters;
    const byName = Object.fromEntries(params.map((p: J) => [p.name, p]));
    expect(byName.page.schema).toEqual({
      type: "integer",
      minimum: 1,
      default: 1,
      description: "1-based page number",
    });
    expect(byName.page_size.schema.maximum).toBe(200);
    expect(byName.status.schema.enum).toContain("succeeded");
  });
});

// What global layers answer on every route, as the document must say (src/http/limits.ts,
// src/http/errors.ts); the live answers are in test/openapi-answers.test.ts.
describe("statuses and headers from the global layers", () => {
  const ops = (): [string, string, J][] =>
    Object.entries(doc.paths as J).flatMap(([path, item]) =>
      Object.entries(item as J).map(([method, o]) => [path, method, o] as [string, string, J]),
    );
  const ref = (o: J, status: string) => o.responses[status]?.$ref as string | undefined;
  const isPublic = (o: J) => Array.isArray(o.security) && !o.security.every((x: J) => Object.keys(x).length);

  test("503 (with Retry-After) wherever the database is reached: all but /healthz", () => {
    const without = ops()
      .filter(([, , o]) => !ref(o, "503")?.endsWith("ServiceUnavailable"))
      .map(([p, m]) => `${m} ${p}`);
    expect(without).toEqual(["get /healthz"]);
    expect(Object.keys(doc.components.responses.ServiceUnavailable.headers)).toContain("Retry-After");
  });

  test("400 on every operation: a request without a usable Host header is refused before routing", () => {
    const no400 = ops().filter(([, , o]) => !o.responses["400"]);
    expect(no400.map(([p, m]) => `${m} ${p}`)).toEqual([]);
    for (const [path, method] of [
      ["/healthz", "get"],
      ["/readyz", "get"],
      ["/api/v1/setup/", "get"],
      ["/api/v1/auth/logout/", "post"],
    ])
      expect(ref(op(path, method), "400")).toBe("#/components/responses/PublicBadRequest");
  });

  test("409 declares the Retry-After that idempotency_key_in_progress sends", () => {
    for (const name of ["Conflict", "PublicConflict"])
      expect(doc.components.responses[name]?.headers?.["Retry-After"]).toEqual({
        $ref: "#/components/headers/RetryAfter",
      });
    const with409 = ops().filter(([, , o]) => o.responses["409"]);
    expect(with409.length).toBeGreaterThan(0);
    for (const [p, m, o] of with409) {
      const r = o.responses["409"].$ref
        ? doc.components.responses[o.responses["409"].$ref.split("/").pop()]
        : o.responses["409"];
      expect([`${m} ${p}`, r.headers?.["Retry-After"]]).toEqual([
        `${m} ${p}`,
        { $ref: "#/components/headers/RetryAfter" },
      ]);
    }
  });

  test("413 on every method that may carry a body; 429 everywhere but the probes", () => {
    const no413 = ops().filter(([, m, o]) => !["get", "head"].includes(m) && !o.responses["413"]);
    expect(no413.map(([p, m]) => `${m} ${p}`)).toEqual([]);
    const no429 = ops().filter(([, , o]) => !o.responses["429"]);
    expect(no429.map(([p, m]) => `${m} ${p}`).sort()).toEqual(["get /healthz", "get /readyz"]);
    for (const path of ["/api/v1/users/me/tokens/{id}/", "/api/v1/admin/orgs/{org_slug}/suspend/"]) {
      const o = doc.paths[path].delete ?? doc.paths[path].post;
      expect(ref(o, "413")).toBe("#/components/responses/PayloadTooLarge");
    }
    expect(ref(op("/api/v1/auth/logout/", "post"), "413")).toBe(
      "#/components/responses/PublicPayloadTooLarge",
    );
    expect(ref(op("/api/v1/setup/", "get"), "429")).toBe("#/components/responses/PublicTooManyRequests");
  });

  test("every 201 documents the Location of what it created", () => {
    const created = ops().filter(([, , o]) => o.responses["201"]);
    expect(created.map(([, , o]) => o.operationId).sort()).toEqual(
      [
        "addMember",
        "addStep",
        "adminCreateOrg",
        "adminCreateUser",
        "createSchema",
        "createToken",
        "createWebhook",
        "createWorkflow",
        "restoreWorkflowVersion",
        "setUpInstance",
        "startRun",
      ].sort(),
    );
    for (const [, , o] of created)
      expect({ id: o.operationId, location: o.responses["201"].headers?.Location }).toEqual({
        id: o.operationId,
        location: { $ref: "#/components/headers/Location" },
      });
  });

  test("public operations' answers carry the rate-limit headers, never a Warning", () => {
    const pub = ops().filter(([, , o]) => isPublic(o));
    for (const [, , o] of pub)
      for (const r of Object.values(o.responses) as J[])
        if (r.$ref) expect(r.$ref).toStartWith("#/components/responses/Public");
        else {
          expect(Object.keys(r.headers ?? {})).toContain("RateLimit");
          expect(Object.keys(r.headers ?? {})).not.toContain("Warning");
        }
    const responses = doc.components.responses;
    for (const name of ["PublicUnauthorized", "PublicBadRequest", "PublicConflict", "PublicForbidden"]) {
      expect(Object.keys(responses[name].headers)).toContain("RateLimit");
      expect(Object.keys(responses[name].headers)).not.toContain("Warning");
    }
    expect(Object.keys(responses.PublicTooManyRequests.headers).sort()).toEqual([
      "RateLimit",
      "RateLimit-Policy",
      "Retry-After",
      "X-Request-Id",
    ]);
    expect(ref(op("/api/v1/auth/login/", "post"), "401")).toBe("#/components/responses/PublicUnauthorized");
    expect(ref(op("/api/v1/setup/", "post"), "409")).toBe("#/components/responses/PublicConflict");
    expect(ref(op("/api/v1/auth/logout/", "post"), "403")).toBe("#/components/responses/PublicForbidden");
  });

  test("answer headers the server sends: Warning, Content-Disposition, Set-Cookie", () => {
    expect(doc.components.headers.Warning.schema.type).toBe("string");
    expect(Object.keys(doc.components.responses.NotFound.headers)).toContain("Warning");
    expect(Object.keys(doc.components.responses.Unauthorized.headers)).not.toContain("Warning");
    const content = op("/api/v1/orgs/{org_slug}/runs/{run_id}/content/", "get").responses["200"];
    expect(Object.keys(content.content)).toEqual(["application/octet-stream"]);
    expect(content.description).toContain("attachment");
    const disposition = { $ref: "#/components/headers/ContentDisposition" };
    expect(content.headers["Content-Disposition"]).toEqual(disposition);
    expect(
      op("/api/v1/orgs/{org_slug}/runs/{run_id}/report/", "get").responses["200"].headers[
        "Content-Disposition"
      ],
    ).toEqual(disposition);
    for (const path of ["/api/v1/orgs/{org_slug}/audit/", "/api/v1/admin/audit/"])
      expect(op(path, "get").responses["200"].headers["Content-Disposition"]).toEqual(disposition);
    const cookie = { $ref: "#/components/headers/SetCookie" };
    expect(op("/api/v1/auth/login/", "post").responses["200"].headers["Set-Cookie"]).toEqual(cookie);
    expect(op("/api/v1/auth/logout/", "post").responses["204"].headers["Set-Cookie"]).toEqual(cookie);
    expect(op("/api/v1/users/me/password/", "post").responses["204"].headers["Set-Cookie"]).toEqual(cookie);
    expect(op("/api/v1/setup/", "post").responses["201"].headers["Set-Cookie"]).toEqual(cookie);
  });
});

describe("bounds and types the server enforces", () => {
  const body = (path: string, method: string) => {
    const s = op(path, method).requestBody.content["application/json"].schema;
    return s.$ref ? doc.components.schemas[s.$ref.split("/").pop()] : s;
  };
  const param = (path: string, method: string, name: string) =>
    op(path, method).parameters.find((p: J) => p.name === name)?.schema;

  test("response properties that take a fixed set of values state it as an enum", () => {
    const sc = doc.components.schemas;
    const RUN = ["queued", "running", "succeeded", "failed", "error", "canceled", "timed_out"];
    const STEP = ["pending", "running", "passed", "failed", "skipped", "error"];
    const ROLES = ["viewer", "executor", "author", "admin"];
    const EVENTS = ["run.completed", "run.succeeded", "run.failed", "run.error", "ping"];
    const e = (values: J[]) => ({ type: "string", enum: values });
    expect(sc.Run.properties.status).toEqual(e(RUN));
    expect(sc.StepResult.properties.status).toEqual(e(STEP));
    expect(sc.Finding.properties.severity).toEqual(e(["error", "warning", "info"]));
    expect(sc.Member.properties.role).toEqual(e(ROLES));
    const me = sc.Me.allOf ? sc.Me.allOf.find((x: J) => x.properties?.orgs) : sc.Me;
    expect(me.properties.orgs.items.properties.role).toEqual(e(ROLES));
    expect(me.properties.orgs.items.properties.status).toEqual(e(["active", "suspended"]));
    expect(sc.Organization.properties.status).toEqual(e(["active", "suspended"]));
    expect(sc.Organization.properties.role).toEqual({
      type: ["string", "null"],
      enum: [...ROLES, null],
      description: "Your role in it",
    });
    expect(sc.Submission.properties.file_type).toEqual(e(["JSON", "XML", "YAML", "CSV", "TEXT"]));
    expect(sc.Webhook.properties.events.items).toEqual(e(EVENTS));
    expect(sc.WebhookWithSecret.properties.events.items).toEqual(e(EVENTS));
    expect(sc.Delivery.properties.status).toEqual(e(["pending", "succeeded", "failed"]));
    expect(sc.Delivery.properties.event).toEqual(e(EVENTS));
  });

  test("request bodies state the bounds the services check", () => {
    expect(body("/api/v1/users/me/password/", "post").properties.new_password).toEqual({
      type: "string",
      minLength: 8,
      maxLength: 1024,
    });
    expect(body("/api/v1/users/me/tokens/", "post").properties.name).toMatchObject({
      minLength: 1,
      maxLength: 100,
    });
    expect(body("/api/v1/orgs/{org_slug}/", "patch").properties.name).toMatchObject({ maxLength: 200 });
    expect(body("/api/v1/orgs/{org_slug}/members/", "post").properties.username).toMatchObject({
      maxLength: 64,
      pattern: "^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$",
    });
    const user = body("/api/v1/admin/users/", "post").properties;
    expect(user.password).toMatchObject({ minLength: 8, maxLength: 1024 });
    expect(body("/api/v1/admin/orgs/", "post").properties.org_slug).toMatchObject({
      maxLength: 63,
      pattern: "^[a-z][a-z0-9-]{0,62}$",
    });
    const wf = doc.components.schemas.WorkflowInput.properties;
    expect(wf.slug).toMatchObject({ maxLength: 63, pattern: "^[a-z][a-z0-9_-]{0,62}$" });
    expect(wf.description).toMatchObject({ maxLength: 5000 });
    expect(wf.steps).toMatchObject({ maxItems: 50 });
    expect(wf.allowed_file_types).toMatchObject({ minItems: 1, uniqueItems: true });
    expect(doc.components.schemas.StoredSchemaInput.properties.uri).toMatchObject({ maxLength: 500 });
    expect(
      op("/api/v1/orgs/{org_slug}/workflows/{workflow}/runs/", "post").requestBody.content["text/x-yaml"],
    ).toBeDefined();
  });

  test("query parameters are documented as what the server parses them as", () => {
    const integer = { type: "integer", minimum: 1 };
    expect(param("/api/v1/orgs/{org_slug}/workflows/{workflow}/runs/", "post", "version")).toMatchObject(
      integer,
    );
    expect(
      param("/api/v1/orgs/{org_slug}/workflows/{workflow}/versions/{version}/diff/", "get", "against"),
    ).toMatchObject(integer);
    expect(param("/api/v1/orgs/{org_slug}/runs/{run_id}/findings/", "get", "step")).toMatchObject(integer);
    for (const path of ["/api/v1/orgs/{org_slug}/audit/", "/api/v1/admin/audit/"])
      expect(param(path, "get", "format").enum).toEqual(["json", "csv", "jsonl"]);
  });

  test("time filters are documented as the ISO 8601 spellings the server takes, and it takes them", async () => {
    const paths = [
      "/api/v1/orgs/{org_slug}/audit/",
      "/api/v1/admin/audit/",
      "/api/v1/orgs/{org_slug}/runs/",
      "/api/v1/orgs/{org_slug}/workflows/{workflow}/runs/",
    ];
    const schemas = paths.flatMap((path) =>
      doc.paths[path]?.get ? ["created_after", "created_before"].map((k) => param(path, "get", k)) : [],
    );
    expect(schemas.length).toBeGreaterThanOrEqual(6);
    for (const sch of schemas) {
      // Not `format: date-time` (RFC 3339's, with seconds and an offset): a date is taken too.
      expect(sch.format).toBeUndefined();
      expect(sch.type).toBe("string");
      expect(sch.description).toContain("a date (2026-03-07, midnight UTC)");
      expect(sch.pattern).toBe(schemas[0].pattern);
    }
    const pattern = new RegExp(schemas[0].pattern);
    const org = await s.user("tilda", "timeco", "admin");
    const runs = (v: string) =>
      call(s, "GET", `/api/v1/orgs/timeco/runs/?created_after=${encodeURIComponent(v)}`, {
        token: org.token,
      });
    const audit = (v: string) =>
      call(s, "GET", `/api/v1/orgs/timeco/audit/?created_before=${encodeURIComponent(v)}`, {
        token: org.token,
      });
    for (const v of [
      "2026-03-07",
      "2026-03-07T10:00",
      "2026-03-07 10:00:00",
      "2026-03-07T10:00:00Z",
      "2026-03-07T10:00:00.123456789+02:00",
      "2026-03-07t10:00-0530",
      "+010000-01-01",
    ]) {
      expect([v, pattern.test(v)]).toEqual([v, true]);
      expect([v, (await runs(v)).status, (await audit(v)).status]).toEqual([v, 200, 200]);
    }
    for (const v of ["2026-03-07T10", "1", "March 7, 2026", "2026-03-07T10:00:00GMT"]) {
      expect([v, pattern.test(v)]).toEqual([v, false]);
      const r = await runs(v);
      expect([v, r.status, r.json]).toEqual([
        v,
        400,
        errorBody(400, "invalid_request", "Invalid filters.", [
          {
            field: "created_after",
            code: "invalid",
            message: "created_after must be an ISO 8601 date or date-time.",
          },
        ]),
      ]);
    }
    // The pattern says the shape; the ranges are in the description's words (a day the month has).
    const feb30 = await audit("2026-02-30");
    expect(feb30.json).toEqual(
      errorBody(400, "invalid_request", "Invalid filters.", [
        {
          field: "created_before",
          code: "invalid",
          message: "created_before must be an ISO 8601 date or date-time.",
        },
      ]),
    );
  });
});

describe("conventionProblems", () => {
  test("refuses the framework's generated operationIds", () => {
    const one = (operationId: string) => ({
      openapi: "3.1.1",
      paths: { "/api/v1/setup/": { get: { operationId, tags: ["Web session"], summary: "s" } } },
    });
    expect(conventionProblems(one("getApiV1Setup"))).toEqual([
      "GET /api/v1/setup/: detail.operationId must be a camelCase verb phrase (got getApiV1Setup)",
    ]);
    expect(conventionProblems(one("getSetupStatus"))).toEqual([]);
    expect(op("/api/v1/setup/", "get").operationId).toBe("getSetupStatus");
    expect(op("/api/v1/setup/", "post").operationId).toBe("setUpInstance");
  });
});
