// HEAD of a run's content gives GET's headers without a body (RFC 9110 §9.3.2), for content over
// 1 MiB too (stored in slices, sent as a stream), and reads none of the bytes. Until 2026-11-29
// GET of such content went out chunked without Content-Length while HEAD said a Content-Length,
// and HEAD read every slice from the database to count them (the framework runs GET for a HEAD).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SLICED_ABOVE_BYTES } from "../src/runs/content-store.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody } from "./helpers/server.ts";
import { startTestServer } from "./helpers/server.ts";
import { fresh, via } from "./helpers/threads.ts";

let s: TestServer;
const BIG = 2 * SLICED_ABOVE_BYTES + 17;

beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "t",
    allowed_file_types: ["TEXT"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s?.close());

/** A run of `size` bytes of text; the path of its content. */
async function contentOf(size: number): Promise<{ path: string; bytes: Uint8Array<ArrayBuffer> }> {
  const bytes = new Uint8Array(size).map((_, i) => 97 + (i % 26));
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/t/runs/", {
    token: s.rootToken,
    raw: bytes,
    headers: { "content-type": "text/plain" },
  });
  expect(r.status).toBe(201);
  return { path: `${new URL(r.json.url).pathname}content/`, bytes };
}

const fetchAs = (method: string, path: string) =>
  fetch(s.url + path, { method, headers: { authorization: `Bearer ${s.rootToken}` } });
const headersOf = (r: { headers: Headers }) =>
  Object.fromEntries([...r.headers].filter(([k]) => k !== "date" && k !== "x-request-id"));

describe("HEAD of a run's content", () => {
  for (const size of [100, BIG])
    test(`${size} bytes: GET's status and headers (its framing too), no body`, async () => {
      const { path, bytes } = await contentOf(size);
      const get = await fetchAs("GET", path);
      const body = new Uint8Array(await get.arrayBuffer());
      const head = await fetchAs("HEAD", path);
      expect(await head.arrayBuffer()).toEqual(new ArrayBuffer(0));
      expect([head.status, headersOf(head)]).toEqual([get.status, headersOf(get)]);
      // Over 1 MiB GET streams the slices, which Bun sends chunked without Content-Length
      // (oven-sh/bun#10507): HEAD says the same; the size is the run's submission.size.
      const framing = [get.headers.get("content-length"), get.headers.get("transfer-encoding")];
      expect(framing).toEqual(size > SLICED_ABOVE_BYTES ? [null, "chunked"] : [String(size), null]);
      expect(body).toEqual(bytes);
    });

  test("reads none of the slices: answered from the submission's row alone", async () => {
    const { path } = await contentOf(BIG);
    const before = await fetchAs("HEAD", path);
    // The slices gone behind the row's back (no purge does this: the row would say so): a HEAD
    // that read them would now fail, as GET's stream does.
    await s.sql("DELETE FROM content_chunks WHERE run_id = ?", path.split("/")[6]!);
    const head = await fetchAs("HEAD", path);
    expect([head.status, headersOf(head)]).toEqual([200, headersOf(before)]);
  });

  test("a missing run and purged content: GET's error status and headers", async () => {
    const { path } = await contentOf(BIG);
    const runId = path.split("/")[6]!;
    const sub = await s.row<{ id: number }>("SELECT submission_id AS id FROM runs WHERE id = ?", runId);
    await s.sql("DELETE FROM content_chunks WHERE run_id = ?", runId);
    await s.sql(
      "UPDATE submissions SET content = NULL, content_chunks = 0, purged_at = ? WHERE id = ?",
      new Date().toISOString(),
      sub!.id,
    );
    const missing = path.replace(runId, "01a20000-0000-7000-8000-000000000000");
    for (const [p, status, code] of [
      [path, 410, "gone"],
      [missing, 404, "not_found"],
    ] as const) {
      const get = await fetchAs("GET", p);
      expect(await get.json()).toEqual(errorBody(status, code));
      const head = await fetchAs("HEAD", p);
      expect(await head.arrayBuffer()).toEqual(new ArrayBuffer(0));
      expect([head.status, headersOf(head)]).toEqual([get.status, headersOf(get)]);
    }
  });
});

test("through an HTTP thread (relayed to the main thread): the same headers", async () => {
  const t = await startTestServer({ http_threads: 2 });
  try {
    await createWorkflow(t, t.rootToken, {
      slug: "t",
      allowed_file_types: ["TEXT"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const r = await call(t, "POST", "/api/v1/orgs/acme/workflows/t/runs/", {
      token: t.rootToken,
      raw: "a".repeat(BIG),
      headers: { "content-type": "text/plain" },
    });
    const path = `${new URL(r.json.url).pathname}content/`;
    const send = (method: string) => () => call(t, method, path, fresh({ token: t.rootToken }));
    const get = await via(t, 1, "relay", send("GET"));
    const head = await via(t, 1, "relay", send("HEAD"));
    expect(get.text.length).toBe(BIG);
    expect([head.status, head.text, headersOf(head)]).toEqual([200, "", headersOf(get)]);
  } finally {
    await t.close();
  }
});
