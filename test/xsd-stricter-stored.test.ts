// A workflow saved before a stricter XSD check (src/validators/xml-schema/facets.ts, 2026-11-29)
// keeps running as it did: the check is a save-time refusal (CONTRACT §2a), not a new run-time
// error for installations whose stored schema libxml2 always accepted. The stored config is
// written in the test's own database (as an older build saved it), since the API refuses it now.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, restartTestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
const workflows = "/api/v1/orgs/acme/workflows/";
const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';
const schema = (ws: string) =>
  `<xs:schema ${XS}><xs:element name="code"><xs:simpleType><xs:restriction base="xs:token"><xs:whiteSpace value="${ws}"/><xs:maxLength value="3"/></xs:restriction></xs:simpleType></xs:element></xs:schema>`;

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  author = (await s.user("fa", "acme", "author")).token;
});
afterAll(() => s.close());

const runXml = (xml: string) =>
  call(s, "POST", `${workflows}old/runs/`, {
    token: author,
    raw: xml,
    headers: { "content-type": "application/xml" },
  });

test("a stored XSD the facet check now refuses still runs; a save of it is refused on its step", async () => {
  const created = await call(s, "POST", workflows, {
    token: author,
    body: {
      slug: "old",
      name: "old",
      allowed_file_types: ["XML"],
      steps: [
        { name: "xsd", validator: "xml_schema", config: { schema_type: "xsd", schema: schema("collapse") } },
      ],
    },
  });
  expect(created.status).toBe(201);
  // What a build before the check stored: whiteSpace preserve on xs:token (libxml2 takes it).
  for (const [table, column] of [
    ["steps", "config"],
    ["step_configs", "config"],
    ["workflow_versions", "definition"],
  ])
    await s.sql(
      `UPDATE ${table} SET ${column} = replace(${column}, 'value=\\"collapse\\"', 'value=\\"preserve\\"')`,
    );
  expect(
    (await s.sql<{ n: number }>("SELECT count(*) AS n FROM step_configs WHERE config LIKE '%preserve%'"))[0]!
      .n,
  ).toBeGreaterThan(0);
  // Nothing of the saved version is cached: read from the database as after an upgrade.
  s = await restartTestServer(s);
  const ok = await runXml("<code>abc</code>");
  expect(ok.status).toBe(201);
  expect(ok.json.status).toBe("succeeded");
  const bad = await runXml("<code>abcd</code>");
  expect(bad.status).toBe(201);
  expect(bad.json.status).toBe("failed");
  // A save of the definition checks it as any save does: refused on the step, the rest unchanged.
  const renamed = await call(s, "PATCH", `${workflows}old/`, { token: author, body: { name: "renamed" } });
  expect(renamed.status).toBe(400);
  expect(renamed.json).toEqual(
    errorBody(400, "invalid_request", expect.any(String), [
      {
        field: "steps[0].config.schema",
        code: "invalid_schema",
        message:
          "is not a valid XSD: line 1: whiteSpace preserve on a restriction of xs:token, whose whiteSpace is collapse (a restriction may not loosen it: XML Schema 1.0 Part 2 §4.3.6.4)",
      },
    ]),
  );
  expect((await runXml("<code>abc</code>")).json.status).toBe("succeeded");
});
