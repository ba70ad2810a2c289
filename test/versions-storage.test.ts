// A version's snapshot names its steps' configs by digest, and each config is stored once
// (migration 19, src/workflows/config-store.ts): a workflow whose three steps import one large
// stored XSD, saved five times, stores that XSD once — not fifteen times — and every version
// still reads, diffs, restores and runs with its configs whole, after a restart too (read from
// the database, not the cache). Run on both backends.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, restartTestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';
const WF = "/api/v1/orgs/acme/workflows/big/";
// ~300 KB of annotation around a 3-character code type.
const NOTE = "A code of at most three characters. ".repeat(8_500);
const TYPES = `<xs:schema ${XS} targetNamespace="urn:example:types"><xs:annotation><xs:documentation>${NOTE}</xs:documentation></xs:annotation><xs:simpleType name="Code"><xs:restriction base="xs:string"><xs:maxLength value="3"/></xs:restriction></xs:simpleType></xs:schema>`;
const MAIN = `<xs:schema ${XS} xmlns:t="urn:example:types" targetNamespace="urn:example:order" elementFormDefault="qualified"><xs:import namespace="urn:example:types"/><xs:element name="order"><xs:complexType><xs:sequence><xs:element name="code" type="t:Code"/></xs:sequence></xs:complexType></xs:element></xs:schema>`;
const ORDER = (code: string) => `<order xmlns="urn:example:order"><code>${code}</code></order>`;
const XML = { "content-type": "application/xml" };
const step = (name: string) => ({
  name,
  validator: "xml_schema",
  config: { schema_type: "xsd", schema: MAIN },
});

let workflowId = 0;
let saved: unknown[] = [];

beforeAll(async () => {
  s = await startTestServer({ workers: 1, sync_wait_ms: 30_000 });
  const stored = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
    token: s.rootToken,
    body: { uri: "https://schemas.example.com/types.xsd", kind: "xsd", schema: TYPES },
  });
  expect(stored.status).toBe(201);
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: { slug: "big", name: "Big", allowed_file_types: ["XML"], steps: [step("a"), step("b"), step("c")] },
  });
  expect(r.status).toBe(201);
  workflowId = r.json.id;
  saved = r.json.steps;
  for (let i = 2; i <= 5; i++) {
    const p = await call(s, "PATCH", WF, { token: s.rootToken, body: { name: `Big ${i}` } });
    expect(p.json.version).toBe(i);
  }
});
afterAll(() => s.close());

describe("each step config is stored once", () => {
  test("five versions of three steps hold the pinned XSD once", async () => {
    // The configs carry the stored XSD pinned in.
    expect(JSON.stringify(saved)).toContain("A code of at most three characters.");
    const versions = await s.row<{ n: number | string; bytes: number | string }>(
      "SELECT count(*) AS n, sum(length(definition)) AS bytes FROM workflow_versions WHERE workflow_id = ?",
      workflowId,
    );
    expect(Number(versions?.n)).toBe(5);
    // Inline, the five snapshots held 15 copies of the ~300 KB schema (~4.5 MB).
    expect(Number(versions?.bytes)).toBeLessThan(10_000);
    // One config for the three steps; the XSD it pins stored once beside it (migration 21).
    expect(await s.count("step_configs")).toBe(1);
    const documents = await s.sql<{ bytes: number | string }>(
      "SELECT length(body) AS bytes FROM pinned_documents WHERE body LIKE '%A code of at most three characters.%'",
    );
    expect(documents).toHaveLength(1);
    expect(Number(documents[0]!.bytes)).toBeGreaterThan(TYPES.length);
  });

  test("after a restart, every version reads whole, runs and restores", async () => {
    s = await restartTestServer(s, { workers: 1, sync_wait_ms: 30_000 });
    for (let v = 1; v <= 5; v++) {
      const got = await call(s, "GET", `${WF}versions/${v}/`, { token: s.rootToken });
      expect(got.status).toBe(200);
      expect(got.json.name).toBe(v === 1 ? "Big" : `Big ${v}`);
      expect(got.json.steps).toEqual(saved);
    }
    const ok = await call(s, "POST", `${WF}runs/?version=1`, {
      token: s.rootToken,
      raw: ORDER("abc"),
      headers: XML,
    });
    expect(ok.json.status).toBe("succeeded");
    const bad = await call(s, "POST", `${WF}runs/?version=1`, {
      token: s.rootToken,
      raw: ORDER("abcd"),
      headers: XML,
    });
    expect(bad.json.status).toBe("failed");
    expect(bad.json.steps[0].findings[0].rule).toBe("cvc-maxLength-valid");
    const restored = await call(s, "POST", `${WF}versions/1/restore/`, { token: s.rootToken });
    expect(restored.status).toBe(201);
    expect(restored.json.name).toBe("Big");
    expect(restored.json.steps.map((x: { config: unknown }) => x.config)).toEqual(
      (saved as { config: unknown }[]).map((x) => x.config),
    );
    // The restore's snapshot names the same stored config: still one copy.
    expect(await s.count("step_configs")).toBe(1);
    const documents = await s.sql(
      "SELECT sha256 FROM pinned_documents WHERE body LIKE '%A code of at most three characters.%'",
    );
    expect(documents).toHaveLength(1);
  });
});
