// The OpenAPI document as served: what a client generator reads. The linters (npm run
// lint:openapi) check it against the OpenAPI rules; this file checks what they cannot know —
// that it says what the API does: the run start's three modes and headers, named schemas, the
// route conventions of docs/api.md, 204s without content, JSON-only bodies, security.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { conventionProblems } from "../src/http/openapi/document.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

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
    expect(Object.keys(tooMany.headers).sort()).toEqual(["RateLimit", "RateLimit-Policy", "Retry-After"]);
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
        // and a non-JSON body is answered 415
        expect(o.responses["415"]).toEqual({ $ref: "#/components/responses/UnsupportedMediaType" });
      }
    expect(
      op("/api/v1/orgs/{org_slug}/workflows/", "post").requestBody.content["application/json"].schema,
    ).toEqual({
      $ref: "#/components/schemas/WorkflowInput",
    });
  });

  test("204 answers have no content; every other answer describes its body", () => {
    let n = 0;
    for (const item of Object.values(doc.paths as J))
      for (const o of Object.values(item as J) as J[]) {
        const r = o.responses["204"];
        if (r) {
          n++;
          expect(r.content).toBeUndefined();
        }
        for (const [status, res] of Object.entries(o.responses) as [string, J][])
          if (status !== "204" && !res.$ref) expect(res.content).toBeDefined();
      }
    expect(n).toBeGreaterThan(8);
  });

  test("errors per operation; every operation but the probes has a 4XX", () => {
    const without: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as J))
      for (const [method, o] of Object.entries(item as J) as [string, J][])
        if (!Object.keys(o.responses).some((st) => st.startsWith("4"))) without.push(`${method} ${path}`);
    // The probes and the setup check cannot fail: they read one flag.
    expect(without.sort()).toEqual(["get /api/v1/setup/", "get /healthz", "get /readyz"]);
    expect(Object.keys(op("/api/v1/orgs/{org_slug}/runs/{run_id}/content/", "get").responses)).toContain(
      "410",
    );
  });

  test("security: a bearer token or the session cookie unless the operation is public", () => {
    expect(doc.security).toEqual([{ bearer: [] }, { session: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
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
    // Authenticated answers carry the rate-limit headers.
    expect(Object.keys(op("/api/v1/orgs/", "get").responses["200"].headers)).toEqual([
      "RateLimit-Policy",
      "RateLimit",
    ]);
    expect(op("/healthz", "get").responses["200"].headers).toBeUndefined();
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
