// GET …/runs/{run_id}/report/?format=json|junit|sarif|html against a real server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { junitProblems, sarifProblems } from "./unit/reports/schemas.ts";

let s: TestServer;
let viewer: string;
let outsider: string;
let failedRun: string;
let passedRun: string;
// No "/": a submission filename has no directories.
const HOSTILE_NAME = `<b onclick="x">'o&rders'.json`;

const report = (id: string, format?: string, token = viewer, org = "acme") =>
  call(s, "GET", `/api/v1/orgs/${org}/runs/${id}/report/${format ? `?format=${format}` : ""}`, { token });

async function submit(content: string, filename: string) {
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
    token: s.rootToken,
    raw: content,
    headers: {
      "content-type": "application/json",
      "x-filename": filename,
      "x-submission-mode": "raw",
      prefer: "wait=30",
    },
  });
  if (r.status !== 201) throw new Error(`run not created: ${r.status} ${r.text}`);
  return r.json.id as string;
}

beforeAll(async () => {
  s = await startTestServer();
  viewer = (await s.user("vic", "acme", "viewer")).token;
  outsider = (await s.user("olga", "other", "admin")).token;
  const wf = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug: "orders",
      name: "Orders",
      allowed_file_types: ["JSON"],
      fail_fast: false,
      steps: [
        { name: "syntax", validator: "syntax", config: {} },
        {
          name: "schema",
          validator: "json_schema",
          config: {
            schema: { type: "object", required: ["id", "total"], properties: { id: { type: "integer" } } },
          },
        },
      ],
    },
  });
  expect(wf.status).toBe(201);
  failedRun = await submit('{\n  "id": "A-1"\n}\n', HOSTILE_NAME);
  passedRun = await submit('{"id": 1, "total": 2}', "ok.json");
});
afterAll(() => s.close());

describe("formats", () => {
  test("json (the default) is the run exactly as GET …/runs/{id}/ gives it", async () => {
    const r = await report(failedRun);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    const direct = await call(s, "GET", `/api/v1/orgs/acme/runs/${failedRun}/`, { token: viewer });
    expect(r.json).toEqual(direct.json);
    expect(r.json.status).toBe("failed");
    expect(r.headers.get("retry-after")).toBeNull();
  });

  test("junit: XML valid against the JUnit schema, a testcase per step, findings in the failure", async () => {
    const r = await report(failedRun, "junit");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(r.headers.get("content-disposition")).toBe(`inline; filename="assay-run-${failedRun}.junit.xml"`);
    expect(await junitProblems(r.text)).toEqual([]);
    expect(r.text).toContain(
      `<testsuite name="&lt;b onclick=&quot;x&quot;&gt;&#39;o&amp;rders&#39;.json" tests="2" failures="1" errors="0" skipped="0"`,
    );
    expect(r.text).toContain(`id="${failedRun}"`);
    expect(r.text).toContain('<testcase name="1. syntax (syntax)"');
    expect(r.text).toMatch(
      /<failure message="2 errors" type="failed">&lt;b onclick=&quot;x&quot;&gt;&#39;o&amp;rders&#39;\.json:\d+:\d+ error json_schema\.\w+ /,
    );
    const ok = await report(passedRun, "junit");
    expect(await junitProblems(ok.text)).toEqual([]);
    expect(ok.text).toContain('tests="2" failures="0" errors="0" skipped="0"');
  });

  test("sarif: SARIF 2.1.0 valid against its schema, rules from codes, results at filename:line:column", async () => {
    const r = await report(failedRun, "sarif");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/sarif+json");
    expect(await sarifProblems(r.text)).toEqual([]);
    const run = r.json.runs[0];
    expect(r.json.version).toBe("2.1.0");
    expect(run.tool.driver.name).toBe("Assay");
    const codes = run.results.map((x: { ruleId: string }) => x.ruleId);
    expect(codes).toContain("json_schema.required");
    expect(run.tool.driver.rules.map((x: { id: string }) => x.id).sort()).toEqual(
      [...new Set<string>(codes)].sort(),
    );
    const uri = encodeURIComponent(HOSTILE_NAME);
    for (const res of run.results) {
      expect(res.locations[0].physicalLocation.artifactLocation).toEqual({ uri, index: 0 });
      expect(res.locations[0].physicalLocation.region.startLine).toBeGreaterThanOrEqual(1);
      expect(res.properties.run_id).toBe(failedRun);
    }
    expect(run.artifacts[0].location.uri).toBe(uri);
  });

  test("html: a self-contained page, every text escaped, served with a strict CSP", async () => {
    const r = await report(failedRun, "html");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(r.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox",
    );
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.text).toStartWith("<!doctype html>");
    expect(r.text).not.toContain("<b onclick");
    expect(r.text).toContain("&lt;b onclick=&quot;x&quot;&gt;&#39;o&amp;rders&#39;.json");
    expect(r.text).not.toMatch(/<script|<link|src=|url\(/i);
    expect(r.text).toContain("json_schema.required");
  });

  test("the route is in the OpenAPI document", async () => {
    const r = await call(s, "GET", "/api/v1/openapi.json");
    expect(r.status).toBe(200);
    expect(Object.keys(r.json.paths).some((p) => p.includes("/runs/{run_id}/report"))).toBe(true);
  });

  test("the path without its trailing slash is accepted", async () => {
    const r = await call(s, "GET", `/api/v1/orgs/acme/runs/${passedRun}/report?format=junit`, {
      token: viewer,
    });
    expect(r.status).toBe(200);
  });
});

describe("errors", () => {
  test("400 invalid_request for an unknown format", async () => {
    const r = await report(failedRun, "pdf");
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for format.", [
        { field: "format", code: "invalid", message: "format is one of json, junit, sarif, html." },
      ]),
    );
  });
  test("unknown query parameters are ignored, as on every other operation; format is still checked", async () => {
    const r = await report(failedRun, "junit&zzz=1");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    const bad = await report(failedRun, "pdf&zzz=1");
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for format.", [
        { field: "format", code: "invalid", message: "format is one of json, junit, sarif, html." },
      ]),
    );
  });
  test("401 authentication_required without a token", async () => {
    const r = await report(failedRun, "html", "");
    expect(r.status).toBe(401);
    expect(r.json).toEqual(errorBody(401, "authentication_required"));
  });
  test("403 permission_denied for a user outside the org", async () => {
    const r = await report(failedRun, "json", outsider);
    expect(r.status).toBe(403);
    expect(r.json).toEqual(errorBody(403, "permission_denied", "You are not a member of this organization."));
  });
  test("404 not_found for another org's run and for a malformed id", async () => {
    for (const [id, org] of [
      [failedRun, "other"],
      ["not-a-uuid", "acme"],
      ["01900000-0000-7000-8000-000000000000", "acme"],
    ] as const) {
      const r = await report(id, "sarif", org === "other" ? outsider : viewer, org);
      expect(r.status).toBe(404);
      expect(r.json).toEqual(errorBody(404, "not_found", "Run not found."));
    }
  });
});
