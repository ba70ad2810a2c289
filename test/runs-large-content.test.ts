// Content over 1 MiB is stored in slices of 1 MiB, each written in its own short transaction
// (src/runs/content-store.ts, issue #19): one INSERT of a 24 MB submission held the HTTP thread,
// the only writer. The bytes, their download, their run, a restart's read-back and retention all
// behave as for inline content.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CONTENT_CHUNK_BYTES, SLICED_ABOVE_BYTES } from "../src/runs/content-store.ts";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, restartTestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const path = "/api/v1/orgs/acme/workflows/text/runs/";
// 3.5 MiB of text (15 slices of 256 KiB, the last partial), distinct enough to catch a misplaced slice.
const text = Array.from({ length: Math.ceil((3.5 * SLICED_ABOVE_BYTES) / 12) }, (_, i) =>
  String(i).padStart(11, "0"),
).join("\n");
const bytes = new TextEncoder().encode(text);

beforeAll(async () => {
  s = await startTestServer({ retention_days: 1 });
  await createWorkflow(s, s.rootToken, {
    slug: "text",
    allowed_file_types: ["TEXT"],
    steps: [{ name: "size", validator: "text_rules", config: { max_bytes: 100_000_000 } }],
  });
});
afterAll(() => s.close());

const slices = async (runId: string) =>
  Number((await s.row<{ n: number }>("SELECT count(*) AS n FROM content_chunks WHERE run_id = ?", runId))!.n);
const submit = async () => {
  const r = await call(s, "POST", path, {
    token: s.rootToken,
    raw: bytes,
    headers: { "content-type": "text/plain", prefer: "wait=30" },
  });
  expect(r.status).toBe(201);
  return r.json;
};

describe("content over 1 MiB", () => {
  test("is stored in slices of 256 KiB, not inline, and the run reads it whole", async () => {
    const run = await submit();
    expect(run.status).toBe("succeeded");
    expect(run.submission.size).toBe(bytes.byteLength);
    expect(run.submission.sha256).toBe(new Bun.CryptoHasher("sha256").update(bytes).digest("hex"));
    const row = await s.row(
      "SELECT CASE WHEN content IS NULL THEN 1 ELSE 0 END AS inline_empty, content_chunks FROM submissions WHERE id = ?",
      run.submission.id,
    );
    const count = Math.ceil(bytes.byteLength / CONTENT_CHUNK_BYTES);
    expect(count).toBe(15); // the last one partial
    expect([Number(row!.inline_empty), Number(row!.content_chunks)]).toEqual([1, count]);
    expect(await slices(run.id)).toBe(count);
    // What a worker gets when the run is read back (after a restart, say): every byte in place.
    const src = await s.deps.runs.source(run.id);
    expect(Buffer.from(src!.content!).equals(Buffer.from(bytes))).toBe(true);
  });

  test("GET …/content/ streams the exact bytes", async () => {
    const run = await submit();
    const c = await fetch(`${s.url}/api/v1/orgs/acme/runs/${run.id}/content/`, {
      headers: { authorization: `Bearer ${s.rootToken}` },
    });
    expect(c.status).toBe(200);
    expect(c.headers.get("content-disposition")).toStartWith("attachment;");
    expect(Buffer.from(await c.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
  });

  test("content of exactly 1 MiB stays inline, with its run", async () => {
    const one = bytes.slice(0, SLICED_ABOVE_BYTES);
    const r = await call(s, "POST", path, {
      token: s.rootToken,
      raw: one,
      headers: { "content-type": "text/plain" },
    });
    expect(r.status).toBe(201);
    expect(await slices(r.json.id)).toBe(0);
    const row = await s.row(
      "SELECT length(content) AS n FROM submissions WHERE id = ?",
      r.json.submission.id,
    );
    expect(Number(row!.n)).toBe(SLICED_ABOVE_BYTES);
  });

  test("retention purges the slices: 410 gone, no slice left", async () => {
    const run = await submit();
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await s.sql("UPDATE submissions SET created_at = ?", twoDaysAgo);
    expect(await s.retention.sweep()).toBeGreaterThanOrEqual(1);
    const c = await call(s, "GET", `/api/v1/orgs/acme/runs/${run.id}/content/`, { token: s.rootToken });
    expect(c.status).toBe(410);
    expect(c.json).toEqual(errorBody(410, "gone", expect.stringContaining("purged")));
    expect(await slices(run.id)).toBe(0);
    expect(await s.count("content_chunks")).toBe(0);
  });

  test("slices a crash left without a run are deleted at the next start; a queued run keeps its own", async () => {
    const orphan = "0190f0a0-0000-7000-8000-00000000dead";
    await s.sql(
      "INSERT INTO content_chunks (run_id, seq, bytes) VALUES (?, 0, ?)",
      orphan,
      new Uint8Array(8),
    );
    const queued = await call(s, "POST", path, {
      token: s.rootToken,
      raw: bytes,
      headers: { "content-type": "text/plain", prefer: "respond-async" },
    });
    expect(queued.status).toBe(202);
    s = await restartTestServer(s, { retention_days: 1 });
    // Swept once the server listens (src/runs/orphan-sweep.ts): the sweep its start began.
    await s.deps.executor.orphanSweep();
    expect(await slices(orphan)).toBe(0);
    const done = await waitForRun(s, s.rootToken, queued.json.url);
    expect(done.status).toBe("succeeded");
    const c = await fetch(`${s.url}/api/v1/orgs/acme/runs/${queued.json.id}/content/`, {
      headers: { authorization: `Bearer ${s.rootToken}` },
    });
    expect(Buffer.from(await c.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
  });
});
