// POST …/runs/: an envelope's string content or its metadata holding an unpaired surrogate (the
// escape "\ud800" without its pair) is refused, as names and filenames are (docs/limits.md). No
// encoding stores one: string content was encoded to UTF-8 with U+FFFD in its place, so the
// stored submission (and its sha256) was not what the client sent, without a word; metadata kept
// the escape and every answer, webhook and export repeated it, which strict JSON parsers refuse.
// An object `content` is stored as the JSON text it was sent as, escape included, and checked.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const RUNS = "/api/v1/orgs/acme/workflows/all/runs/";
const invalid = (...errors: unknown[]) =>
  errorBody(400, "invalid_request", "The run request is invalid.", errors);
const CONTENT = {
  field: "content",
  code: "invalid_encoding",
  message:
    "content may not contain unpaired surrogates (an escape such as \\ud800 without its pair): no encoding stores one.",
};
const METADATA = {
  field: "metadata",
  code: "invalid",
  message:
    "metadata may not contain unpaired surrogates (an escape such as \\ud800 without its pair), in keys or values.",
};

beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "all",
    allowed_file_types: ["JSON", "TEXT"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

const envelope = (raw: string) =>
  call(s, "POST", RUNS, { token: s.rootToken, raw, headers: { "content-type": "application/json" } });

async function refused(send: () => ReturnType<typeof call>, expected: unknown) {
  const before = [await s.count("runs"), await s.count("submissions")];
  const r = await send();
  expect(r.json).toEqual(expected);
  expect(r.status).toBe(400);
  expect([await s.count("runs"), await s.count("submissions")]).toEqual(before);
}

test("string content with a lone surrogate: 400 (was stored as U+FFFD)", async () => {
  for (const c of ["a\\ud800b", "\\udc00", "x\\ude00\\ud83d"])
    await refused(() => envelope(`{"content": "${c}", "content_type": "text/plain"}`), invalid(CONTENT));
});

test("metadata with a lone surrogate, in a value or a key, nested or not: 400 (was stored and repeated)", async () => {
  for (const m of ['{"k": "\\ud800"}', '{"k\\udfff": 1}', '{"a": [{"b": "x\\ud83d"}]}'])
    await refused(
      () => envelope(`{"content": "{}", "content_type": "application/json", "metadata": ${m}}`),
      invalid(METADATA),
    );
  const form = new FormData();
  form.append("file", new Blob(["{}"], { type: "application/json" }), "a.json");
  form.append("metadata", '{"k": "\\ud800"}');
  await refused(() => call(s, "POST", RUNS, { token: s.rootToken, raw: form }), invalid(METADATA));
});

test("both at once: both items", async () => {
  await refused(
    () => envelope('{"content": "\\ud800", "content_type": "text/plain", "metadata": {"k": "\\ud800"}}'),
    invalid(METADATA, CONTENT),
  );
});

test("pairs, escaped or not, and an escaped backslash before ud800 are text like any other", async () => {
  const r = await envelope(
    '{"content": "\\ud83d\\ude00 😀 \\\\ud800", "content_type": "text/plain", "metadata": {"e": "\\ud83d\\ude00", "t": "\\\\ud800"}}',
  );
  expect(r.status).toBe(201);
  expect(r.json.submission.metadata).toEqual({ e: "😀", t: "\\ud800" });
  const stored = await fetch(`${s.url}/api/v1/orgs/acme/runs/${r.json.id}/content/`, {
    headers: { authorization: `Bearer ${s.rootToken}` },
  });
  expect(await stored.text()).toBe("😀 😀 \\ud800");
});

test("object content keeps its escape as written: the document is checked, not refused", async () => {
  const r = await envelope('{"content": {"k": "\\ud800"}, "content_type": "application/json"}');
  expect(r.status).toBe(201);
  expect(r.json.status).toBe("succeeded");
});
