// POST …/runs/: what intake keeps of a submission's text, through the real server. An envelope's
// object content is stored as written (it was parsed and serialized again); charsets mean what
// they say (us-ascii, iso-8859-1, utf-16 with its BOM, an envelope in UTF-16); text is JSON only
// between JSON whitespace; empty or undecodable multipart parts; a UTF-8 X-Filename; C1 controls
// in filenames; strict base64. Findings of the 2026-11-28 intake audit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OFFLOAD_MIN_BYTES } from "../src/runs/intake/offload.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let token: string;
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;
const JSON_CT = { "content-type": "application/json" };
const syntax = { name: "syntax", validator: "syntax", config: {} };
const rules = (...r: [string, string][]) => ({
  name: "rules",
  validator: "assertions",
  config: { rules: r.map(([id, expr]) => ({ id, expr, message: id })) },
});

beforeAll(async () => {
  s = await startTestServer();
  token = (await s.user("exec", "acme", "executor")).token;
  const wf = (slug: string, allowed_file_types: string[], steps: unknown[]) =>
    createWorkflow(s, s.rootToken, { slug, allowed_file_types, steps });
  await wf("all", ["JSON", "XML", "YAML", "CSV", "TEXT"], [syntax]);
  await wf("text", ["TEXT"], [syntax]);
  await wf(
    "numbers",
    ["JSON"],
    [syntax, rules(["id", "data.id == 9007199254740993"], ["price", "type(data.price) == double"])],
  );
  await wf("latin", ["JSON"], [rules(["a", 'data.a == "\\u0080"'])]);
  await wf("xml-text", ["XML"], [syntax, rules(["a", 'data.a == "café"'])]);
  await wf(
    "file-rules",
    ["TEXT"],
    [{ name: "file", validator: "text_rules", config: { encoding: "utf-8", max_bytes: 5 } }],
  );
});
afterAll(() => s.close());

const post = (wf: string, raw: BodyInit, headers: Record<string, string> = {}) =>
  call(s, "POST", runs(wf), { token, raw, headers });
const content = async (id: string) => {
  const r = await fetch(`${s.url}/api/v1/orgs/acme/runs/${id}/content/`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return new Uint8Array(await r.arrayBuffer());
};
const codes = (run: { steps: { findings: { code: string }[] }[] }) =>
  run.steps.flatMap((st) => st.findings.map((f) => f.code));
const invalid = (...errors: unknown[]) =>
  errorBody(400, "invalid_request", "The run request is invalid.", errors);
/** UTF-16LE bytes as UTF-16BE. */
const swap = (le: Uint8Array) => le.map((_, i) => le[i % 2 === 0 ? i + 1 : i - 1]!);
const form = (parts: [string, string | Blob, string?][]) => {
  const f = new FormData();
  for (const [k, v, name] of parts) typeof v === "string" ? f.append(k, v) : f.append(k, v, name);
  return f;
};

describe("an envelope's object content is stored as the client wrote it", () => {
  const P = '{"id": 9007199254740993, "price": 19.0, "k": 1, "k": 2, "x": 1e400}';

  async function sameAsRaw(body: string, document: string) {
    const r = await post("numbers", body, JSON_CT);
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
    expect(codes(r.json)).toEqual(["json.duplicate_key"]);
    expect(new TextDecoder().decode(await content(r.json.id))).toBe(document);
  }

  test("raw mode: the numbers hold and the duplicate key is a warning", async () => {
    const r = await post("numbers", P, JSON_CT);
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
    expect(codes(r.json)).toEqual(["json.duplicate_key"]);
  });

  test("envelope: the same run and the same bytes (was failed, 9007199254740992, 19, null)", async () => {
    await sameAsRaw(`{"content": ${P}, "filename": "n.json"}`, P);
    // A key spelled with an escape, whitespace around the value: only the value is stored.
    await sameAsRaw(`{ "con\\u0074ent" :\n  ${P}\n}`, P);
  });

  test("a large envelope, read on the intake thread, keeps the document the same way", async () => {
    const big = P.replace("{", `{${" ".repeat(OFFLOAD_MIN_BYTES)}`);
    const before = s.deps.intake.offloaded;
    await sameAsRaw(`{"content": ${big}}`, big);
    expect(s.deps.intake.offloaded - before).toBe(1);
  });

  test("400 when an envelope field is sent twice (JSON.parse kept the last)", async () => {
    const before = await s.count("runs");
    const r = await post(
      "all",
      '{"content": {"a": 1}, "content": "x", "content_type": "text/plain"}',
      JSON_CT,
    );
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      invalid({ field: "content", code: "duplicate", message: 'The field "content" is sent twice.' }),
    );
    expect(await s.count("runs")).toBe(before);
  });
});

