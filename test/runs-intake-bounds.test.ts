// Hole 3 of issue #19: run envelopes were parsed without the depth bound every other body has. A
// 200 KB envelope whose metadata nests 100,000 levels answered 500 after 1.3 s (RangeError in
// JSON.stringify). Now: 400 invalid_request naming the field, and nothing stored. Large requests
// are read on the intake thread (src/runs/intake/offload.ts): the same answers, byte for byte.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_BODY_DEPTH } from "../src/http/limits.ts";
import { MAX_METADATA_DEPTH } from "../src/runs/intake/depth.ts";
import { OFFLOAD_MIN_BYTES } from "../src/runs/intake/offload.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let token: string;
const path = "/api/v1/orgs/acme/workflows/docs/runs/";
const JSON_CT = { "content-type": "application/json" };

beforeAll(async () => {
  s = await startTestServer();
  token = (await s.user("ed", "acme", "author")).token;
  await createWorkflow(s, token, {
    slug: "docs",
    allowed_file_types: ["JSON", "TEXT", "XML"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

const deepArray = (d: number) => "[".repeat(d) + "]".repeat(d);
const deepObject = (d: number) => '{"a":'.repeat(d) + "1" + "}".repeat(d);
const stored = async () => [await s.count("runs"), await s.count("submissions")];

const tooDeep = (field: "metadata" | "content", max: number) =>
  errorBody(400, "invalid_request", "The run request is invalid.", [
    { field, code: "too_deep", message: `${field} may nest at most ${max} levels.` },
  ]);

async function refused(body: string | FormData, field: "metadata" | "content", max: number) {
  const before = await stored();
  const r = await call(s, "POST", path, {
    token,
    raw: body,
    headers: typeof body === "string" ? JSON_CT : {},
  });
  expect(r.status).toBe(400);
  expect(r.json).toEqual(tooDeep(field, max));
  expect(await stored()).toEqual(before);
}

test("the metadata bound is the API's body bound", () => {
  expect(MAX_METADATA_DEPTH).toBe(MAX_BODY_DEPTH);
});

describe("400 too_deep, never a 500", () => {
  test("the attack: a 200 KB envelope whose metadata nests 100,000 levels", async () => {
    const body = `{"content":"x","content_type":"text/plain","metadata":{"m":${deepArray(100_000)}}}`;
    expect(body.length).toBeGreaterThan(200_000);
    await refused(body, "metadata", 256);
  });

  test("metadata of objects 100,000 levels deep", async () => {
    await refused(
      `{"content":"x","content_type":"text/plain","metadata":${deepObject(100_000)}}`,
      "metadata",
      256,
    );
  });

  test("object content 100,000 levels deep (it would be serialized)", async () => {
    await refused(`{"content":{"a":${deepArray(100_000)}}}`, "content", 512);
  });

  test("multipart metadata 5,000 levels deep (within the 16 KiB metadata limit)", async () => {
    const f = new FormData();
    f.append("file", new Blob(["{}"], { type: "application/json" }), "a.json");
    f.append("metadata", `{"a":${deepArray(5_000)}}`);
    await refused(f as unknown as string, "metadata", 256);
  });

  test("the bounds are exact: metadata of 256 levels and content of 512 pass, one more is refused", async () => {
    const meta = (d: number) =>
      `{"content":"x","content_type":"text/plain","metadata":{"a":${deepArray(d - 1)}}}`;
    const ok = await call(s, "POST", path, { token, raw: meta(256), headers: JSON_CT });
    expect(ok.status).toBe(201);
    await refused(meta(257), "metadata", 256);
    const content = (d: number) => `{"content":${deepArray(d)}}`;
    const fine = await call(s, "POST", path, { token, raw: content(512), headers: JSON_CT });
    expect(fine.status).toBe(201);
    expect(fine.json.submission.file_type).toBe("JSON");
    await refused(content(513), "content", 512);
  });
});

describe("large requests are read off the HTTP thread, with the same answers", () => {
  // Past the threshold: padding whitespace is still JSON.
  const pad = " ".repeat(OFFLOAD_MIN_BYTES);
  let before = 0;
  beforeAll(() => {
    before = s.deps.intake.offloaded;
  });

  test("an envelope with array content: 201, stored as its JSON text, hashed", async () => {
    const items = Array.from({ length: 150_000 }, (_, i) => ({ i }));
    const body = JSON.stringify({ content: items, filename: "big.json", metadata: { source: "ci" } });
    expect(body.length).toBeGreaterThan(OFFLOAD_MIN_BYTES);
    const r = await call(s, "POST", path, { token, raw: body, headers: JSON_CT });
    expect(r.status).toBe(201);
    const expected = Buffer.from(JSON.stringify(items));
    expect(r.json.submission).toEqual(
      expect.objectContaining({
        filename: "big.json",
        content_type: "application/json",
        file_type: "JSON",
        size: expected.byteLength,
        sha256: new Bun.CryptoHasher("sha256").update(expected).digest("hex"),
        metadata: { source: "ci" },
      }),
    );
    const c = await fetch(`${s.url}/api/v1/orgs/acme/runs/${r.json.id}/content/`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(Buffer.from(await c.arrayBuffer()).equals(expected)).toBe(true);
  });

  test("a deep metadata in a large envelope: the same 400", async () => {
    await refused(
      `{"content":"x","content_type":"text/plain","metadata":{"m":${deepArray(100_000)}}}${pad}`,
      "metadata",
      256,
    );
  });

  test("a large raw body that is not valid UTF-8: the same 400 naming charset", async () => {
    const bytes = new Uint8Array(OFFLOAD_MIN_BYTES + 10).fill(0x61);
    bytes[bytes.length - 1] = 0xff;
    const r = await call(s, "POST", path, {
      token,
      raw: bytes,
      headers: { "content-type": "text/csv" },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The run request is invalid.", [
        { field: "charset", code: "invalid_encoding", message: "The content is not valid utf-8." },
      ]),
    );
  });

  test("a large text/plain body holding JSON is classified JSON, like a small one", async () => {
    const text = `[${Array.from({ length: 200_000 }, (_, i) => i).join(",")}]`;
    const r = await call(s, "POST", path, { token, raw: text, headers: { "content-type": "text/plain" } });
    expect(r.status).toBe(201);
    expect(r.json.submission.file_type).toBe("JSON");
    expect(r.json.submission.size).toBe(text.length);
  });

  test("a large multipart upload and a large unsupported type: 201 and 415 as usual", async () => {
    const f = new FormData();
    f.append(
      "file",
      new Blob([`<a>${"x".repeat(OFFLOAD_MIN_BYTES)}</a>`], { type: "application/xml" }),
      "a.xml",
    );
    f.append("metadata", '{"k":1}');
    const ok = await call(s, "POST", path, { token, raw: f });
    expect(ok.status).toBe(201);
    expect(ok.json.submission).toEqual(
      expect.objectContaining({ filename: "a.xml", file_type: "XML", metadata: { k: 1 } }),
    );
    const r = await call(s, "POST", path, {
      token,
      raw: "x".repeat(OFFLOAD_MIN_BYTES),
      headers: { "content-type": "image/png" },
    });
    expect(r.status).toBe(415);
    expect(r.json.code).toBe("unsupported_media_type");
  });

  test("each of the six requests above was read on the intake thread", () => {
    expect(s.deps.intake.offloaded - before).toBe(6);
  });
});
