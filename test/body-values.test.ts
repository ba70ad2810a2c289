// A variant of hole 3 of issue #19, found against the built binary: the depth of API bodies was
// bounded, their breadth was not. Parsing costs the HTTP thread ~1–2 µs per object member, and
// the parse runs before authentication: one unauthenticated 20 MiB body of 2.25 million members
// sent to …/schemas/ held /healthz 5 s; four 2 MiB bodies of 235,000 members sent to the login
// endpoint, 0.85 s. Run envelopes under 1 MiB were parsed on the HTTP thread whatever they held
// (four 1 MB envelopes of 120,000 metadata members: /healthz 0.5 s).
// Now: API bodies hold at most MAX_BODY_TOKENS structural characters (400 too_many_values, before
// any parse), and run requests with many values are read on the intake thread whatever their size.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_BODY_TOKENS } from "../src/http/limits.ts";
import { OFFLOAD_MIN_BYTES, OFFLOAD_MIN_TOKENS } from "../src/runs/intake/offload.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const JSON_CT = { "content-type": "application/json" };

beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "docs",
    allowed_file_types: ["JSON", "TEXT"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

/** An object of `n` distinct members: 2n - 1 structural characters inside its braces, +1. */
const members = (n: number) => `{${Array.from({ length: n }, (_, i) => `"${i.toString(36)}":0`).join(",")}}`;

const tooMany = errorBody(400, "invalid_request", "The request body holds too many values.", [
  {
    field: "body",
    code: "too_many_values",
    message: `A body may hold at most ${MAX_BODY_TOKENS} brackets, commas and colons (about ${MAX_BODY_TOKENS / 2} object members).`,
  },
]);

describe("API bodies: 400 too_many_values before anything parses them", () => {
  const over = members(MAX_BODY_TOKENS / 2 + 1); // 200,002 structural characters

  test("unauthenticated, on the login and schema endpoints", async () => {
    for (const path of ["/api/v1/auth/login/", "/api/v1/orgs/acme/schemas/", "/api/v1/setup/"]) {
      const r = await call(s, "POST", path, { raw: over, headers: JSON_CT });
      expect({ path, status: r.status, json: r.json }).toEqual({ path, status: 400, json: tooMany });
    }
  });

  test("authenticated, and nothing changes", async () => {
    const before = await s.row<{ name: string }>("SELECT name FROM orgs WHERE slug = ?", "acme");
    const r = await call(s, "PATCH", "/api/v1/orgs/acme/", {
      token: s.rootToken,
      raw: over,
      headers: JSON_CT,
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(tooMany);
    expect(await s.row("SELECT name FROM orgs WHERE slug = ?", "acme")).toEqual(before);
  });

  test("arrays count too; a body at the bound is parsed and validated as usual", async () => {
    const elements = `{"name":[${"0,".repeat(MAX_BODY_TOKENS)}0]}`;
    const r = await call(s, "PATCH", "/api/v1/orgs/acme/", {
      token: s.rootToken,
      raw: elements,
      headers: JSON_CT,
    });
    expect(r.json).toEqual(tooMany);
    // {"name":[ … ]}: 1 + 1 + 1 + (n - 1) commas = MAX_BODY_TOKENS exactly.
    const at = `{"name":[${"0,".repeat(MAX_BODY_TOKENS - 3)}0]}`;
    const ok = await call(s, "PATCH", "/api/v1/orgs/acme/", {
      token: s.rootToken,
      raw: at,
      headers: JSON_CT,
    });
    expect(ok.status).toBe(400);
    expect(ok.json.errors[0].field).toBe("name"); // the schema's answer: it was parsed
  });

  test("commas and colons inside strings do not count", async () => {
    const name = ",:".repeat(MAX_BODY_TOKENS);
    const r = await call(s, "POST", "/api/v1/auth/login/", {
      body: { username: name, password: "x" },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].field).toBe("username"); // too long: the schema's answer, after the parse
  });
});

describe("run requests with many values are read on the intake thread, whatever their size", () => {
  const path = "/api/v1/orgs/acme/workflows/docs/runs/";

  test("envelopes and text holding JSON, under 1 MiB: offloaded, same answers", async () => {
    const before = s.deps.intake.offloaded;
    const content = members(OFFLOAD_MIN_TOKENS);
    expect(content.length).toBeLessThan(OFFLOAD_MIN_BYTES);
    const envelope = await call(s, "POST", path, {
      token: s.rootToken,
      raw: `{"content":${content},"metadata":{"k":1}}`,
      headers: JSON_CT,
    });
    expect(envelope.status).toBe(201);
    expect(envelope.json.submission).toEqual(
      expect.objectContaining({ file_type: "JSON", size: content.length, metadata: { k: 1 } }),
    );
    const text = await call(s, "POST", path, {
      token: s.rootToken,
      raw: content,
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(201);
    expect(text.json.submission.file_type).toBe("JSON");
    const metadata = await call(s, "POST", path, {
      token: s.rootToken,
      raw: `{"content":"x","content_type":"text/plain","metadata":${members(20_000)}}`,
      headers: JSON_CT,
    });
    expect(metadata.status).toBe(400);
    expect(metadata.json.errors[0]).toEqual(
      expect.objectContaining({ field: "metadata", code: "too_large" }),
    );
    expect(s.deps.intake.offloaded - before).toBe(3);
  });

  test("a small envelope stays on the HTTP thread", async () => {
    const before = s.deps.intake.offloaded;
    const r = await call(s, "POST", path, {
      token: s.rootToken,
      raw: `{"content":{"a":1}}`,
      headers: JSON_CT,
    });
    expect(r.status).toBe(201);
    expect(s.deps.intake.offloaded).toBe(before);
  });
});
