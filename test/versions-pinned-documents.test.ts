// A step config's pinned stored-schema documents are stored once by their own digest (migration
// 21, src/workflows/pinned-documents.ts): ten steps `$ref`-ing one ~900 KB stored JSON Schema,
// saved ten times with one step's `description` changed each time, add a few KB — not the 9 MB
// they added when a changed config was stored again with every document it pins. Every version
// still reads whole (after a restart, from the database), diffs by the description alone, and
// runs. Run on both backends.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, restartTestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const WF = "/api/v1/orgs/acme/workflows/pinned/";
const URI = "https://schemas.example.com/order.json";
const NOTE = "An order as the partner sends it. ".repeat(27_000); // ~900 KB
const STORED = {
  type: "object",
  description: NOTE,
  required: ["id"],
  properties: { id: { type: "integer" } },
};
const STEPS = 10;
const config = (i: number, save: number) => ({
  schema: { $ref: URI, description: `step ${i}, save ${save}` },
});
const JSON_TYPE = { "content-type": "application/json" };

/** What the versions hold: snapshots, configs and pinned documents, in characters. */
const storedChars = async () => {
  let n = 0;
  for (const [table, column] of [
    ["workflow_versions", "definition"],
    ["step_configs", "config"],
    ["pinned_documents", "body"],
  ] as const)
    n += Number(
      (await s.row<{ n: number | string | null }>(`SELECT sum(length(${column})) AS n FROM ${table}`))?.n ??
        0,
    );
  return n;
};

let stepIds: number[] = [];
let first: unknown[] = [];
let afterFirst = 0;
let afterSaves = 0;

beforeAll(async () => {
  s = await startTestServer({ workers: 1, sync_wait_ms: 30_000 });
  const stored = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
    token: s.rootToken,
    body: { uri: URI, kind: "json_schema", schema: STORED },
  });
  expect(stored.status).toBe(201);
  const created = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug: "pinned",
      name: "Pinned",
      allowed_file_types: ["JSON"],
      steps: Array.from({ length: STEPS }, (_, i) => ({
        name: `s${i}`,
        validator: "json_schema",
        config: config(i, 1),
      })),
    },
  });
  expect(created.status).toBe(201);
  first = created.json.steps;
  stepIds = created.json.steps.map((x: { id: number }) => x.id);
  afterFirst = await storedChars();
  for (let save = 2; save <= STEPS + 1; save++) {
    const i = save - 2;
    const p = await call(s, "PATCH", `${WF}steps/${stepIds[i]}/`, {
      token: s.rootToken,
      body: { config: config(i, save) },
    });
    expect(p.status).toBe(200);
  }
  afterSaves = await storedChars();
}, 120_000);
afterAll(() => s.close());

describe("pinned documents are stored once", () => {
  test("the first save stores the 900 KB document once for its ten steps", async () => {
    // Each step's config carries the stored schema pinned in.
    for (const step of first as { config: { resources: Record<string, unknown> } }[])
      expect(step.config.resources[URI]).toEqual(STORED);
    const docs = await s.sql<{ n: number | string }>(
      "SELECT length(body) AS n FROM pinned_documents WHERE body LIKE '%An order as the partner sends it.%'",
    );
    expect(docs).toHaveLength(1);
    expect(Number(docs[0]!.n)).toBeGreaterThan(NOTE.length);
    expect(afterFirst).toBeLessThan(NOTE.length + 20_000);
  });

  test("ten description-only saves add kilobytes, not megabytes", async () => {
    const versions = await s.row<{ n: number | string }>("SELECT count(*) AS n FROM workflow_versions");
    expect(Number(versions?.n)).toBe(STEPS + 1);
    // Each save stored a new config; before migration 21 each held the document again (~9 MB).
    expect(await s.count("pinned_documents")).toBe(1);
    expect(afterSaves - afterFirst).toBeLessThan(50_000);
  });

  test("after a restart every version reads whole, diffs by the description alone and runs", async () => {
    s = await restartTestServer(s, { workers: 1, sync_wait_ms: 30_000 });
    const v1 = await call(s, "GET", `${WF}versions/1/`, { token: s.rootToken });
    expect(v1.status).toBe(200);
    expect(v1.json.steps).toEqual(first);
    for (let v = 2; v <= STEPS + 1; v++) {
      const got = await call(s, "GET", `${WF}versions/${v}/`, { token: s.rootToken });
      expect(got.status).toBe(200);
      got.json.steps.forEach((step: { config: Record<string, unknown> }, i: number) => {
        const save = i < v - 1 ? i + 2 : 1;
        expect(step.config).toEqual({ ...config(i, save), resources: { [URI]: STORED } });
      });
    }
    const diff = await call(s, "GET", `${WF}versions/2/diff/?against=1`, { token: s.rootToken });
    expect(diff.status).toBe(200);
    expect(JSON.stringify(diff.json)).toContain("step 0, save 2");
    expect(JSON.stringify(diff.json)).not.toContain("An order as the partner sends it.");
    for (const version of [1, STEPS + 1]) {
      const ok = await call(s, "POST", `${WF}runs/?version=${version}`, {
        token: s.rootToken,
        raw: JSON.stringify({ id: 7 }),
        headers: JSON_TYPE,
      });
      expect(ok.json.status).toBe("succeeded");
      const bad = await call(s, "POST", `${WF}runs/?version=${version}`, {
        token: s.rootToken,
        raw: JSON.stringify({ id: "seven" }),
        headers: JSON_TYPE,
      });
      expect(bad.json.status).toBe("failed");
    }
  });
});
