// API request bodies are JSON objects (docs/api.md): another Content-Type is 415
// unsupported_media_type, not a 400 listing a "Property 'N'" per character of the text; the run
// endpoint alone takes any supported type (its raw mode).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TransformKind } from "@sinclair/typebox";
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

  test("application/json in any case, with or without a charset, is JSON on every endpoint (RFC 9110 §8.3.1)", async () => {
    const token = s.rootToken;
    const types = [
      "Application/JSON",
      "APPLICATION/JSON",
      "application/Json; charset=UTF-8",
      "APPLICATION/JSON;CHARSET=utf-8",
      "application/JSON ; charset=utf-8",
    ];
    for (const [i, ct] of types.entries()) {
      const headers = { "content-type": ct };
      const created = await call(s, "POST", "/api/v1/users/me/tokens/", {
        token,
        body: { name: `t${i}` },
        headers,
      });
      expect([created.status, created.json.name]).toEqual([201, `t${i}`]);
      const patched = await call(s, "PATCH", `${WORKFLOWS}bodies/`, {
        token,
        body: { description: `d${i}` },
        headers,
      });
      expect([patched.status, patched.json.description]).toEqual([200, `d${i}`]);
      await s.user(`viewer${i}`);
      const member = await call(s, "POST", "/api/v1/orgs/acme/members/", {
        token,
        body: { username: `viewer${i}`, role: "viewer" },
        headers,
      });
      expect([member.status, member.json.username, member.json.role]).toEqual([201, `viewer${i}`, "viewer"]);
    }
    // Still checked as JSON: invalid JSON in another case is the same 400 as in lowercase.
    const bad = await call(s, "POST", "/api/v1/users/me/tokens/", {
      token,
      raw: "{nope",
      headers: { "content-type": "Application/JSON" },
    });
    expect(bad.json).toEqual(
      errorBody(400, "invalid_request", "The request body is malformed.", [
        {
          field: "body",
          code: "parse_error",
          message: "The body could not be parsed as its Content-Type says.",
        },
      ]),
    );
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

describe("400 for a JSON body that is not UTF-8 (RFC 8259 §8.1), whatever charset it declares", () => {
  const notUtf8 = errorBody(400, "invalid_request", "The request body is not valid UTF-8.", [
    {
      field: "body",
      code: "invalid_encoding",
      message: "A JSON body is UTF-8 (RFC 8259 §8.1); this one holds bytes that are not.",
    },
  ]);
  // "café" in ISO-8859-1: a lone 0xE9. Until 2026-11-29 it was read as U+FFFD and stored so.
  const latin1 = (slug: string) =>
    Uint8Array.from([
      ...new TextEncoder().encode(`{"slug":"${slug}","name":"caf`),
      0xe9,
      ...new TextEncoder().encode('","allowed_file_types":["JSON"]}'),
    ]);
  test("a workflow named in Latin-1 bytes: 400, nothing created, with or without charset=iso-8859-1", async () => {
    for (const [slug, ct] of [
      ["latin-a", "application/json"],
      ["latin-b", "application/json; charset=iso-8859-1"],
    ] as const) {
      const r = await call(s, "POST", WORKFLOWS, {
        token: s.rootToken,
        raw: latin1(slug),
        headers: { "content-type": ct },
      });
      expect([r.status, r.json]).toEqual([400, notUtf8]);
      expect((await call(s, "GET", `${WORKFLOWS}${slug}/`, { token: s.rootToken })).status).toBe(404);
    }
  });
  test("an encoded surrogate (CESU-8) in a PATCH: 400; the same text in UTF-8 is saved as sent", async () => {
    const bytes = Uint8Array.from([
      ...new TextEncoder().encode('{"description":"x'),
      0xed,
      0xa0,
      0x80,
      0x22,
      0x7d,
    ]);
    const r = await call(s, "PATCH", `${WORKFLOWS}bodies/`, {
      token: s.rootToken,
      raw: bytes,
      headers: { "content-type": "application/json" },
    });
    expect([r.status, r.json]).toEqual([400, notUtf8]);
    const ok = await call(s, "PATCH", `${WORKFLOWS}bodies/`, {
      token: s.rootToken,
      body: { description: "café" },
    });
    expect([ok.status, ok.json.description]).toEqual([200, "café"]);
  });
  test("a UTF-16 object with its BOM, labelled charset=utf-16 or not: 400 not UTF-8, not 'not an object'", async () => {
    const text = '{"slug":"sixteen","name":"x","allowed_file_types":["JSON"]}';
    const utf16 = (le: boolean) => {
      const out = le ? [0xff, 0xfe] : [0xfe, 0xff];
      for (const c of text) out.push(...(le ? [c.charCodeAt(0), 0] : [0, c.charCodeAt(0)]));
      return Uint8Array.from(out);
    };
    for (const [bytes, ct] of [
      [utf16(true), "application/json; charset=utf-16"],
      [utf16(false), "application/json; charset=utf-16"],
      [utf16(true), "application/json"],
    ] as const) {
      const r = await call(s, "POST", WORKFLOWS, {
        token: s.rootToken,
        raw: bytes,
        headers: { "content-type": ct },
      });
      expect([r.status, r.json]).toEqual([400, notUtf8]);
    }
    expect((await call(s, "GET", `${WORKFLOWS}sixteen/`, { token: s.rootToken })).status).toBe(404);
  });
  test("without a token the answer is still 401: the body waits for authentication", async () => {
    const r = await call(s, "POST", WORKFLOWS, {
      raw: latin1("latin-c"),
      headers: { "content-type": "application/json" },
    });
    expect([r.status, r.json.code]).toEqual([401, "authentication_required"]);
  });
});

describe("numbers in JSON bodies are JSON numbers, bounded (src/http/schemas.ts)", () => {
  /**
   * What a body schema must not hold, by path: a transform (Elysia's t.Integer and t.Numeric also
   * take "-1", "1e3", "0x10"), a string taken as a number, or an integer or number with no
   * maximum (1e300 or 9e15 would reach a Date or an INTEGER column).
   */
  function faultsIn(schema: unknown, at = "", seen = new Set<unknown>()): string[] {
    if (!schema || typeof schema !== "object" || seen.has(schema)) return [];
    seen.add(schema);
    const o = schema as Record<string | symbol, unknown>;
    const out: string[] = [];
    if (TransformKind in o) out.push(`${at || "(root)"}: transform`);
    if (o.type === "string" && ["integer", "numeric", "number"].includes(String(o.format)))
      out.push(`${at || "(root)"}: numeric text`);
    if ((o.type === "integer" || o.type === "number") && typeof o.maximum !== "number")
      out.push(`${at || "(root)"}: no maximum`);
    for (const k of ["anyOf", "oneOf", "allOf"]) {
      const list = Array.isArray(o[k]) ? (o[k] as unknown[]) : [];
      for (let i = 0; i < list.length; i++) out.push(...faultsIn(list[i], `${at}/${k}/${i}`, seen));
    }
    for (const k of ["properties", "patternProperties"])
      if (o[k] && typeof o[k] === "object")
        for (const [name, v] of Object.entries(o[k] as object))
          out.push(...faultsIn(v, `${at}/${name}`, seen));
    for (const k of ["items", "additionalProperties", "not"]) out.push(...faultsIn(o[k], `${at}/${k}`, seen));
    return out;
  }

  test("no route's body schema takes a number written as text, or an unbounded number", () => {
    const routes = s.app.routes as { method: string; path: string; hooks?: { body?: unknown } }[];
    let checked = 0;
    const found: string[] = [];
    for (const r of routes) {
      if (!r.hooks?.body) continue;
      checked++;
      for (const f of faultsIn(r.hooks.body)) found.push(`${r.method} ${r.path} ${f}`);
    }
    expect(checked).toBeGreaterThanOrEqual(19);
    expect(found).toEqual([]);
    // The check sees what it looks for.
    expect(
      faultsIn({
        properties: { n: { [TransformKind]: {}, anyOf: [{ type: "string", format: "integer" }] } },
      }),
    ).toEqual(["/n: transform", "/n/anyOf/0: numeric text"]);
    expect(faultsIn({ properties: { n: { type: "integer", minimum: 0 } } })).toEqual(["/n: no maximum"]);
  });

  test("a number written as text is a 400 naming the field, on every route with an integer", async () => {
    const invalidAs = (field: string, message: string) =>
      errorBody(400, "invalid_request", "The request is invalid.", [{ field, code: "invalid", message }]);
    const token = s.rootToken;
    const wf = await call(s, "GET", `${WORKFLOWS}bodies/`, { token });
    const cases: [string, string, Record<string, unknown>, string, string][] = [
      [
        "PATCH",
        "/api/v1/admin/settings/",
        { token_rotation_days: "-1" },
        "token_rotation_days",
        "must be an integer from 1 to 36500 or null",
      ],
      [
        "POST",
        "/api/v1/users/me/tokens/",
        { name: "x", expires_in_days: "1e10" },
        "expires_in_days",
        "must be an integer from 1 to 36500 or null",
      ],
      [
        "PATCH",
        `${WORKFLOWS}bodies/`,
        { retention_days: "0x10" },
        "retention_days",
        "must be an integer from 0 to 36500 or null",
      ],
      [
        "POST",
        `${WORKFLOWS}bodies/steps/`,
        { name: "c", validator: "syntax", order: "1" },
        "order",
        "must be an integer from 1 to 50",
      ],
      [
        "PATCH",
        `${WORKFLOWS}bodies/steps/${wf.json.steps[0].id}/`,
        { order: "-1" },
        "order",
        "must be an integer from 1 to 50",
      ],
    ];
    for (const [method, path, body, field, message] of cases)
      expect((await call(s, method, path, { token, body })).json).toEqual(invalidAs(field, message));
    expect((await call(s, "GET", `${WORKFLOWS}bodies/`, { token })).json).toEqual(wf.json);
    expect((await call(s, "GET", "/api/v1/admin/settings/", { token })).json.token_rotation_days).toBeNull();
  });
});

describe("a value the framework cannot print in its report of a bad body", () => {
  // Elysia writes a failed field's value into its message, which threw for an object whose own
  // toString or valueOf is no function: a 500 (test/fuzz.test.ts found it on PATCH …/steps/{id}/).
  test("400 naming the body, the whole error object, nothing changed", async () => {
    const before = await s.sql("SELECT name FROM steps ORDER BY id");
    for (const [method, path, body] of [
      ["PATCH", `${WORKFLOWS}bodies/steps/1/`, { name: { toString: "" }, steps: [] }],
      ["PATCH", `${WORKFLOWS}bodies/steps/%00/`, { name: { toString: [] }, x: 1 }],
      ["POST", WORKFLOWS, { slug: { toString: 1 }, name: "n", allowed_file_types: ["JSON"], extra: 1 }],
    ] as const) {
      const r = await call(s, method, path, { token: s.rootToken, body });
      expect({ status: r.status, json: r.json }).toEqual({
        status: 400,
        json: errorBody(400, "invalid_request", "The request is invalid.", [
          { field: "body", code: "invalid", message: "does not match the endpoint's schema" },
        ]),
      });
    }
    expect(await s.sql("SELECT name FROM steps ORDER BY id")).toEqual(before);
    expect(await s.count("workflows")).toBe(1);
  });
});
