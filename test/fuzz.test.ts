// Property-based hostile input (fast-check): thousands of generated malformed requests to the run
// endpoint and the authoring endpoints — random headers and content types, truncated multipart,
// invalid UTF-8 and base64, deep JSON, huge numbers, wrong types in every field. For each:
// never a 5xx, never a hang; every refusal is the error object with a known code; a refused
// request adds no row; and the server still answers /healthz at the end.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const KNOWN_CODES = new Set([
  "authentication_required",
  "permission_denied",
  "not_found",
  "workflow_inactive",
  "no_workflow_steps",
  "file_type_unsupported",
  "unsupported_media_type",
  "rate_limited",
  "invalid_request",
  "payload_too_large",
  "method_not_allowed",
  "conflict",
  "idempotency_key_reused",
  "idempotency_key_in_progress",
]);
const TABLES = ["runs", "submissions", "workflows", "steps", "workflow_versions", "idempotency_keys"];
const RUNS_PER_PROPERTY = 1500;

let s: TestServer;
const tokens: Record<string, string | null> = { bogus: "assay_not_a_real_token", none: null };
let workflowId = 0;
beforeAll(async () => {
  s = await startTestServer({ max_payload_bytes: 65536, max_body_bytes: 65536, sync_wait_ms: 0 });
  tokens.exec = (await s.user("exec", "acme", "executor")).token;
  tokens.viewer = (await s.user("viewer", "acme", "viewer")).token;
  tokens.author = (await s.user("author", "acme", "author")).token;
  const syntax = { name: "syntax", validator: "syntax", config: {} };
  await createWorkflow(s, tokens.author!, {
    slug: "data",
    allowed_file_types: ["JSON", "YAML"],
    steps: [syntax, { name: "schema", validator: "json_schema", config: { schema: { type: "object" } } }],
  });
  await createWorkflow(s, tokens.author!, {
    slug: "any",
    allowed_file_types: ["JSON", "XML", "YAML", "CSV", "TEXT"],
    steps: [syntax],
  });
  await createWorkflow(s, tokens.author!, {
    slug: "off",
    status: "inactive",
    allowed_file_types: ["JSON"],
    steps: [syntax],
  });
  workflowId = (
    await createWorkflow(s, tokens.author!, { slug: "fz", allowed_file_types: ["JSON"], steps: [syntax] })
  ).id;
});
afterAll(() => s.close());

const counts = () => TABLES.map((t) => s.count(t));

interface Req {
  method: string;
  path: string;
  token: string;
  headers: Record<string, string>;
  body: Uint8Array | string | null;
}

/** Sends one request and checks every promise of the error contract. */
async function check(r: Req) {
  const before = counts();
  const headers: Record<string, string> = { ...r.headers };
  const token = tokens[r.token];
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(s.url + r.path, {
    method: r.method,
    headers,
    body: r.body as BodyInit | null,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  expect(res.status).toBeLessThan(500);
  if (res.status < 400) return;
  expect(res.headers.get("content-type")).toBe("application/json");
  const body = JSON.parse(text);
  expect(Object.keys(body).sort()).toEqual(["code", "detail", "errors", "status"]);
  expect(body.status).toBe(res.status);
  expect(KNOWN_CODES.has(body.code) ? body.code : `unknown code ${body.code}`).toBe(body.code);
  expect(typeof body.detail).toBe("string");
  for (const e of body.errors) {
    expect(Object.keys(e).sort()).toEqual(["code", "field", "message"]);
    expect([typeof e.field, typeof e.code, typeof e.message]).toEqual(["string", "string", "string"]);
  }
  expect(counts()).toEqual(before);
}

// ---- generators shared by both endpoints -------------------------------------------------
const printable = fc.string({
  unit: fc.constantFrom(..." !\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~\u00e9\u00ff"),
  maxLength: 60,
});
const headerName = fc.stringMatching(/^x-[a-z0-9-]{1,20}$/);
const mediaType = fc.oneof(
  fc.constantFrom(
    "application/json",
    "text/json",
    "application/ld+json",
    "application/xml",
    "text/xml",
    "application/yaml",
    "text/csv",
    "text/tab-separated-values",
    "text/plain",
    "text/plain; charset=iso-8859-1",
    "text/plain; charset=utf-16le",
    "text/plain; charset=bogus",
    "application/json; charset=utf-8; x=y",
    "multipart/form-data",
    "multipart/form-data; boundary=",
    "application/x-www-form-urlencoded",
    "application/octet-stream",
    "image/png",
    "*/*",
    ";;",
    "",
  ),
  printable,
);
/** JSON text that JSON.stringify cannot produce: huge or special numbers. */
const hugeNumber = fc.constantFrom(
  "1e999999",
  "-1e-999999",
  "123456789012345678901234567890123456789",
  "0.0000000000000000000000001e-400",
  "-0",
  "1E+400",
);
const deepJson = fc
  .tuple(fc.integer({ min: 1, max: 20_000 }), fc.boolean(), fc.boolean())
  .map(([d, arrays, truncate]) => {
    const text = arrays ? "[".repeat(d) + "]".repeat(d) : '{"a":'.repeat(d) + "1" + "}".repeat(d);
    return truncate ? text.slice(0, text.length - 1) : text;
  });
const invalidUtf8 = fc
  .tuple(
    fc.string({ maxLength: 30 }),
    fc.constantFrom([0xff], [0xc3, 0x28], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80]),
  )
  .map(([prefix, bad]) => new Uint8Array([...new TextEncoder().encode(prefix), ...bad]));
const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(null), printable);
const rawText = fc.oneof(
  fc.uint8Array({ maxLength: 600 }),
  invalidUtf8,
  fc.string({ unit: "binary", maxLength: 300 }),
  deepJson,
  hugeNumber,
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? "null"),
);