describe("text/plain is JSON only between JSON whitespace", () => {
  for (const [name, ws] of [
    ["U+00A0", [0xc2, 0xa0]],
    ["U+2028", [0xe2, 0x80, 0xa8]],
    ["VT", [0x0b]],
    ["FF", [0x0c]],
  ] as const)
    test(`${name} before {"a":1}: TEXT (was JSON: 400 on a TEXT workflow)`, async () => {
      const body = new Uint8Array([...ws, ...Buffer.from('{"a":1}')]);
      const r = await post("text", body, { "content-type": "text/plain" });
      expect(r.status).toBe(201);
      expect(r.json.submission.file_type).toBe("TEXT");
      expect(r.json.status).toBe("succeeded");
    });

  test("JSON's own whitespace around an object still makes it JSON", async () => {
    const r = await post("all", ' \r\n\t{"a":1}\n', { "content-type": "text/plain" });
    expect(r.status).toBe(201);
    expect(r.json.submission.file_type).toBe("JSON");
  });
});

describe("multipart parts", () => {
  test("an empty content_type part does not override the file part's type", async () => {
    const r = await post(
      "all",
      form([
        ["file", new Blob(["<a/>"], { type: "application/xml" }), "f.xml"],
        ["content_type", ""],
      ]),
    );
    expect(r.status).toBe(201);
    expect(r.json.submission).toEqual(
      expect.objectContaining({ file_type: "XML", content_type: "application/xml", filename: "f.xml" }),
    );
  });

  test("an empty filename part does not override the file part's name (nor the type it implies)", async () => {
    const r = await post(
      "all",
      form([
        ["file", new Blob(['{"a":1}'], { type: "application/octet-stream" }), "order.json"],
        ["filename", ""],
      ]),
    );
    expect(r.status).toBe(201);
    expect(r.json.submission).toEqual(
      expect.objectContaining({
        file_type: "JSON",
        content_type: "application/json",
        filename: "order.json",
      }),
    );
  });

  test("a metadata part holding null is no metadata, as in an envelope", async () => {
    const r = await post(
      "all",
      form([
        ["content", "hi"],
        ["content_type", "text/plain"],
        ["metadata", "null"],
      ]),
    );
    expect(r.status).toBe(201);
    expect(r.json.submission.metadata).toEqual({});
  });

  test("400 when a text part is not UTF-8 (was stored with U+FFFD)", async () => {
    const before = await s.count("runs");
    const bad = new Blob([new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])]);
    const r = await post(
      "all",
      form([
        ["content", "hi"],
        ["content_type", "text/plain"],
        ["metadata", bad, "m"],
        ["filename", new Blob([new Uint8Array([0x61, 0xc3])]), "f"],
      ]),
    );
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      invalid(
        { field: "filename", code: "invalid_encoding", message: "The filename part is not valid UTF-8." },
        { field: "metadata", code: "invalid_encoding", message: "The metadata part is not valid UTF-8." },
      ),
    );
    expect(await s.count("runs")).toBe(before);
  });
});

