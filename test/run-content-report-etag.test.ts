// A run's content and its reports carry an ETag and judge If-Match / If-None-Match (RFC 9110
// §13.2.2): the content's is its SHA-256 (it never changes), a report's a digest of its bytes (it
// changes while the run executes). 304 on a match (GET and HEAD alike), 412 for a false If-Match,
// after the 401, 403, 404, 410 and 400 the request gets without the headers. Until 2026-11-29
// both ignored the headers and sent no ETag.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SLICED_ABOVE_BYTES } from "../src/runs/content-store.ts";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "./helpers/gates.ts";
import { malformed } from "./helpers/preconditions.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const A = "/api/v1/orgs/acme";

beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "t",
    allowed_file_types: ["TEXT", "JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
});
afterAll(() => s?.close());

const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const tagOf = (b: Uint8Array) =>
  `"${new Bun.CryptoHasher("sha256").update(b).digest("base64url").slice(0, 22)}"`;
const fetchAs = (method: string, path: string, headers: Record<string, string> = {}, token = s.rootToken) =>
  fetch(s.url + path, { method, headers: { authorization: `Bearer ${token}`, ...headers } });
const headersOf = (r: Response) =>
  Object.fromEntries([...r.headers].filter(([k]) => !["date", "x-request-id", "ratelimit"].includes(k)));

async function runOf(
  size: number,
): Promise<{ run: { id: string; submission: { sha256: string } }; bytes: Uint8Array<ArrayBuffer> }> {
  const bytes = new Uint8Array(size).map((_, i) => 97 + (i % 26));
  const r = await call(s, "POST", `${A}/workflows/t/runs/`, {
    token: s.rootToken,
    raw: bytes,
    headers: { "content-type": "text/plain" },
  });
  expect(r.status).toBe(201);
  return { run: r.json, bytes };
}

/** A 304: no body, no Content-Type or Content-Length, and otherwise the 200's headers. */
async function expectNotModified(r: Response, ok: Response) {
  expect([r.status, await r.text()]).toEqual([304, ""]);
  const { "content-type": _, "content-length": __, "transfer-encoding": ___, ...rest } = headersOf(ok);
  expect(headersOf(r)).toEqual(rest);
}

describe("a run's content", () => {
  for (const size of [100, 2 * SLICED_ABOVE_BYTES + 3])
    test(`${size} bytes: ETag is its SHA-256; 304 on a match, 412 on a false If-Match, GET and HEAD alike`, async () => {
      const { run, bytes } = await runOf(size);
      const path = `${A}/runs/${run.id}/content/`;
      const get = await fetchAs("GET", path);
      expect(new Uint8Array(await get.arrayBuffer())).toEqual(bytes);
      const etag = `"${sha256(bytes)}"`;
      expect([get.status, get.headers.get("etag"), run.submission.sha256]).toEqual([
        200,
        etag,
        sha256(bytes),
      ]);
      const head = await fetchAs("HEAD", path);
      expect([head.status, headersOf(head)]).toEqual([200, headersOf(get)]);
      for (const method of ["GET", "HEAD"]) {
        for (const inm of [etag, `W/${etag}`, `"x", ${etag}`, "*"])
          await expectNotModified(await fetchAs(method, path, { "if-none-match": inm }), get);
        for (const headers of <Record<string, string>[]>[
          { "if-none-match": '"x"' },
          { "if-match": etag },
          { "if-match": `"x", ${etag}` },
          { "if-match": "*" },
        ]) {
          const r = await fetchAs(method, path, headers);
          expect([method, headers, r.status, headersOf(r)]).toEqual([method, headers, 200, headersOf(get)]);
        }
        // If-Match is judged first, and strongly: a weak tag never matches (§13.1.1).
        for (const headers of <Record<string, string>[]>[
          { "if-match": '"x"' },
          { "if-match": `W/${etag}` },
          { "if-match": '"x"', "if-none-match": etag },
        ]) {
          const r = await fetchAs(method, path, headers);
          expect([method, headers, r.status]).toEqual([method, headers, 412]);
          if (method === "GET")
            expect(await r.json()).toEqual(
              errorBody(
                412,
                "precondition_failed",
                `If-Match names another entity tag than the run's content (ETag ${etag}, its SHA-256), which never changes.`,
              ),
            );
        }
      }
      for (const [name, value] of [
        ["If-Match", "x"],
        ["If-None-Match", "W/x"],
      ] as const) {
        const r = await call(s, "GET", path, { token: s.rootToken, headers: { [name]: value } });
        expect([r.status, r.json]).toEqual([400, malformed(name)]);
      }
    });

  test("a 304 reads none of the content: answered from the submission's row", async () => {
    const { run, bytes } = await runOf(2 * SLICED_ABOVE_BYTES + 3);
    await s.sql("DELETE FROM content_chunks WHERE run_id = ?", run.id);
    const r = await fetchAs("GET", `${A}/runs/${run.id}/content/`, { "if-none-match": `"${sha256(bytes)}"` });
    expect(r.status).toBe(304);
  });

  test("the answer without the headers first: 404, 403, 401, and 410 once purged", async () => {
    const { run, bytes } = await runOf(100);
    const etag = `"${sha256(bytes)}"`;
    const path = `${A}/runs/${run.id}/content/`;
    const outsider = (await s.user("olga", "other", "admin")).token;
    for (const headers of <Record<string, string>[]>[{ "if-none-match": etag }, { "if-match": '"x"' }]) {
      // Another org's member: 403 for acme; under their own org the run does not exist.
      const denied = await call(s, "GET", path, { token: outsider, headers });
      expect([denied.status, denied.json]).toEqual([
        403,
        errorBody(403, "permission_denied", "You are not a member of this organization."),
      ]);
      const other = await call(s, "GET", `/api/v1/orgs/other/runs/${run.id}/content/`, {
        token: outsider,
        headers,
      });
      expect([other.status, other.json]).toEqual([404, errorBody(404, "not_found", "Run not found.")]);
      const anon = await call(s, "GET", path, { headers });
      expect([anon.status, anon.json]).toEqual([
        401,
        errorBody(
          401,
          "authentication_required",
          "Authentication credentials were not provided or are invalid.",
        ),
      ]);
    }
    const sub = await s.row<{ id: number }>("SELECT submission_id AS id FROM runs WHERE id = ?", run.id);
    await s.sql(
      "UPDATE submissions SET content = NULL, content_chunks = 0, purged_at = ? WHERE id = ?",
      new Date().toISOString(),
      sub!.id,
    );
    for (const headers of <Record<string, string>[]>[{ "if-none-match": etag }, { "if-match": '"x"' }]) {
      const r = await call(s, "GET", path, { token: s.rootToken, headers });
      expect([r.status, r.json]).toEqual([
        410,
        errorBody(
          410,
          "gone",
          "The submission content was purged by the retention policy; the run and its findings remain.",
        ),
      ]);
    }
  });
});