// ---- the run endpoint --------------------------------------------------------------------
const envelopeBody = fc
  .record(
    {
      content: fc.oneof(anyValue, fc.base64String({ maxLength: 80 }), printable),
      content_type: fc.oneof(mediaType, anyValue),
      filename: fc.oneof(printable, anyValue, fc.string({ minLength: 250, maxLength: 300 })),
      metadata: fc.oneof(anyValue, fc.dictionary(printable, anyValue, { maxKeys: 5 })),
      content_encoding: fc.oneof(fc.constantFrom("base64", "BASE64", "gzip", ""), anyValue),
    },
    { requiredKeys: [] },
  )
  .chain((o) =>
    fc.oneof(
      fc.constant(JSON.stringify(o)),
      fc.dictionary(printable, anyValue, { maxKeys: 2 }).map((extra) => JSON.stringify({ ...extra, ...o })),
      // Splice a huge number or deep JSON into a field, where JSON.stringify cannot put it.
      fc
        .tuple(
          fc.constantFrom("content", "metadata", "filename", "content_type"),
          fc.oneof(hugeNumber, deepJson),
        )
        .map(([k, v]) => JSON.stringify({ ...o, [k]: 0 }).replace(`"${k}":0`, `"${k}":${v}`)),
    ),
  );
const multipartBody = fc
  .record({
    parts: fc.array(
      fc.record({
        name: fc.oneof(
          fc.constantFrom("file", "content", "filename", "content_type", "metadata", "content_encoding"),
          printable,
        ),
        filename: fc.option(printable),
        type: fc.option(mediaType),
        value: fc.oneof(
          printable,
          fc.base64String({ maxLength: 40 }),
          fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? ""),
        ),
      }),
      { maxLength: 5 },
    ),
    cut: fc.option(fc.nat()),
    headerBoundary: fc.constantFrom("b0undary", "other", ""),
  })
  .map(({ parts, cut, headerBoundary }) => {
    let text = parts
      .map(
        (p) =>
          `--b0undary\r\nContent-Disposition: form-data; name="${p.name}"` +
          (p.filename !== null ? `; filename="${p.filename}"` : "") +
          (p.type !== null ? `\r\nContent-Type: ${p.type}` : "") +
          `\r\n\r\n${p.value}\r\n`,
      )
      .join("");
    text += "--b0undary--\r\n";
    if (cut !== null) text = text.slice(0, cut % (text.length + 1)); // truncated
    return { text, contentType: `multipart/form-data; boundary=${headerBoundary}` };
  });
/** Present in about one request of six: each one alone can decide the answer. */
const rare = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
const runHeaders = fc
  .record({
    "content-encoding": rare(fc.oneof(fc.constantFrom("base64", "gzip", "identity", "br"), printable)),
    "x-filename": rare(printable),
    "x-submission-mode": rare(fc.oneof(fc.constantFrom("raw", "envelope", "RAW"), printable)),
    "idempotency-key": rare(fc.oneof(fc.constantFrom("k1", "k2"), fc.uuid())),
    prefer: rare(
      fc.oneof(fc.constantFrom("respond-async", "wait=0", "wait=99999999999", "wait=-1"), printable),
    ),
  })
  .map(
    (h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>,
  );
const runRequest: fc.Arbitrary<Req> = fc
  .record({
    wf: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom("data", "any") },
      {
        weight: 2,
        arbitrary: fc.constantFrom("off", "nope", "999999", "%00", "..%2F..%2F", "%C3%BC", "data%20"),
      },
    ),
    token: fc.oneof(
      { weight: 8, arbitrary: fc.constant("exec") },
      { weight: 2, arbitrary: fc.constantFrom("viewer", "bogus", "none") },
    ),
    headers: fc.tuple(runHeaders, fc.dictionary(headerName, printable, { maxKeys: 3 })),
    body: fc.oneof(
      fc.record({ ct: mediaType, body: rawText }),
      fc.record({
        ct: fc.constantFrom("application/json", "application/json; charset=utf-8"),
        body: envelopeBody,
      }),
      multipartBody.map((m) => ({ ct: m.contentType, body: m.text as Uint8Array | string })),
    ),
  })
  .map(({ wf, token, headers, body }) => ({
    method: "POST",
    path: `/api/v1/orgs/acme/workflows/${wf}/runs/`,
    token,
    headers: { ...headers[1], ...headers[0], "content-type": body.ct },
    body: body.body,
  }));

