// A step config or a stored schema holding an unpaired surrogate (the escape "\ud800" without its
// pair, in a key or a value) is refused when saved, as names and run metadata are
// (docs/limits.md): it was stored, and every read of the workflow, its versions, its export and
// the audit log repeated it as an escape that strict JSON parsers refuse. Pairs are text.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const message = (what: string) =>
  `${what} may not contain unpaired surrogates (an escape such as \\ud800 without its pair).`;
const definition = (field: string) =>
  errorBody(400, "invalid_request", "The workflow definition is invalid.", [
    { field, code: "invalid", message: message("A step config") },
  ]);

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const send = (method: string, path: string, raw: string) =>
  call(s, method, path, { token: s.rootToken, raw, headers: { "content-type": "application/json" } });

async function refused(table: string, r: Promise<Awaited<ReturnType<typeof call>>>, expected: unknown) {
  const before = await s.count(table);
  const answer = await r;
  expect(answer.json).toEqual(expected);
  expect(answer.status).toBe(400);
  expect(await s.count(table)).toBe(before);
}

const workflow = (config: string) =>
  `{"slug":"w","name":"w","allowed_file_types":["JSON"],"steps":[{"name":"s","validator":"json_schema","config":${config}}]}`;

test("a workflow's step config, in a value or a key: 400 naming the step's config", async () => {
  for (const config of [
    '{"schema":{"description":"\\ud800"}}',
    '{"schema":{"properties":{"k\\udfff":{}}}}',
    '{"schema":{"enum":["x\\ud83d"]}}',
  ])
    await refused(
      "workflows",
      send("POST", "/api/v1/orgs/acme/workflows/", workflow(config)),
      definition("steps[0].config"),
    );
});

test("the same on PUT and on a step's own POST and PATCH; a pair is text", async () => {
  const ok = await send(
    "POST",
    "/api/v1/orgs/acme/workflows/",
    workflow('{"schema":{"description":"\\ud83d\\ude00 \\\\ud800"}}'),
  );
  expect(ok.status).toBe(201);
  expect(ok.json.steps[0].config.schema.description).toBe("😀 \\ud800");
  await refused(
    "workflow_versions",
    send("PUT", "/api/v1/orgs/acme/workflows/w/", workflow('{"schema":{"title":"\\ud800"}}')),
    definition("steps[0].config"),
  );
  const step =
    '{"name":"t","validator":"assertions","config":{"rules":[{"id":"r","expr":"true","message":"m\\ud800"}]}}';
  await refused(
    "workflow_versions",
    send("POST", "/api/v1/orgs/acme/workflows/w/steps/", step),
    definition("config"),
  );
  await refused(
    "workflow_versions",
    send(
      "PATCH",
      `/api/v1/orgs/acme/workflows/w/steps/${ok.json.steps[0].id}/`,
      '{"config":{"schema":{"title":"\\udc00"}}}',
    ),
    definition("config"),
  );
});

test("a stored schema, JSON or XSD: 400", async () => {
  const schema = errorBody(400, "invalid_request", "The schema is invalid.", [
    { field: "schema", code: "invalid", message: message("A schema") },
  ]);
  await refused(
    "org_schemas",
    send("POST", "/api/v1/orgs/acme/schemas/", '{"uri":"urn:a","schema":{"title":"\\ud800"}}'),
    schema,
  );
  await refused(
    "org_schemas",
    send(
      "POST",
      "/api/v1/orgs/acme/schemas/",
      '{"uri":"urn:b","kind":"xsd","schema":"<xs:schema xmlns:xs=\\"http://www.w3.org/2001/XMLSchema\\"><!-- \\ud800 --></xs:schema>"}',
    ),
    schema,
  );
});