describe("charsets mean what they say", () => {
  test("charset=utf-16 with a big-endian BOM is read big-endian (was a syntax error)", async () => {
    const bytes = new Uint8Array([0xfe, 0xff, 0, 0x7b, 0, 0x22, 0, 0x61, 0, 0x22, 0, 0x3a, 0, 0x31, 0, 0x7d]);
    const r = await post("all", bytes, { "content-type": "application/json; charset=utf-16" });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
    expect(await content(r.json.id)).toEqual(bytes);
  });

  test("charset=utf-16 with a little-endian BOM is read little-endian", async () => {
    const bytes = new Uint8Array([0xff, 0xfe, 0x5b, 0, 0x31, 0, 0x5d, 0]);
    const r = await post("all", bytes, { "content-type": "application/json; charset=utf-16" });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
  });

  test("an envelope in UTF-16LE is an envelope (was taken as a raw JSON document)", async () => {
    const body = Buffer.from('{"content":"<a/>","content_type":"application/xml"}', "utf16le");
    const r = await post("all", body, { "content-type": "application/json; charset=utf-16le" });
    expect(r.status).toBe(201);
    expect(r.json.submission).toEqual(
      expect.objectContaining({ file_type: "XML", content_type: "application/xml" }),
    );
    expect(new TextDecoder().decode(await content(r.json.id))).toBe("<a/>");
  });

  // Fuzzing the built server (2026-11-29): UTF-16 without a BOM was taken for UTF-8 (NULs are
  // valid UTF-8); libxml2 read the bytes right, the steps that read the text got "\0<\0?…".
  for (const [label, encoding] of [
    ["big", "utf-16be"],
    ["little", "utf-16le"],
  ] as const)
    test(`XML in UTF-16 ${label}-endian without a BOM is read as its first bytes say (XML 1.0 Appendix F)`, async () => {
      const text = '<?xml version="1.0" encoding="UTF-16"?><a>café</a>';
      const bytes = new Uint8Array(Buffer.from(text, "utf16le"));
      const raw = encoding === "utf-16be" ? swap(bytes) : bytes;
      const r = await post("xml-text", raw, { "content-type": "application/xml" });
      expect(r.status).toBe(201);
      expect(r.json.status).toBe("succeeded");
      expect(codes(r.json)).toEqual([]);
      expect(await content(r.json.id)).toEqual(raw);
    });

  test("400 for a byte over 0x7F in us-ascii (was read as windows-1252: 201)", async () => {
    const r = await post("all", new Uint8Array([0x63, 0x61, 0x66, 0xe9]), {
      "content-type": "text/plain; charset=us-ascii",
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      invalid({ field: "charset", code: "invalid_encoding", message: "The content is not valid us-ascii." }),
    );
  });

  test("iso-8859-1 is ISO-8859-1: 0x80 is U+0080 to the validators, not €", async () => {
    const bytes = new Uint8Array([...Buffer.from('{"a":"'), 0x80, ...Buffer.from('"}')]);
    const r = await post("latin", bytes, { "content-type": "application/json; charset=iso-8859-1" });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
    expect(await content(r.json.id)).toEqual(bytes);
  });
});

describe("text_rules read the file as it came, not the worker's UTF-8 copy", () => {
  test("a Latin-1 file is not UTF-8, and its size is its own bytes' (5, not the copy's 6)", async () => {
    const bytes = new Uint8Array([...Buffer.from("caf"), 0xe9, ...Buffer.from("!")]);
    const r = await post("file-rules", bytes, { "content-type": "text/plain; charset=iso-8859-1" });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("failed");
    expect(r.json.steps[0].findings).toEqual([
      {
        severity: "error",
        code: "text.encoding",
        message: "an invalid UTF-8 byte (0xe9) at byte offset 3",
        path: null,
        line: 1,
        column: 4,
        rule: null,
      },
    ]);
  });
});

describe("text_rules locate a stored byte in the text of the file's own charset", () => {
  const at = (r: { json: { steps: { findings: { code: string; line: number; column: number }[] }[] } }) =>
    r.json.steps[0].findings.map((f) => [f.code, f.line, f.column]);
  test("Latin-1: the bytes C3 A9 are two characters, Ã and ©, so the bad byte after them is column 3", async () => {
    const bytes = new Uint8Array([0xc3, 0xa9, 0xe9]);
    const r = await post("file-rules", bytes, { "content-type": "text/plain; charset=iso-8859-1" });
    expect([r.status, r.json.status]).toEqual([201, "failed"]);
    expect(at(r)).toEqual([["text.encoding", 1, 3]]);
  });
  test("UTF-16: byte 5 is the second byte of 'b', line 1 column 2 (was column 6)", async () => {
    const text = "ab\ncd";
    const bytes = new Uint8Array([0xff, 0xfe, ...Buffer.from(text, "utf16le")]);
    const r = await post("file-rules", bytes, { "content-type": "text/plain; charset=utf-16" });
    expect([r.status, r.json.status]).toEqual([201, "failed"]);
    expect(at(r)).toEqual([
      ["text.encoding", 1, 1],
      ["text.max_bytes", 1, 2],
    ]);
  });
});

describe("filenames", () => {
  test("a UTF-8 X-Filename is stored as its characters (was mojibake: â\\u0082¬.xml)", async () => {
    // Header values travel as bytes; these code units are the bytes of "€.xml" in UTF-8.
    const r = await post("all", "<a/>", {
      "content-type": "application/xml",
      "x-filename": "\u00e2\u0082\u00ac.xml",
    });
    expect(r.status).toBe(201);
    expect(r.json.submission.filename).toBe("€.xml");
  });

  test("an X-Filename that is not UTF-8 is read as Latin-1", async () => {
    const r = await post("all", "<a/>", { "content-type": "application/xml", "x-filename": "caf\u00e9.xml" });
    expect(r.status).toBe(201);
    expect(r.json.submission.filename).toBe("café.xml");
  });

  test("a file part's filename is read as X-Filename is: UTF-8 if it is, else Latin-1 (was U+FFFD)", async () => {
    const part = (name: number[]) =>
      Uint8Array.from([
        ...Buffer.from('--XX\r\nContent-Disposition: form-data; name="file"; filename="'),
        ...name,
        ...Buffer.from('"\r\nContent-Type: application/xml\r\n\r\n<a/>\r\n--XX--\r\n'),
      ]);
    const multipart = { "content-type": "multipart/form-data; boundary=XX" };
    const utf8 = await post("all", part([...Buffer.from("café.xml")]), multipart);
    const latin1 = await post("all", part([...Buffer.from("café.xml", "latin1")]), multipart);
    expect([utf8.status, utf8.json.submission.filename]).toEqual([201, "café.xml"]);
    expect([latin1.status, latin1.json.submission.filename]).toEqual([201, "café.xml"]);
  });

  const refused = (field: string) =>
    invalid({
      field,
      code: "invalid",
      message:
        "filename may not contain control characters (bidirectional ones too), line separators, unpaired surrogates or path separators.",
    });

  test("400 for a C1 control in X-Filename (U+0085 sent as UTF-8)", async () => {
    const r = await post("all", "<a/>", {
      "content-type": "application/xml",
      "x-filename": "a\u00c2\u0085b.xml",
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(refused("X-Filename"));
  });

  test("400 for U+009B (CSI) in an envelope's filename", async () => {
    const r = await call(s, "POST", runs("all"), {
      token,
      body: { content: "<a/>", content_type: "application/xml", filename: "a\u009b[31mb.xml" },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(refused("filename"));
  });
});

test("400 for base64 whose spare bits are not zero (YR== was taken as YQ==)", async () => {
  const r = await post("all", "YR==", { "content-type": "text/plain", "content-encoding": "base64" });
  expect(r.status).toBe(400);
  expect(r.json).toEqual(
    invalid({
      field: "body",
      code: "invalid_base64",
      message: "The body is not valid base64 (Content-Encoding: base64).",
    }),
  );
});

describe("byte order marks", () => {
  const bom = [0xef, 0xbb, 0xbf];
  const doc = [...new TextEncoder().encode('{"a": 1}')];
  test("one is taken off; a second is a JSON syntax error at 1:1, in the run as stored", async () => {
    const one = await post("all", new Uint8Array([...bom, ...doc]), JSON_CT);
    expect([one.status, one.json.status, codes(one.json)]).toEqual([201, "succeeded", []]);
    const two = await post("all", new Uint8Array([...bom, ...bom, ...doc]), JSON_CT);
    expect([two.status, two.json.status]).toEqual([201, "failed"]);
    const f = two.json.steps[0].findings[0];
    expect([f.code, f.line, f.column]).toEqual(["json.syntax_error", 1, 1]);
    expect([...(await content(two.json.id))]).toEqual([...bom, ...bom, ...doc]);
  });
});