// ---- the authoring endpoints -------------------------------------------------------------
const stepValue = fc.record(
  {
    name: fc.oneof(printable, anyValue),
    validator: fc.oneof(
      fc.constantFrom(
        "syntax",
        "json_schema",
        "xml_schema",
        "schematron",
        "csv_table",
        "assertions",
        "text_rules",
        "nope",
      ),
      anyValue,
    ),
    config: fc.oneof(
      fc.dictionary(
        fc.constantFrom(
          "schema",
          "rules",
          "patterns",
          "max_findings",
          "timeout_ms",
          "schema_type",
          "dialect",
        ),
        anyValue,
      ),
      anyValue,
    ),
    is_active: anyValue,
    order: fc.oneof(fc.integer(), anyValue),
  },
  { requiredKeys: [] },
);
const definition = fc.record(
  {
    slug: fc.oneof(fc.stringMatching(/^[a-z][a-z0-9_-]{0,70}$/), anyValue),
    name: fc.oneof(printable, anyValue),
    description: fc.oneof(printable, anyValue),
    allowed_file_types: fc.oneof(fc.subarray(["JSON", "XML", "YAML", "CSV", "TEXT", "PDF"]), anyValue),
    fail_fast: anyValue,
    status: fc.oneof(fc.constantFrom("active", "inactive", "deleted"), anyValue),
    retention_days: fc.oneof(fc.integer(), anyValue),
    steps: fc.oneof(fc.array(stepValue, { maxLength: 4 }), anyValue),
  },
  { requiredKeys: [] },
);
const authoringRequest: fc.Arbitrary<Req> = fc
  .record({
    target: fc.constantFrom(
      ["POST", "/api/v1/orgs/acme/workflows/"],
      ["PUT", "/api/v1/orgs/acme/workflows/fz/"],
      ["PATCH", "/api/v1/orgs/acme/workflows/fz/"],
      ["PATCH", "/api/v1/orgs/acme/workflows/{id}/"],
      ["POST", "/api/v1/orgs/acme/workflows/fz/steps/"],
      ["PATCH", "/api/v1/orgs/acme/workflows/{id}/steps/1/"],
      ["PATCH", "/api/v1/orgs/acme/workflows/fz/steps/%00/"],
      ["POST", "/api/v1/orgs/other/workflows/"],
    ),
    token: fc.oneof(
      { weight: 8, arbitrary: fc.constant("author") },
      { weight: 2, arbitrary: fc.constantFrom("viewer", "bogus") },
    ),
    ct: fc.oneof(fc.constant("application/json"), fc.constant("application/json"), mediaType),
    extra: fc.dictionary(headerName, printable, { maxKeys: 3 }),
    body: fc.oneof(
      definition.map((d) => JSON.stringify(d)),
      stepValue.map((d) => JSON.stringify(d)),
      fc
        .tuple(
          definition,
          fc.constantFrom("retention_days", "steps", "name", "slug"),
          fc.oneof(hugeNumber, deepJson),
        )
        .map(([d, k, v]) => JSON.stringify({ ...d, [k]: 0 }).replace(`"${k}":0`, `"${k}":${v}`)),
      rawText,
    ),
  })
  .map(({ target, token, ct, extra, body }) => ({
    method: target[0],
    path: target[1].replace("{id}", String(workflowId)),
    token,
    headers: { ...extra, "content-type": ct },
    body,
  }));

describe("generated malformed requests", () => {
  test(`run endpoint: ${RUNS_PER_PROPERTY} requests, never a 5xx, always the error object, nothing stored`, async () => {
    await fc.assert(fc.asyncProperty(runRequest, check), { numRuns: RUNS_PER_PROPERTY });
  });

  test(`authoring endpoints: ${RUNS_PER_PROPERTY} requests, never a 5xx, always the error object, nothing stored`, async () => {
    await fc.assert(fc.asyncProperty(authoringRequest, check), { numRuns: RUNS_PER_PROPERTY });
  });

  test("the server still answers /healthz", async () => {
    const r = await call(s, "GET", "/healthz");
    expect(r.status).toBe(200);
    expect(r.json.status).toBe("ok");
  });
});
