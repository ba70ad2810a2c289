// A run's content type is stored and returned with every read of the run (and 50 to a list page):
// until 2026-11-28 an envelope's content_type of 10 MB was stored, and a GET answered 10 MB; CR/LF,
// controls, bidirectional overrides and unpaired surrogates were stored, a NUL on SQLite (a
// generic 400 on PostgreSQL). Now 255 characters of one line of text in every mode (the raw
// Content-Type header included), refused with the field named and nothing stored, on both
// backends. Also: refusals that repeat the client's input repeat at most 100 characters of it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_CONTENT_TYPE_LENGTH } from "../src/runs/intake/modes.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let token: string;
const path = "/api/v1/orgs/acme/workflows/docs/runs/";
const ONE_LINE =
  "may not contain control characters, line separators, bidirectional overrides or isolates, or unpaired surrogates.";

beforeAll(async () => {
  s = await startTestServer();
  token = (await s.user("ed", "acme", "author")).token;
  await createWorkflow(s, token, {
    slug: "docs",
    allowed_file_types: ["JSON", "TEXT"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

const stored = async () => [await s.count("runs"), await s.count("submissions")];
const invalidRun = (field: string, code: string, message: string) =>
  errorBody(400, "invalid_request", "The run request is invalid.", [{ field, code, message }]);
const tooLong = (field: string) =>
  invalidRun(field, "too_long", `${field} may hold at most ${MAX_CONTENT_TYPE_LENGTH} characters.`);

async function refused(o: Parameters<typeof call>[3], status: number, expected: unknown) {
  const before = await stored();
  const r = await call(s, "POST", path, { token, ...o });
  expect(r.json).toEqual(expected);
  expect(r.status).toBe(status);
  expect(await stored()).toEqual(before);
}

const envelope = (content_type: string) => ({ body: { content: { a: 1 }, content_type } });
const multipart = (contentType: string) => {
  const f = new FormData();
  f.append("file", new Blob(['{"a":1}']), "a.json");
  f.append("content_type", contentType);
  return { raw: f };
};
const raw = (contentType: string, headers: Record<string, string> = {}) => ({
  raw: '{"a":1}',
  headers: { "content-type": contentType, ...headers },
});

describe("400 too_long over 255 characters, in every mode", () => {
  const long = (n: number) => `application/json; x=${"a".repeat(n - 20)}`;
  test("the envelope's content_type: 256, 10 KB and 2 MB (read on the intake thread)", async () => {
    for (const n of [256, 10_000, 2_000_000]) await refused(envelope(long(n)), 400, tooLong("content_type"));
  });
  test("multipart's content_type part", async () => {
    await refused(multipart(long(10_000)), 400, tooLong("content_type"));
  });
  test("the raw body's Content-Type header (it is what raw mode stores)", async () => {
    await refused(raw(long(12_000)), 400, tooLong("Content-Type"));
  });
  test("255 characters are stored and returned as sent", async () => {
    const ct = long(255);
    for (const o of [envelope(ct), multipart(ct), raw(ct)]) {
      const r = await call(s, "POST", path, { token, ...o });
      expect(r.status).toBe(201);
      expect(r.json.submission.content_type).toBe(ct);
    }
  });
  // Until 2026-11-29 the bound counted UTF-16 code units and the document stated none.
  test("characters are code points, as the document's maxLength 255 counts them", async () => {
    const ct = `application/json; x="${"\u{1F600}".repeat(255 - 22)}"`;
    const r = await call(s, "POST", path, { token, ...envelope(ct) });
    expect([r.status, r.json.submission?.content_type]).toEqual([201, ct]);
    const doc = (await call(s, "GET", "/api/v1/openapi.json")).json;
    for (const name of ["RunEnvelope", "RunMultipart"])
      expect(doc.components.schemas[name].properties.content_type.maxLength).toBe(MAX_CONTENT_TYPE_LENGTH);
  });
});

describe("400 invalid for what a line of text may not hold", () => {
  const BAD = [
    'application/json; x="a\r\nb"',
    "application/json; x=\u0001",
    "application/json\u0000",
    "application/json; x=\u0085",
    "application/json; x=\u202e",
    "application/json; x=\u2028",
    "application/json; x=\ud800",
  ];
  test("in the envelope and the multipart part", async () => {
    for (const ct of BAD) {
      await refused(envelope(ct), 400, invalidRun("content_type", "invalid", `content_type ${ONE_LINE}`));
      // FormData sends an unpaired surrogate as U+FFFD, a character like any other.
      if (ct.isWellFormed())
        await refused(multipart(ct), 400, invalidRun("content_type", "invalid", `content_type ${ONE_LINE}`));
    }
  });
  test("a TAB, which HTTP allows around a header's parameters, is kept", async () => {
    for (const o of [envelope("application/json;\tcharset=utf-8"), raw("application/json;\tcharset=utf-8")]) {
      const r = await call(s, "POST", path, { token, ...o });
      expect(r.status).toBe(201);
      expect(r.json.submission.content_type).toBe("application/json;\tcharset=utf-8");
    }
  });
});

describe("a refusal repeats at most 100 characters of the client's input", () => {
  const cut = (s: string) => `${s.slice(0, 100)}…`;
  test("415: a Content-Type that is not a media type, an unknown charset, a Content-Encoding", async () => {
    const notMedia = "x".repeat(10_000);
    await refused(
      raw(notMedia),
      415,
      errorBody(415, "unsupported_media_type", `"${cut(notMedia)}" is not a media type.`),
    );
    const charset = "z".repeat(10_000);
    await refused(
      raw(`application/json; charset=${charset}`),
      415,
      errorBody(415, "unsupported_media_type", `The charset "${cut(charset)}" is not supported.`),
    );
    const encoding = "y".repeat(5000);
    await refused(
      raw("application/json", { "content-encoding": encoding }),
      415,
      errorBody(
        415,
        "unsupported_media_type",
        `Content-Encoding "${cut(encoding)}" is not supported; use base64 or none.`,
      ),
    );
  });
  test("400: an unknown envelope field, its name cut in field and message", async () => {
    const key = "k".repeat(100_000);
    await refused(
      {
        body: { content: "x", content_type: "text/plain", [key]: 1 },
        headers: { "x-submission-mode": "envelope" },
      },
      400,
      invalidRun(cut(key), "unknown_field", `Unknown envelope field "${cut(key)}".`),
    );
  });
  test("the cut never splits a surrogate pair", async () => {
    const encoding = `${"y".repeat(99)}\u{1f600}yyy`;
    await refused(
      {
        body: { content: "x", content_type: "text/plain", [encoding]: 1 },
        headers: { "x-submission-mode": "envelope" },
      },
      400,
      invalidRun(`${"y".repeat(99)}…`, "unknown_field", `Unknown envelope field "${"y".repeat(99)}…".`),
    );
  });
});
