// API request bodies are JSON objects (docs/api.md): another Content-Type is 415
// unsupported_media_type, not a 400 listing a "Property 'N'" per character of the text; the run
// endpoint alone takes any supported type (its raw mode).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "bodies",
    allowed_file_types: ["JSON", "TEXT"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

const WORKFLOWS = "/api/v1/orgs/acme/workflows/";
const definition = JSON.stringify({ slug: "plain", name: "Plain", allowed_file_types: ["JSON"] });
const unsupported = (ct: string | null) =>
  errorBody(
    415,
    "unsupported_media_type",
    `This endpoint takes a JSON object: send it as Content-Type: application/json${ct ? `, not "${ct}"` : ""}.`,
  );

describe("415 unsupported_media_type for a JSON endpoint sent something else", () => {
  test("text/plain holding a valid definition: 415, and nothing is created", async () => {
    const r = await call(s, "POST", WORKFLOWS, {
      token: s.rootToken,
      raw: definition,
      headers: { "content-type": "text/plain" },
    });
    expect(r.status).toBe(415);
    expect(r.json).toEqual(unsupported("text/plain"));
    expect((await call(s, "GET", `${WORKFLOWS}plain/`, { token: s.rootToken })).status).toBe(404);
  });

  test("a form, multipart, or no Content-Type at all (fetch's default for a string is text/plain)", async () => {
    const form = await call(s, "PATCH", "/api/v1/orgs/acme/", {
      token: s.rootToken,
      raw: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.json).toEqual(unsupported("application/x-www-form-urlencoded"));
    const fd = new FormData();
    fd.append("name", "x");
    const multi = await fetch(`${s.url}/api/v1/users/me/tokens/`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.rootToken}` },
      body: fd,
    });
    expect(multi.status).toBe(415);
    expect((await multi.json()).code).toBe("unsupported_media_type");
    const bare = await fetch(`${s.url}${WORKFLOWS}`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.rootToken}` },
      body: new Blob([definition]), // a body with no type: no Content-Type header
    });
    expect(await bare.json()).toEqual(unsupported(null));
  });

  test("application/json with a charset is JSON; a +json type is not what the endpoint takes", async () => {
    const r = await call(s, "PATCH", "/api/v1/orgs/acme/", {
      token: s.rootToken,
      raw: '{"name": "ACME Inc"}',
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(r.status).toBe(200);
    expect(r.json.name).toBe("ACME Inc");
    const merge = await call(s, "PATCH", "/api/v1/orgs/acme/", {
      token: s.rootToken,
      raw: '{"name": "ACME"}',
      headers: { "content-type": "application/merge-patch+json" },
    });
    expect(merge.json).toEqual(unsupported("application/merge-patch+json"));
  });

  test("the run endpoint still takes text/plain: its raw mode", async () => {
    const r = await call(s, "POST", `${WORKFLOWS}bodies/runs/`, {
      token: s.rootToken,
      raw: "hello",
      headers: { "content-type": "text/plain" },
    });
    expect(r.status).toBe(201);
    expect(r.json.submission.file_type).toBe("TEXT");
  });
});

describe("400 for JSON that is not an object", () => {
  test("null or an array to a route with a body", async () => {
    for (const raw of ["null", "[]", "  [1]"]) {
      const r = await call(s, "POST", "/api/v1/users/me/tokens/", {
        token: s.rootToken,
        raw,
        headers: { "content-type": "application/json" },
      });
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", "The request body must be a JSON object.", [
          { field: "body", code: "invalid", message: "The body must be a JSON object ({…})." },
        ]),
      );
    }
  });

  test("a route without a body takes none, or {}", async () => {
    const run = await call(s, "POST", `${WORKFLOWS}bodies/runs/`, {
      token: s.rootToken,
      raw: "{}",
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    for (const o of [{}, { body: {} }]) {
      const r = await call(s, "POST", `/api/v1/orgs/acme/runs/${run.json.id}/cancel/`, {
        token: s.rootToken,
        ...o,
      });
      expect([200, 409]).toContain(r.status); // canceled, or already finished
    }
  });
});
