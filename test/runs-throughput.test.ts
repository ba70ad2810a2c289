// The throughput work on runs (docs/benchmarks.md) keeps the contract: grouped commits still
// answer only after the run is stored, the queue count stays exact under bursts, runs launched
// from memory run what was submitted, and the envelope shortcut changes no classification.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { otherConnection } from "./helpers/backend.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let token: string;
const runs = (slug: string) => `/api/v1/orgs/acme/workflows/${slug}/runs/`;
const JSON_CT = { "content-type": "application/json" };

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  token = (await s.user("exec", "acme", "executor")).token;
  await createWorkflow(s, s.rootToken, {
    slug: "schema",
    allowed_file_types: ["JSON"],
    steps: [
      {
        name: "schema",
        validator: "json_schema",
        config: { schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } } },
      },
    ],
  });
  await createWorkflow(s, s.rootToken, {
    slug: "any",
    allowed_file_types: ["JSON", "TEXT"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

/** Reads the database through its own connection, as another process would. */
async function committed(id: string): Promise<{ status: string } | null> {
  const other = await otherConnection(s);
  try {
    return (await other.sql<{ status: string }>("SELECT status FROM runs WHERE id = ?", id))[0] ?? null;
  } finally {
    await other.close();
  }
}

describe("grouped commits", () => {
  test("every 202 of a concurrent burst names a run another connection can already read", async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(s, "POST", runs("schema"), {
          token,
          raw: JSON.stringify({ n: i }),
          headers: { ...JSON_CT, prefer: "respond-async" },
        }),
      ),
    );
    for (const a of answers) {
      expect(a.status).toBe(202);
      expect(await committed(a.json.id)).not.toBeNull();
    }
    for (const a of answers) expect((await waitForRun(s, token, a.json.url)).status).toBe("succeeded");
  });

  test("concurrent sync runs each get their own result", async () => {
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        call(s, "POST", runs("schema"), {
          token,
          raw: i % 2 ? JSON.stringify({ n: i }) : JSON.stringify({ n: `x${i}` }),
          headers: JSON_CT,
        }),
      ),
    );
    for (const [i, a] of answers.entries()) {
      expect(a.status).toBe(201);
      expect(a.json.status).toBe(i % 2 ? "succeeded" : "failed");
      expect((await committed(a.json.id))?.status).toBe(a.json.status);
    }
  });

  test("the in-memory queue count matches the database after a burst", async () => {
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(s, "POST", runs("schema"), {
          token,
          raw: JSON.stringify({ n: i }),
          headers: { ...JSON_CT, prefer: "respond-async" },
        }),
      ),
    );
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await s.deps.runs.queuedCount()) > 0) await Bun.sleep(10);
    expect(await s.deps.runs.queuedCount()).toBe(0);
    const other = await otherConnection(s);
    try {
      const [row] = await other.sql<{ n: number }>("SELECT count(*) AS n FROM runs WHERE status = 'queued'");
      expect(Number(row!.n)).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe("JSON bodies and envelopes", () => {
  test("a raw JSON array is validated as sent, not taken for an envelope", async () => {
    const raw = '[{"content": 1}]';
    const r = await call(s, "POST", runs("any"), { token, raw, headers: JSON_CT });
    expect(r.status).toBe(201);
    expect(r.json.submission).toEqual(
      expect.objectContaining({ file_type: "JSON", content_type: "application/json", size: raw.length }),
    );
  });

  test("an envelope whose content key is spelled with \\u escapes is still an envelope", async () => {
    const raw = '{"\\u0063ontent": "hello", "content_type": "text/plain"}';
    const r = await call(s, "POST", runs("any"), { token, raw, headers: JSON_CT });
    expect(r.status).toBe(201);
    expect(r.json.submission).toEqual(
      expect.objectContaining({ file_type: "TEXT", content_type: "text/plain", size: 5 }),
    );
  });
});
