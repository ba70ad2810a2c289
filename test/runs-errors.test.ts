// Every refusal of POST …/runs/ in the contract's order: exact status, code, whole body, and
// nothing stored (no run, no submission).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let exec: string;
const runs = (wf: string, org = "acme") => `/api/v1/orgs/${org}/workflows/${wf}/runs/`;
const JSON_CT = { "content-type": "application/json" };
beforeAll(async () => {
  s = await startTestServer({ max_payload_bytes: 4096, max_metadata_bytes: 64 });
  exec = (await s.user("exec", "acme", "executor")).token;
  await createWorkflow(s, s.rootToken, {
    slug: "json",
    allowed_file_types: ["JSON"],
    steps: [{ name: "schema", validator: "json_schema", config: { schema: { type: "object" } } }],
  });
  await createWorkflow(s, s.rootToken, {
    slug: "xmlish",
    allowed_file_types: ["JSON", "XML"],
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      { name: "schema", validator: "json_schema", config: { schema: {} } },
    ],
  });
  await createWorkflow(s, s.rootToken, {
    slug: "off",
    status: "inactive",
    allowed_file_types: ["JSON"],
    steps: [{ name: "s", validator: "syntax", config: {} }],
  });
  await createWorkflow(s, s.rootToken, { slug: "empty", allowed_file_types: ["JSON"], steps: [] });
  await createWorkflow(s, s.rootToken, {
    slug: "idle",
    allowed_file_types: ["JSON"],
    steps: [{ name: "s", validator: "syntax", config: {}, is_active: false }],
  });
});
afterAll(() => s.close());

/** Sends the request and asserts the whole error body and that nothing was stored. */
async function refused(
  path: string,
  o: Parameters<typeof call>[3],
  status: number,
  code: string,
  detail: unknown,
  errors: unknown[] = [],
) {
  const before = [await s.count("runs"), await s.count("submissions")];
  const r = await call(s, "POST", path, o);
  expect(r.json).toEqual(errorBody(status, code, detail, errors));
  expect(r.status).toBe(status);
  expect(r.headers.get("content-type")).toContain("application/json");
  expect([await s.count("runs"), await s.count("submissions")]).toEqual(before);
  return r;
}

