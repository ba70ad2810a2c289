// Idempotency keys recorded by a build before 2026-11-28. Those builds hashed a multipart request
// with its boundary (in Content-Type and in the body); today's hash leaves the boundary out. A key
// such a build recorded for a multipart run — just before an upgrade, or by an old node during a
// rolling upgrade — must still replay when the very same bytes are sent again: it was a 422
// idempotency_key_reused after the upgrade. The old row is built with SQL: the request's hash
// as those builds computed it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let exec: string;
let userId: number;
let workflowId: number;
const path = "/api/v1/orgs/acme/workflows/orders/runs/";
const CONTENT_TYPE = "multipart/form-data; boundary=XyZb";
const form = (id: number) =>
  `--XyZb\r\nContent-Disposition: form-data; name="file"; filename="a.json"\r\nContent-Type: application/json\r\n\r\n{"id":${id}}\r\n--XyZb--\r\n`;

/** The request hash of the builds before 2026-11-28 (src/runs/service.ts then). */
function oldHash(orgId: number, body: string, pinned: number | null = null): string {
  const h = createHash("sha256");
  const headers: Record<string, string> = { "content-type": CONTENT_TYPE };
  for (const name of ["content-type", "content-encoding", "x-filename", "x-submission-mode"])
    h.update(`${name}:${headers[name] ?? ""}\n`);
  return h
    .update(`${orgId}:${workflowId}${pinned === null ? "" : `@${pinned}`}\n`)
    .update(body)
    .digest("hex");
}

beforeAll(async () => {
  s = await startTestServer();
  ({ token: exec, id: userId } = await s.user("ci", "acme", "executor"));
  const wf = await createWorkflow(s, s.rootToken, {
    slug: "orders",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax" }],
  });
  workflowId = wf.id;
});
afterAll(() => s?.close());

/** Sends form(id) under key, then rewrites its row as an older build would have recorded it. */
async function recordedByOldBuild(key: string, id: number, query = "", pinned: number | null = null) {
  const a = await call(s, "POST", path + query, {
    token: exec,
    raw: form(id),
    headers: { "content-type": CONTENT_TYPE, "idempotency-key": key },
  });
  expect(a.status).toBe(201);
  const orgId = (await s.row<{ id: number }>("SELECT id FROM orgs WHERE slug = ?", "acme"))!.id;
  await s.sql(
    "UPDATE idempotency_keys SET request_hash = ? WHERE user_id = ? AND key = ?",
    oldHash(orgId, form(id), pinned),
    userId,
    key,
  );
  return a;
}

describe("idempotency keys written before 2026-11-28", () => {
  test("the same multipart bytes replay the old answer, not a 422", async () => {
    const a = await recordedByOldBuild("old-mp-1", 1);
    const before = await s.count("runs");
    const b = await call(s, "POST", path, {
      token: exec,
      raw: form(1),
      headers: { "content-type": CONTENT_TYPE, "idempotency-key": "old-mp-1" },
    });
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.json).toEqual(a.json);
    expect(await s.count("runs")).toBe(before);
  });

  test("a pinned version's request too", async () => {
    const a = await recordedByOldBuild("old-mp-pinned", 2, "?version=1", 1);
    const b = await call(s, "POST", `${path}?version=1`, {
      token: exec,
      raw: form(2),
      headers: { "content-type": CONTENT_TYPE, "idempotency-key": "old-mp-pinned" },
    });
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.json).toEqual(a.json);
  });

  test("another file under the old key is still another request", async () => {
    await recordedByOldBuild("old-mp-2", 3);
    const b = await call(s, "POST", path, {
      token: exec,
      raw: form(4),
      headers: { "content-type": CONTENT_TYPE, "idempotency-key": "old-mp-2" },
    });
    expect(b.json).toEqual(
      errorBody(422, "idempotency_key_reused", "This Idempotency-Key was used with a different request."),
    );
  });
});