describe("a run's report", () => {
  test("every format: ETag of its bytes; 304 on a match, 412 on a false If-Match, GET and HEAD alike", async () => {
    const { run } = await runOf(50);
    for (const format of ["json", "junit", "sarif", "html"]) {
      const path = `${A}/runs/${run.id}/report/?format=${format}`;
      const get = await fetchAs("GET", path);
      const body = new Uint8Array(await get.arrayBuffer());
      const etag = tagOf(body);
      expect([format, get.status, get.headers.get("etag")]).toEqual([format, 200, etag]);
      const head = await fetchAs("HEAD", path);
      expect([format, head.status, headersOf(head)]).toEqual([format, 200, headersOf(get)]);
      for (const method of ["GET", "HEAD"]) {
        for (const inm of [etag, `W/${etag}`, "*"])
          await expectNotModified(await fetchAs(method, path, { "if-none-match": inm }), get);
        const ok = await fetchAs(method, path, { "if-match": etag, "if-none-match": '"x"' });
        expect([format, method, ok.status, headersOf(ok)]).toEqual([format, method, 200, headersOf(get)]);
        const r = await fetchAs(method, path, { "if-match": '"x"', "if-none-match": etag });
        expect([format, method, r.status]).toEqual([format, method, 412]);
        if (method === "GET")
          expect(await r.json()).toEqual(
            errorBody(
              412,
              "precondition_failed",
              `If-Match names another entity tag than the report's current one (ETag ${etag}): read it again.`,
            ),
          );
      }
    }
    // An unknown format is the 400 it is without the headers.
    const bad = await call(s, "GET", `${A}/runs/${run.id}/report/?format=pdf`, {
      token: s.rootToken,
      headers: { "if-none-match": "*" },
    });
    expect([bad.status, bad.json]).toEqual([
      400,
      errorBody(400, "invalid_request", "Invalid value for format.", [
        { field: "format", code: "invalid", message: "format is one of json, junit, sarif, html." },
      ]),
    ]);
  });

  test("the tag changes with the run: a copy taken while it ran is no longer current once it ends", async () => {
    const gate = s.gates.gate();
    const r = await call(s, "POST", `${A}/workflows/hold/runs/`, {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    await gate.held();
    const path = `${A}/runs/${r.json.id}/report/`;
    const running = await fetchAs("GET", path);
    const tag = running.headers.get("etag")!;
    expect([running.status, running.headers.get("retry-after")]).toEqual([200, "1"]);
    // While it runs, the 304 carries Retry-After as the 200 does.
    const held = await fetchAs("GET", path, { "if-none-match": tag });
    expect([held.status, held.headers.get("retry-after"), held.headers.get("etag")]).toEqual([304, "1", tag]);
    gate.open();
    await waitForRun(s, s.rootToken, r.json.url);
    const ended = await fetchAs("GET", path, { "if-none-match": tag });
    expect(ended.status).toBe(200);
    expect(ended.headers.get("etag")).not.toBe(tag);
    expect(JSON.parse(await ended.text()).status).toBe("succeeded");
    const stale = await call(s, "GET", path, { token: s.rootToken, headers: { "if-match": tag } });
    expect([stale.status, stale.json]).toEqual([
      412,
      errorBody(
        412,
        "precondition_failed",
        `If-Match names another entity tag than the report's current one (ETag ${ended.headers.get("etag")}): read it again.`,
      ),
    ]);
  });

  test("another org's run: the 403 or 404 it is without the headers", async () => {
    const { run } = await runOf(10);
    const tag = (await fetchAs("GET", `${A}/runs/${run.id}/report/`)).headers.get("etag")!;
    const outsider = (await s.user("oskar", "other2", "admin")).token;
    for (const headers of <Record<string, string>[]>[{ "if-none-match": tag }, { "if-match": '"x"' }]) {
      const denied = await call(s, "GET", `${A}/runs/${run.id}/report/`, { token: outsider, headers });
      expect([denied.status, denied.json]).toEqual([
        403,
        errorBody(403, "permission_denied", "You are not a member of this organization."),
      ]);
      const other = await call(s, "GET", `/api/v1/orgs/other2/runs/${run.id}/report/`, {
        token: outsider,
        headers,
      });
      expect([other.status, other.json]).toEqual([404, errorBody(404, "not_found", "Run not found.")]);
    }
  });
});
