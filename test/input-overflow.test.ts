// A number past a 64-bit float's range (1e400) in stored JSON: JSON.parse reads it as infinity,
// JSON.stringify wrote that as null (docs/limits.md, 2026-11-29). Each refusal is the whole error
// object, and nothing is stored or logged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { savedRowCounts } from "./helpers/row-counts.ts";

let s: TestServer;
let author: string; // ann, an author of acme
const OVERFLOW =
  "may not hold a number beyond a 64-bit float's range (such as 1e400): it would be stored as null";

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
});
afterAll(() => s.close());

const post = (path: string, raw: string, token = author, headers: Record<string, string> = {}) =>
  call(s, "POST", path, { token, raw, headers: { "content-type": "application/json", ...headers } });

/** The rows a refused request must leave as they were. */
const counts = () => savedRowCounts(s);

const workflowWith = (slug: string, schemaText: string) =>
  `{"slug":"${slug}","name":"W","allowed_file_types":["JSON"],"steps":[{"name":"s","validator":"json_schema","config":{"schema":${schemaText}}}]}`;

describe("a number past a double's range (1e400) is refused, never stored as null", () => {
  test("400 on steps[i].config when a workflow is created; nothing stored", async () => {
    const before = await counts();
    const r = await post("/api/v1/orgs/acme/workflows/", workflowWith("big", '{"const":1e400}'));
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", expect.any(String), [
        { field: "steps[0].config", code: "invalid", message: `A step config ${OVERFLOW}.` },
      ]),
    );
    expect(await counts()).toEqual(before);
  });

  test("a large finite number (1e308) and -0 are saved as sent", async () => {
    const r = await post(
      "/api/v1/orgs/acme/workflows/",
      workflowWith("finite", '{"enum":[1e308,-1e308,-0]}'),
    );
    expect(r.status).toBe(201);
    const saved = r.json.steps[0].config.schema.enum;
    expect(saved).toEqual([1e308, -1e308, 0]);
    // JSON has no negative zero of its own: -0 is written back as 0, a number, never null.
    expect(Object.is(saved[2], 0) || Object.is(saved[2], -0)).toBe(true);
    const again = await call(s, "GET", "/api/v1/orgs/acme/workflows/finite/", { token: author });
    expect(again.json.steps[0].config.schema.enum).toEqual([1e308, -1e308, 0]);
  });

  test("400 on config when a step is added or changed; the workflow keeps its version", async () => {
    const wf = await createWorkflow(s, author, {
      slug: "steps",
      name: "S",
      allowed_file_types: ["JSON"],
      steps: [{ name: "a", validator: "json_schema", config: { schema: { type: "object" } } }],
    });
    const stepId = wf.steps[0].id;
    const before = await counts();
    const add = await post(
      "/api/v1/orgs/acme/workflows/steps/steps/",
      '{"name":"b","validator":"json_schema","config":{"schema":{"maximum":5,"const":-1e400}}}',
    );
    const edit = await call(s, "PATCH", `/api/v1/orgs/acme/workflows/steps/steps/${stepId}/`, {
      token: author,
      raw: '{"config":{"schema":{"properties":{"n":{"const":[1,2e999]}}}}}',
      headers: { "content-type": "application/json" },
    });
    for (const r of [add, edit]) {
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", expect.any(String), [
          { field: "config", code: "invalid", message: `A step config ${OVERFLOW}.` },
        ]),
      );
    }
    expect(await counts()).toEqual(before);
    const now = await call(s, "GET", "/api/v1/orgs/acme/workflows/steps/", { token: author });
    expect(now.json.version).toBe(wf.version);
  });

  test("400 on schema when a JSON Schema is stored or replaced; nothing stored", async () => {
    const made = await post(
      "/api/v1/orgs/acme/schemas/",
      '{"uri":"urn:kept","kind":"json_schema","schema":{"type":"number"}}',
    );
    expect(made.status).toBe(201);
    const before = await counts();
    const create = await post(
      "/api/v1/orgs/acme/schemas/",
      '{"uri":"urn:big","kind":"json_schema","schema":{"type":"number","const":1e400}}',
    );
    const replace = await call(s, "PUT", `/api/v1/orgs/acme/schemas/${made.json.id}/`, {
      token: author,
      raw: '{"uri":"urn:kept","kind":"json_schema","schema":{"type":"number","enum":[-1e400]}}',
      headers: { "content-type": "application/json" },
    });
    for (const r of [create, replace]) {
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", expect.any(String), [
          { field: "schema", code: "invalid", message: `A schema ${OVERFLOW}.` },
        ]),
      );
    }
    expect(await counts()).toEqual(before);
    const kept = await call(s, "GET", `/api/v1/orgs/acme/schemas/${made.json.id}/`, { token: author });
    expect(kept.json.schema).toEqual({ type: "number" });
  });

  test("400 on metadata in an envelope and in a multipart part; no run", async () => {
    await createWorkflow(s, author, {
      slug: "meta",
      name: "M",
      allowed_file_types: ["JSON"],
      steps: [{ name: "a", validator: "json_schema", config: { schema: { type: "object" } } }],
    });
    const before = await counts();
    const envelope = await post(
      "/api/v1/orgs/acme/workflows/meta/runs/",
      '{"content":{"a":1},"metadata":{"amount":1e400}}',
    );
    const b = "BB";
    const multipart = await call(s, "POST", "/api/v1/orgs/acme/workflows/meta/runs/", {
      token: author,
      headers: { "content-type": `multipart/form-data; boundary=${b}` },
      raw:
        `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.json"\r\nContent-Type: application/json\r\n\r\n{"a":1}\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"n":{"deep":[-1e400]}}\r\n--${b}--\r\n`,
    });
    for (const r of [envelope, multipart]) {
      expect(r.status).toBe(400);
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", expect.any(String), [
          { field: "metadata", code: "invalid", message: `metadata ${OVERFLOW}.` },
        ]),
      );
    }
    expect(await counts()).toEqual(before);
    // Content is the document as sent: its number is the validator's to judge, not refused.
    const content = await post("/api/v1/orgs/acme/workflows/meta/runs/", '{"content":{"a":1e400}}');
    expect(content.status).toBe(201);
  });
});
