// What a user writes in a config's `resources` or `documents` (the keys migration 21 splits into
// pinned_documents, src/workflows/pinned-documents.ts) reads back from a version exactly as the
// live step holds it: `__proto__` keys, 1.0, escaped and astral characters, a string that is the
// digest of another stored document, the same body under two URIs, an empty schema, a CSV
// step's `resources` array. Read from the database (after a restart, no cache), on both backends.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sha256 } from "../src/audit/chain.ts";
import { type TestServer, call, restartTestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const WF = "/api/v1/orgs/acme/workflows/";
const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';
const A = "https://schemas.example.com/a.json";
const B = "https://schemas.example.com/b.json";
const E = "https://schemas.example.com/empty.json";
const TYPES = `<xs:schema ${XS} targetNamespace="urn:example:types"><xs:simpleType name="Code"><xs:restriction base="xs:string"><xs:maxLength value="3"/></xs:restriction></xs:simpleType></xs:schema>`;
const MAIN = `<xs:schema ${XS} xmlns:t="urn:example:types" targetNamespace="urn:example:order"><xs:import namespace="urn:example:types"/><xs:element name="code" type="t:Code"/></xs:schema>`;
// Written as text: JSON.stringify would not keep `1.0`, `\u00e9` or a `__proto__` key's place.
const ODD = `{"__proto__":{"type":"object"},"type":"object","minimum":1.0,"title":"caf\\u00e9 \\ud83d\\ude00","const_digest":"${sha256(JSON.stringify(TYPES))}","properties":{"n":{"type":"number","maximum":1e2}}}`;
const BODY = `{"slug":"odd","name":"Odd","allowed_file_types":["JSON"],"steps":[
 {"name":"json","validator":"json_schema","config":{"schema":{"allOf":[{"$ref":"${A}"},{"$ref":"${B}"},{"$ref":"${E}"}]},"resources":{"${A}":${ODD},"${B}":${ODD},"${E}":{}}}},
 {"name":"xsd","is_active":false,"validator":"xml_schema","config":{"schema_type":"xsd","schema":${JSON.stringify(MAIN)},"documents":{"urn:example:types":${JSON.stringify(TYPES)}}}},
 {"name":"csv","is_active":false,"validator":"csv_table","config":{"schema":{"fields":[{"name":"id","type":"integer"}],"foreignKeys":[{"fields":"id","reference":{"resource":"ids","fields":"id"}}]},"resources":[{"name":"ids","data":[["id"],[1]]}]}}]}`;

/** Each step's config as text, in the step's order. */
const configs = (body: { steps: { config: unknown }[] }) => body.steps.map((x) => JSON.stringify(x.config));

let live: string[] = [];
let sent: string[] = [];

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  const r = await call(s, "POST", WF, {
    token: s.rootToken,
    raw: BODY,
    headers: { "content-type": "application/json" },
  });
  expect(r.status).toBe(201);
  live = configs(r.json);
  sent = configs(JSON.parse(BODY));
  s = await restartTestServer(s, { workers: 1 });
}, 60_000);
afterAll(() => s.close());

describe("user-written resources and documents read back as written", () => {
  test("the live steps hold what was sent, the resources in the order they are pinned", () => {
    expect(live.slice(1)).toEqual(sent.slice(1));
    expect(JSON.parse(live[0]!)).toEqual(JSON.parse(sent[0]!));
    // JSON.parse keeps `__proto__` as an own key; the split must not have made it a prototype.
    expect(live[0]).toContain('"__proto__":{"type":"object"}');
  });

  test("the version holds the same configs, byte for byte", async () => {
    const v = await call(s, "GET", `${WF}odd/versions/1/`, { token: s.rootToken });
    expect(v.status).toBe(200);
    expect(configs(v.json)).toEqual(live);
    const w = await call(s, "GET", `${WF}odd/`, { token: s.rootToken });
    expect(configs(w.json)).toEqual(live);
  });

  test("each distinct document is stored once, the configs hold digests only", async () => {
    // ODD (twice), {}, TYPES; the CSV array stays in its config.
    expect(await s.count("pinned_documents")).toBe(3);
    const rows = await s.sql<{ config: string }>("SELECT config FROM step_configs");
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      const c = JSON.parse(r.config) as Record<string, unknown>;
      for (const key of ["resources", "documents"] as const)
        if (c[key] && !Array.isArray(c[key]))
          for (const d of Object.values(c[key] as object)) expect(d).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  test("a restore after another save writes a version equal to the first", async () => {
    const p = await call(s, "PATCH", `${WF}odd/`, { token: s.rootToken, body: { name: "Odd 2" } });
    expect(p.status).toBe(200);
    const r = await call(s, "POST", `${WF}odd/versions/1/restore/`, { token: s.rootToken });
    expect(r.status).toBe(201);
    s = await restartTestServer(s, { workers: 1 });
    for (const v of [2, 3]) {
      const got = await call(s, "GET", `${WF}odd/versions/${v}/`, { token: s.rootToken });
      expect(got.status).toBe(200);
      expect(configs(got.json)).toEqual(live);
    }
    expect(await s.count("pinned_documents")).toBe(3);
  });
});
