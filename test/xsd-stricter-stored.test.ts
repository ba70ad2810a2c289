// A workflow saved before a stricter XSD check (src/validators/xml-schema/facets.ts, 2026-11-29)
// keeps running as it did: the check is a save-time refusal (CONTRACT §2a), not a new run-time
// error for installations whose stored schema libxml2 always accepted. The stored config is
// written in the test's own database (as an older build saved it), since the API refuses it now.
// Saves that leave the step as saved (a rename, a deactivation) are taken; a changed or new step
// is checked whole (src/workflows/check.ts, `saved`).
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

test("a stored XSD the facet check now refuses still runs, and saves that leave its step as saved are taken", async () => {
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
  // A save that leaves the step as saved does not check it again: the workflow can be renamed
  // and deactivated (and its step renamed) while its schema is as an older build accepted it.
  const renamed = await call(s, "PATCH", `${workflows}old/`, { token: author, body: { name: "renamed" } });
  expect(renamed.status).toBe(200);
  expect(renamed.json.name).toBe("renamed");
  expect(renamed.json.steps[0].config.schema).toBe(schema("preserve"));
  const inactive = await call(s, "PATCH", `${workflows}old/`, {
    token: author,
    body: { status: "inactive" },
  });
  expect(inactive.status).toBe(200);
  expect(inactive.json.status).toBe("inactive");
  const active = await call(s, "PATCH", `${workflows}old/`, { token: author, body: { status: "active" } });
  expect(active.status).toBe(200);
  const stepId = active.json.steps[0].id;
  const stepRenamed = await call(s, "PATCH", `${workflows}old/steps/${stepId}/`, {
    token: author,
    body: { name: "xsd renamed" },
  });
  expect(stepRenamed.status).toBe(200);
  // The web editor saves with a PUT of what it read: the unchanged step is not checked again.
  const { slug, description, allowed_file_types, fail_fast, status, retention_days } = active.json;
  const put = await call(s, "PUT", `${workflows}old/`, {
    token: author,
    body: {
      slug,
      name: "put",
      description,
      allowed_file_types,
      fail_fast,
      status,
      retention_days,
      steps: [
        {
          name: "xsd renamed",
          validator: "xml_schema",
          config: { schema_type: "xsd", schema: schema("preserve") },
        },
      ],
    },
  });
  expect(put.status).toBe(200);
  expect(put.json.name).toBe("put");
  expect((await runXml("<code>abc</code>")).json.status).toBe("succeeded");
  expect((await runXml("<code>abcd</code>")).json.status).toBe("failed");
});

const refusal = (field: string) =>
  errorBody(400, "invalid_request", expect.any(String), [
    {
      field,
      code: "invalid_schema",
      message:
        "is not a valid XSD: line 1: whiteSpace preserve on a restriction of xs:token, whose whiteSpace is collapse (a restriction may not loosen it: XML Schema 1.0 Part 2 §4.3.6.4)",
    },
  ]);
const changed = schema("preserve").replace('value="3"', 'value="4"');

test("a changed step, or a new one, is checked whole: the stored step's schema given changed, or added again", async () => {
  const cur = await call(s, "GET", `${workflows}old/`, { token: author });
  const stepId = cur.json.steps[0].id;
  const version = cur.json.version;
  const byStepRoute = await call(s, "PATCH", `${workflows}old/steps/${stepId}/`, {
    token: author,
    body: { config: { schema_type: "xsd", schema: changed } },
  });
  expect(byStepRoute.status).toBe(400);
  expect(byStepRoute.json).toEqual(refusal("config.schema"));
  const byPatch = await call(s, "PATCH", `${workflows}old/`, {
    token: author,
    body: {
      steps: [
        { name: "xsd renamed", validator: "xml_schema", config: { schema_type: "xsd", schema: changed } },
      ],
    },
  });
  expect(byPatch.status).toBe(400);
  expect(byPatch.json).toEqual(refusal("steps[0].config.schema"));
  // The same config as the stored step's, as a new step (no id of its own): checked.
  const added = await call(s, "POST", `${workflows}old/steps/`, {
    token: author,
    body: {
      name: "again",
      validator: "xml_schema",
      config: { schema_type: "xsd", schema: schema("preserve") },
    },
  });
  expect(added.status).toBe(400);
  expect(added.json).toEqual(refusal("config.schema"));
  const twice = await call(s, "PATCH", `${workflows}old/`, {
    token: author,
    body: {
      steps: [
        {
          name: "xsd renamed",
          validator: "xml_schema",
          config: { schema_type: "xsd", schema: schema("preserve") },
        },
        {
          name: "xsd renamed",
          validator: "xml_schema",
          config: { schema_type: "xsd", schema: schema("preserve") },
        },
      ],
    },
  });
  expect(twice.status).toBe(400);
  expect(twice.json).toEqual(refusal("steps[1].config.schema"));
  expect((await call(s, "GET", `${workflows}old/`, { token: author })).json.version).toBe(version);
  // Fixed, the step saves.
  const fixed = await call(s, "PATCH", `${workflows}old/steps/${stepId}/`, {
    token: author,
    body: { config: { schema_type: "xsd", schema: schema("collapse") } },
  });
  expect(fixed.status).toBe(200);
});
