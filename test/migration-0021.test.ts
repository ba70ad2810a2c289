// Migration 21 on versions stored as the build before stored them: workflows whose steps pin a
// stored JSON Schema (`resources`) and a stored XSD set (`documents`) are saved through the API,
// then their step_configs rows are put back whole (each checked against its key: the digest the
// build before wrote it under) and the migration is taken back. The server migrates them again
// at start: every document is stored once, the configs shrink to their own bytes, and every read
// of the versions answers the same bytes and ETags as before; runs pinned to them end as before.
// On SQLite, or PostgreSQL when the suite runs there.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sha256 } from "../src/audit/chain.ts";
import { joinPinned, pinnedDigests } from "../src/workflows/pinned-documents.ts";
import { type TestServer, call, restartTestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const WF = "/api/v1/orgs/acme/workflows/";
const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';
const NOTE = "Shared by every step. ".repeat(5_000);
const ADDRESS = {
  type: "object",
  description: NOTE,
  required: ["city"],
  properties: { city: { type: "string" } },
};
const TYPES = `<xs:schema ${XS} targetNamespace="urn:example:types"><xs:annotation><xs:documentation>${NOTE}</xs:documentation></xs:annotation><xs:simpleType name="Code"><xs:restriction base="xs:string"><xs:maxLength value="3"/></xs:restriction></xs:simpleType></xs:schema>`;
const MAIN = `<xs:schema ${XS} xmlns:t="urn:example:types" targetNamespace="urn:example:order" elementFormDefault="qualified"><xs:import namespace="urn:example:types"/><xs:element name="order"><xs:complexType><xs:sequence><xs:element name="code" type="t:Code"/></xs:sequence></xs:complexType></xs:element></xs:schema>`;
const jsonStep = (name: string, note: string) => ({
  name,
  validator: "json_schema",
  config: { schema: { $ref: "https://schemas.example.com/address.json", description: note } },
});
const xsdStep = (name: string) => ({
  name,
  validator: "xml_schema",
  config: { schema_type: "xsd", schema: MAIN },
});

/** Every read of the versions, as text with its ETag. */
async function reads(): Promise<Record<string, { status: number; etag: string | null; text: string }>> {
  const out: Record<string, { status: number; etag: string | null; text: string }> = {};
  const paths = [`${WF}json/`, `${WF}xml/`];
  for (const wf of ["json", "xml"]) {
    paths.push(`${WF}${wf}/versions/`);
    for (let v = 1; v <= 3; v++) paths.push(`${WF}${wf}/versions/${v}/`);
    paths.push(`${WF}${wf}/versions/3/diff/?against=1`, `${WF}${wf}/versions/2/diff/?against=1`);
  }
  for (const p of paths) {
    const r = await call(s, "GET", p, { token: s.rootToken });
    // Links name the server they were read from; its port changes with the restart.
    out[p] = { status: r.status, etag: r.headers.get("etag"), text: r.text.replaceAll(s.url, "ORIGIN") };
  }
  return out;
}

/** What the build before stored: each config whole, under the digest of its whole text. */
async function storeAsBefore(): Promise<number> {
  const rows = await s.sql<{ sha256: string; config: string }>("SELECT sha256, config FROM step_configs");
  const docs = new Map(
    (await s.sql<{ sha256: string; body: string }>("SELECT sha256, body FROM pinned_documents")).map((r) => [
      r.sha256,
      JSON.parse(r.body) as unknown,
    ]),
  );
  let joined = 0;
  for (const r of rows) {
    const split = JSON.parse(r.config) as Record<string, unknown>;
    if (!pinnedDigests(split).length) continue;
    const whole = JSON.stringify(joinPinned(split, docs, r.sha256));
    expect(sha256(whole)).toBe(r.sha256);
    await s.sql("UPDATE step_configs SET config = ? WHERE sha256 = ?", whole, r.sha256);
    joined++;
  }
  await s.sql("DROP TABLE pinned_documents");
  await s.sql("DELETE FROM assay_schema_migrations WHERE version = 21");
  if (!s.databaseUrl) await s.sql("PRAGMA user_version = 20");
  return joined;
}

let before: Awaited<ReturnType<typeof reads>>;
let beforeChars = 0;
let joined = 0;
const configChars = async () =>
  Number((await s.row<{ n: number | string }>("SELECT sum(length(config)) AS n FROM step_configs"))?.n ?? 0);

beforeAll(async () => {
  s = await startTestServer({ workers: 1, sync_wait_ms: 30_000 });
  for (const body of [
    { uri: "https://schemas.example.com/address.json", kind: "json_schema", schema: ADDRESS },
    { uri: "https://schemas.example.com/types.xsd", kind: "xsd", schema: TYPES },
  ]) {
    const r = await call(s, "POST", "/api/v1/orgs/acme/schemas/", { token: s.rootToken, body });
    expect(r.status).toBe(201);
  }
  for (const [slug, types, steps] of [
    ["json", ["JSON"], [jsonStep("a", "one"), jsonStep("b", "two")]],
    ["xml", ["XML"], [xsdStep("a"), xsdStep("b")]],
  ] as const) {
    const r = await call(s, "POST", WF, {
      token: s.rootToken,
      body: { slug, name: slug, allowed_file_types: types, steps },
    });
    expect(r.status).toBe(201);
    for (const name of [`${slug} 2`, `${slug} 3`]) {
      const p = await call(s, "PATCH", `${WF}${slug}/`, {
        token: s.rootToken,
        body:
          slug === "json"
            ? { name, steps: [jsonStep("a", name), jsonStep("b", "two")] }
            : { name, steps: [xsdStep("a"), { ...xsdStep("b"), is_active: name.endsWith("2") }] },
      });
      expect(p.status).toBe(200);
    }
  }
  before = await reads();
  joined = await storeAsBefore();
  beforeChars = await configChars();
  s = await restartTestServer(s, { workers: 1, sync_wait_ms: 30_000 });
}, 120_000);
afterAll(() => s.close());

describe("migration 21 on configs stored whole", () => {
  test("is applied, not additive, and stores each pinned document once", async () => {
    // The json steps' four configs (one per description) and the xml steps' one.
    expect(joined).toBe(5);
    expect(await s.sql("SELECT version, additive FROM assay_schema_migrations WHERE version = 21")).toEqual([
      { version: 21, additive: 0 },
    ]);
    expect(await s.count("pinned_documents")).toBe(2);
    // Each of the five held its note in full before.
    expect(beforeChars).toBeGreaterThan(5 * NOTE.length);
    expect(await configChars()).toBeLessThan(5_000);
  });

  test("every read of the versions answers the same bytes and ETags", async () => {
    expect(await reads()).toEqual(before);
  });

  test("runs pinned to the old versions end as before", async () => {
    const json = (body: unknown) =>
      call(s, "POST", `${WF}json/runs/?version=1`, {
        token: s.rootToken,
        raw: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      });
    expect((await json({ city: "Bern" })).json.status).toBe("succeeded");
    expect((await json({ city: 7 })).json.status).toBe("failed");
    const xml = (code: string) =>
      call(s, "POST", `${WF}xml/runs/?version=1`, {
        token: s.rootToken,
        raw: `<order xmlns="urn:example:order"><code>${code}</code></order>`,
        headers: { "content-type": "application/xml" },
      });
    expect((await xml("abc")).json.status).toBe("succeeded");
    const bad = await xml("abcd");
    expect(bad.json.status).toBe("failed");
    expect(bad.json.steps[0].findings[0].rule).toBe("cvc-maxLength-valid");
  });

  test("a new save names the stored documents and writes none again", async () => {
    const p = await call(s, "PATCH", `${WF}json/`, {
      token: s.rootToken,
      body: { steps: [jsonStep("a", "four"), jsonStep("b", "two")] },
    });
    expect(p.status).toBe(200);
    expect(await s.count("pinned_documents")).toBe(2);
    const v = await call(s, "GET", `${WF}json/versions/4/`, { token: s.rootToken });
    expect(v.json.steps[0].config.resources["https://schemas.example.com/address.json"]).toEqual(ADDRESS);
  });
});