describe("in the contract's order", () => {
  test("401 authentication_required without a token", async () => {
    const r = await refused(
      runs("json"),
      { raw: "{}", headers: JSON_CT },
      401,
      "authentication_required",
      expect.any(String),
    );
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });
  test("404 not_found for an unknown org", async () => {
    await refused(
      runs("json", "nope"),
      { token: exec, raw: "{}", headers: JSON_CT },
      404,
      "not_found",
      "Organization not found.",
    );
  });
  test("403 permission_denied below Executor", async () => {
    const viewer = (await s.user("view", "acme", "viewer")).token;
    await refused(
      runs("json"),
      { token: viewer, raw: "{}", headers: JSON_CT },
      403,
      "permission_denied",
      "This action needs the executor role or higher.",
    );
  });
  test("403 permission_denied for a non-member", async () => {
    const other = (await s.user("otto", "other", "admin")).token;
    await refused(
      runs("json"),
      { token: other, raw: "{}", headers: JSON_CT },
      403,
      "permission_denied",
      "You are not a member of this organization.",
    );
  });
  test("404 not_found for an unknown workflow", async () => {
    await refused(
      runs("ghost"),
      { token: exec, raw: "{}", headers: JSON_CT },
      404,
      "not_found",
      "Workflow not found.",
    );
  });
  test("409 workflow_inactive", async () => {
    await refused(
      runs("off"),
      { token: exec, raw: "{}", headers: JSON_CT },
      409,
      "workflow_inactive",
      "The workflow is inactive; re-enable it to accept runs.",
    );
  });
  test("400 no_workflow_steps without steps, and with only inactive steps", async () => {
    await refused(
      runs("empty"),
      { token: exec, raw: "{}", headers: JSON_CT },
      400,
      "no_workflow_steps",
      "The workflow has no active steps.",
    );
    await refused(
      runs("idle"),
      { token: exec, raw: "{}", headers: JSON_CT },
      400,
      "no_workflow_steps",
      "The workflow has no active steps.",
    );
  });
  test("409 inactive comes before 413: an inactive workflow never reads the body", async () => {
    await refused(
      runs("off"),
      { token: exec, raw: "x".repeat(5000), headers: JSON_CT },
      409,
      "workflow_inactive",
      expect.any(String),
    );
  });
  test("413 payload_too_large names the limit", async () => {
    await refused(
      runs("json"),
      { token: exec, raw: `"${"x".repeat(5000)}"`, headers: JSON_CT },
      413,
      "payload_too_large",
      "The request body exceeds the limit of 4096 bytes.",
    );
  });
  test("415 unsupported_media_type for an unsupported content type (raw and envelope)", async () => {
    await refused(
      runs("json"),
      { token: exec, raw: "x", headers: { "content-type": "application/pdf" } },
      415,
      "unsupported_media_type",
      expect.stringContaining("application/pdf"),
    );
    await refused(
      runs("json"),
      { token: exec, body: { content: "x", content_type: "image/png" } },
      415,
      "unsupported_media_type",
      expect.stringContaining("image/png"),
    );
  });
  test("415 before any malformed field: a request wrong in two ways gets the earlier check (CONTRACT §4.7)", async () => {
    const pdf =
      'The content type "application/pdf" is not supported; use JSON, XML, YAML, CSV or text types.';
    // Raw: a bad X-Filename, a body that is no base64, an unknown submission mode.
    const faults: Record<string, string>[] = [
      { "x-filename": "a/b.pdf" },
      { "content-encoding": "base64" },
      { "x-submission-mode": "bogus" },
    ];
    for (const headers of faults)
      await refused(
        runs("json"),
        { token: exec, raw: "!!!", headers: { "content-type": "application/pdf", ...headers } },
        415,
        "unsupported_media_type",
        pdf,
      );
    // Envelope: metadata that is no object, a filename with a separator.
    await refused(
      runs("json"),
      { token: exec, body: { content: "x", content_type: "application/pdf", metadata: [], filename: "a/b" } },
      415,
      "unsupported_media_type",
      pdf,
    );
    // Multipart: a file part of that type, metadata that is not JSON.
    const f = new FormData();
    f.append("file", new File(["x"], "a.pdf", { type: "application/pdf" }));
    f.append("metadata", "notjson");
    const form = new Response(f);
    const type = form.headers.get("content-type")!;
    await refused(
      runs("json"),
      { token: exec, raw: new Uint8Array(await form.arrayBuffer()), headers: { "content-type": type } },
      415,
      "unsupported_media_type",
      pdf,
    );
  });
  test('an envelope\'s empty string is a value: metadata "" is no object, content_encoding "" no encoding', async () => {
    await refused(
      runs("json"),
      { token: exec, body: { content: { a: 1 }, metadata: "" } },
      400,
      "invalid_request",
      expect.any(String),
      [{ field: "metadata", code: "invalid", message: "metadata must be a JSON object." }],
    );
    await refused(
      runs("json"),
      { token: exec, body: { content: "{}", content_type: "application/json", content_encoding: "" } },
      400,
      "invalid_request",
      expect.any(String),
      [{ field: "content_encoding", code: "invalid", message: 'content_encoding is "base64" or absent.' }],
    );
  });
  test("415 for an unknown charset", async () => {
    await refused(
      runs("json"),
      { token: exec, raw: "{}", headers: { "content-type": "application/json; charset=klingon" } },
      415,
      "unsupported_media_type",
      'The charset "klingon" is not supported.',
    );
  });
  test("415 for an unknown charset in an envelope, whatever its content", async () => {
    // String content is stored as UTF-8, but the name it gives must still mean something.
    for (const content of ["hello", { a: 1 }])
      await refused(
        runs("json"),
        { token: exec, body: { content, content_type: "application/json; charset=bogus" } },
        415,
        "unsupported_media_type",
        'The charset "bogus" is not supported.',
      );
    await refused(
      runs("json"),
      {
        token: exec,
        body: {
          content: "e30=",
          content_encoding: "base64",
          content_type: "application/json; charset=bogus",
        },
      },
      415,
      "unsupported_media_type",
      'The charset "bogus" is not supported.',
    );
  });
  test("415 for an unknown charset on the request itself, in every mode", async () => {
    const bad = 'The charset "foo" is not supported.';
    const envelope = JSON.stringify({ content: "{}", content_type: "application/json" });
    await refused(
      runs("json"),
      { token: exec, raw: envelope, headers: { "content-type": "application/json; charset=foo" } },
      415,
      "unsupported_media_type",
      bad,
    );
    const f = new FormData();
    f.append("file", new File(["{}"], "a.json", { type: "application/json" }));
    const form = new Response(f);
    const type = `${form.headers.get("content-type")}; charset=foo`;
    await refused(
      runs("json"),
      { token: exec, raw: new Uint8Array(await form.arrayBuffer()), headers: { "content-type": type } },
      415,
      "unsupported_media_type",
      bad,
    );
  });
  test("an envelope is read in the charset its Content-Type names", async () => {
    // "é" as one ISO-8859-1 byte (0xE9): not UTF-8, so only the named charset reads it.
    const text = '{"content":"{\\"name\\":\\"caf\u00e9\\"}","content_type":"application/json"}';
    const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
    const r = await call(s, "POST", runs("json"), {
      token: exec,
      raw: bytes,
      headers: { "content-type": "application/json; charset=iso-8859-1" },
    });
    expect(r.status).toBe(201);
    const content = await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/content/`, { token: exec });
    expect(content.text).toBe('{"name":"caf\u00e9"}');
    expect(r.json.submission.size).toBe(Buffer.byteLength('{"name":"caf\u00e9"}'));
  });
  test("415 for two charsets that disagree (raw and envelope); the same one twice is one", async () => {
    const two = "text/plain; charset=utf-8; charset=latin1";
    await refused(
      runs("json"),
      { token: exec, raw: "\xff", headers: { "content-type": two } },
      415,
      "unsupported_media_type",
      "The content type names more than one charset; name one.",
    );
    await refused(
      runs("json"),
      { token: exec, body: { content: "x", content_type: two } },
      415,
      "unsupported_media_type",
      "The content type names more than one charset; name one.",
    );
    const same = await call(s, "POST", runs("json"), {
      token: exec,
      raw: "{}",
      headers: { "content-type": "application/json; charset=utf-8; charset=UTF-8" },
    });
    expect(same.status).toBe(201);
  });
  test("415 for a Content-Encoding other than base64", async () => {
    await refused(
      runs("json"),
      { token: exec, raw: "{}", headers: { "content-type": "application/json", "content-encoding": "br" } },
      415,
      "unsupported_media_type",
      expect.stringContaining("br"),
    );
  });
  test("that 415 says the codings a run start takes: Accept-Encoding: base64, identity (RFC 9110 §15.5.16)", async () => {
    const r = await call(s, "POST", runs("json"), {
      token: exec,
      raw: "{}",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    });
    expect([r.status, r.headers.get("accept-encoding"), r.json]).toEqual([
      415,
      "base64, identity",
      errorBody(415, "unsupported_media_type"),
    ]);
  });
  test("415 for X-Submission-Mode: envelope on a body that is not application/json", async () => {
    const envelope = JSON.stringify({ content: "<a/>", content_type: "application/xml" });
    for (const ct of ["text/plain", "Text/Plain; charset=utf-8", "application/xml", "text/json"])
      await refused(
        runs("xmlish"),
        { token: exec, raw: envelope, headers: { "content-type": ct, "x-submission-mode": "envelope" } },
        415,
        "unsupported_media_type",
        `An envelope (X-Submission-Mode: envelope) is sent as Content-Type: application/json, not "${ct.split(";")[0]!.toLowerCase()}".`,
      );
    // Multipart is an envelope in parts: the header agrees with it.
    const f = new FormData();
    f.append("file", new File(['{"a":1}'], "a.json", { type: "application/json" }));
    const parts = await call(s, "POST", runs("json"), {
      token: exec,
      raw: f,
      headers: { "x-submission-mode": "envelope" },
    });
    expect([parts.status, parts.json.submission?.filename]).toEqual([201, "a.json"]);
  });
  test("415 for X-Submission-Mode: raw on a multipart body", async () => {
    const f = new FormData();
    f.append("file", new File(["{}"], "a.json", { type: "application/json" }));
    await refused(
      runs("json"),
      { token: exec, raw: f, headers: { "x-submission-mode": "raw" } },
      415,
      "unsupported_media_type",
      "A raw body (X-Submission-Mode: raw) is the document itself, not multipart/form-data: send its bytes with its own Content-Type.",
    );
  });
  test("400 for an unknown X-Submission-Mode, whatever the Content-Type", async () => {
    for (const ct of ["application/json", "text/plain"])
      await refused(
        runs("json"),
        { token: exec, raw: "{}", headers: { "content-type": ct, "x-submission-mode": "bogus" } },
        400,
        "invalid_request",
        "The run request is invalid.",
        [{ field: "X-Submission-Mode", code: "invalid", message: "X-Submission-Mode is raw or envelope." }],
      );
  });
});

describe("400 invalid_request with errors[]", () => {
  const bad = (o: Parameters<typeof call>[3], errors: unknown[]) =>
    refused(
      runs("json"),
      { token: exec, ...o },
      400,
      "invalid_request",
      "The run request is invalid.",
      errors,
    );
  const item = (field: string, code: string) => ({ field, code, message: expect.any(String) });
  test("bad base64 in raw mode", () =>
    bad({ raw: "!!!", headers: { "content-type": "application/json", "content-encoding": "base64" } }, [
      item("body", "invalid_base64"),
    ]));
  test("bad base64 in an envelope", () =>
    bad({ body: { content: "a=b=", content_type: "application/json", content_encoding: "base64" } }, [
      item("content", "invalid_base64"),
    ]));
  test("metadata that is not JSON (multipart)", () => {
    const f = new FormData();
    f.append("file", new File(["{}"], "a.json", { type: "application/json" }));
    f.append("metadata", "{oops");
    return bad({ raw: f }, [item("metadata", "parse_error")]);
  });
  test("metadata that is not an object", () =>
    bad({ body: { content: "{}", content_type: "application/json", metadata: [1] } }, [
      item("metadata", "invalid"),
    ]));
  test("metadata over its limit", () =>
    bad({ body: { content: "{}", content_type: "application/json", metadata: { k: "x".repeat(100) } } }, [
      item("metadata", "too_large"),
    ]));
  test("missing content with X-Submission-Mode: envelope", () =>
    bad(
      {
        raw: '{"content_type":"application/json"}',
        headers: { "content-type": "application/json", "x-submission-mode": "envelope" },
      },
      [item("content", "required")],
    ));
  test("content string without content_type", () =>
    bad({ body: { content: "{}" } }, [item("content_type", "required")]));
  test("content string without content_type, its filename naming no known type", () =>
    bad({ body: { content: "{}", filename: "data.bin" } }, [item("content_type", "required")]));
  test("both file and content parts", () => {
    const f = new FormData();
    f.append("file", new File(["{}"], "a.json", { type: "application/json" }));
    f.append("content", "{}");
    return bad({ raw: f }, [item("file", "conflict")]);
  });
  test("neither file nor content part", () => {
    const f = new FormData();
    f.append("filename", "a.json");
    return bad({ raw: f }, [item("file", "required")]);
  });
  test("a malformed multipart body", () =>
    bad(
      {
        raw: "--xyz\r\nnot a header\r\n\r\n{}",
        headers: { "content-type": "multipart/form-data; boundary=xyz" },
      },
      [item("body", "malformed_multipart")],
    ));
  // What parsers in front of Assay could read otherwise (test/unit/runs/multipart.test.ts).
  for (const [what, disposition, why] of [
    [
      "a name given twice",
      'form-data; name="file"; name="content"',
      "the header parameter name is given twice",
    ],
    [
      "an unterminated quote",
      'form-data; name="file; filename=x.json',
      "the header parameter name has an unterminated quote",
    ],
  ] as const)
    test(`a multipart part with ${what}`, () =>
      bad(
        {
          raw: `--xyz\r\nContent-Disposition: ${disposition}\r\n\r\n{}\r\n--xyz--\r\n`,
          headers: { "content-type": "multipart/form-data; boundary=xyz" },
        },
        [
          {
            field: "body",
            code: "malformed_multipart",
            message: `The multipart body could not be parsed: ${why}.`,
          },
        ],
      ));
  // UTF-8 that a lenient decoder would accept: an overlong "/" and an encoded surrogate half.
  for (const [what, bytes] of [
    ["an overlong sequence", [0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x7d]],
    ["an encoded surrogate", [0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]],
    ["a truncated sequence at the end", [0x7b, 0x7d, 0xe2, 0x82]],
  ] as const)
    test(`JSON whose UTF-8 has ${what}`, () =>
      bad({ raw: new Uint8Array(bytes), headers: { "content-type": "application/json" } }, [
        item("charset", "invalid_encoding"),
      ]));
  test("plain text that is not valid UTF-8 (decoded to tell JSON from text)", () =>
    bad({ raw: new Uint8Array([0x68, 0x69, 0xff]), headers: { "content-type": "text/plain" } }, [
      item("charset", "invalid_encoding"),
    ]));
  test("bytes that are not valid in the declared charset", () =>
    bad(
      {
        raw: new Uint8Array([0x7b, 0xff, 0x7d]),
        headers: { "content-type": "application/json; charset=utf-8" },
      },
      [item("charset", "invalid_encoding")],
    ));
  test("a filename with a path separator", () =>
    bad({ raw: "{}", headers: { "content-type": "application/json", "x-filename": "../etc/passwd" } }, [
      item("X-Filename", "invalid"),
    ]));
  test('a filename that is "." or "..", or holds a bidirectional control, a line separator or an unpaired surrogate', async () => {
    const named = (filename: string) => ({
      body: { content: "{}", content_type: "application/json", filename },
    });
    const whole = (message: string) => [{ field: "filename", code: "invalid", message }];
    const chars =
      "filename may not contain control characters (bidirectional ones too), line separators, unpaired surrogates or path separators.";
    await bad(named("."), whole('filename may not be "." or "..".'));
    await bad(named(".."), whole('filename may not be "." or "..".'));
    await bad(named("invoice\u202efdp.exe"), whole(chars));
    await bad(named("a\u2066b.json"), whole(chars));
    await bad(named("a\ud800.json"), whole(chars));
    // U+2028/U+2029 break the line in every Unicode-aware display: a filename is one line.
    await bad(named("report\u2028evil.json"), whole(chars));
    await bad(named("a\u2029b.json"), whole(chars));
    await bad({ raw: "{}", headers: { "content-type": "application/json", "x-filename": ".." } }, [
      { field: "X-Filename", code: "invalid", message: 'filename may not be "." or "..".' },
    ]);
    // Dots inside a name, and other scripts, are names.
    for (const ok of ["..a.json", "a..json", "fa\u00e7ade \u6587\u4ef6.json"]) {
      const r = await call(s, "POST", runs("json"), { token: exec, ...named(ok) });
      expect(r.status).toBe(201);
      expect(r.json.submission.filename).toBe(ok);
    }
  });
  test("an unknown X-Submission-Mode", () =>
    bad({ raw: "{}", headers: { "content-type": "application/json", "x-submission-mode": "magic" } }, [
      item("X-Submission-Mode", "invalid"),
    ]));
  test("several problems at once are all listed", () =>
    bad({ body: { content: 5, content_type: "application/json", metadata: "x", content_encoding: "gzip" } }, [
      item("metadata", "invalid"),
      item("content_encoding", "invalid"),
      item("content", "invalid"),
    ]));
});

describe("400 file_type_unsupported", () => {
  test("a type outside allowed_file_types; detail also names a step that could not read it", async () => {
    await refused(
      runs("json"),
      { token: exec, raw: "<a/>", headers: { "content-type": "application/xml" } },
      400,
      "file_type_unsupported",
      'This workflow accepts JSON submissions; this one is XML. Step 1 "schema" (json_schema) does not support XML submissions either.',
    );
  });
  test("detail names the blocking step when a validator does not support the type", async () => {
    await refused(
      runs("xmlish"),
      { token: exec, raw: "<a/>", headers: { "content-type": "application/xml" } },
      400,
      "file_type_unsupported",
      'Step 2 "schema" (json_schema) does not support XML submissions.',
    );
  });
  test("text/plain that is clearly JSON is a JSON submission: a TEXT-only workflow refuses it", async () => {
    // The spec classifies it JSON, and the type must be among allowed_file_types (rule 2), in
    // every mode; text that is not an object or array stays TEXT and runs.
    await createWorkflow(s, s.rootToken, {
      slug: "text",
      allowed_file_types: ["TEXT"],
      steps: [{ name: "lines", validator: "text_rules", config: { max_lines: 5 } }],
    });
    const detail = "This workflow accepts TEXT submissions; this one is JSON.";
    const plain = { "content-type": "text/plain" };
    await refused(
      runs("text"),
      { token: exec, raw: '{"a": 1}', headers: plain },
      400,
      "file_type_unsupported",
      detail,
    );
    await refused(
      runs("text"),
      { token: exec, body: { content: "[1, 2]", content_type: "text/plain" } },
      400,
      "file_type_unsupported",
      detail,
    );
    const form = new FormData();
    form.append("file", new Blob(['{"a": 1}'], { type: "text/plain" }), "a.txt");
    await refused(runs("text"), { token: exec, raw: form }, 400, "file_type_unsupported", detail);
    const text = await call(s, "POST", runs("text"), { token: exec, raw: '"a": 1', headers: plain });
    expect([text.status, text.json.submission.file_type, text.json.status]).toEqual([
      201,
      "TEXT",
      "succeeded",
    ]);
  });
});

describe("limits count bytes", () => {
  test('metadata is measured in UTF-8 bytes: 30 × "é" (68 bytes of JSON, 38 UTF-16 units) is over a 64-byte limit', async () => {
    const before = await s.count("runs");
    const r = await call(s, "POST", runs("json"), {
      token: exec,
      body: { content: "{}", content_type: "application/json", metadata: { k: "é".repeat(30) } },
    });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The run request is invalid.", [
        { field: "metadata", code: "too_large", message: expect.any(String) },
      ]),
    );
    expect(await s.count("runs")).toBe(before);
  });
});

describe("metadata is measured the same in every mode", () => {
  test("its object's JSON, not the part's spacing: a multipart part is handled as the envelope's field", async () => {
    // The spec: after upload, a multipart request is handled the same way as a JSON envelope.
    // 36 bytes as the object's JSON, 126 as the spaced text of the part (the limit here is 64).
    const meta = { source: "ci", commit: "abc123def" };
    const pad = " ".repeat(30);
    const text = `{${pad}"source":"ci",${pad}"commit":"abc123def"${pad}}`;
    expect([JSON.stringify(meta).length, text.length]).toEqual([36, 126]);
    expect([JSON.stringify(meta).length <= 64, text.length > 64]).toEqual([true, true]);
    const form = new FormData();
    form.append("file", new Blob(["{}"], { type: "application/json" }), "a.json");
    form.append("metadata", text);
    const multipart = await call(s, "POST", runs("json"), { token: exec, raw: form });
    const envelope = await call(s, "POST", runs("json"), {
      token: exec,
      raw: `{"content": "{}", "content_type": "application/json", "metadata": ${text}}`,
      headers: JSON_CT,
    });
    for (const r of [multipart, envelope])
      expect([r.status, r.json.submission?.metadata]).toEqual([201, meta]);
    // Over the limit as an object: refused in both.
    const big = JSON.stringify({ k: "x".repeat(60) });
    const tooBig = [{ field: "metadata", code: "too_large", message: "metadata may hold at most 64 bytes." }];
    const form2 = new FormData();
    form2.append("file", new Blob(["{}"], { type: "application/json" }), "a.json");
    form2.append("metadata", big);
    await refused(
      runs("json"),
      { token: exec, raw: form2 },
      400,
      "invalid_request",
      "The run request is invalid.",
      tooBig,
    );
    await refused(
      runs("json"),
      {
        token: exec,
        raw: `{"content": "{}", "content_type": "application/json", "metadata": ${big}}`,
        headers: JSON_CT,
      },
      400,
      "invalid_request",
      "The run request is invalid.",
      tooBig,
    );
  });
});

describe("odd but legal requests", () => {
  test("a one-letter Host header is routed normally", async () => {
    const { connect } = await import("node:net");
    const port = new URL(s.url).port;
    const answer = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(port), "127.0.0.1", () =>
        sock.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
      );
      let out = "";
      sock.on("data", (d) => (out += d.toString()));
      sock.on("end", () => resolve(out));
      sock.on("error", reject);
    });
    expect(answer).toStartWith("HTTP/1.1 200");
  });
});
