// The two saves the JSON Schema tests make again and again: a stored schema (POST …/schemas/) and
// a workflow of one json_schema step, each as an org's Author sends it.
import { type TestServer, call } from "./server.ts";

/** POST a stored JSON Schema under `uri`. */
export const storeJsonSchema = (s: TestServer, token: string, uri: string, schema: unknown, org = "acme") =>
  call(s, "POST", `/api/v1/orgs/${org}/schemas/`, { token, body: { uri, kind: "json_schema", schema } });

/** POST a workflow `slug` of JSON documents with one json_schema step of `config`. */
export const saveJsonSchemaWorkflow = (
  s: TestServer,
  token: string,
  slug: string,
  config: Record<string, unknown>,
  org = "acme",
) =>
  call(s, "POST", `/api/v1/orgs/${org}/workflows/`, {
    token,
    body: {
      slug,
      name: slug,
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator: "json_schema", config }],
    },
  });
