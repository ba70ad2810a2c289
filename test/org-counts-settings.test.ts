// An org's most live workflows and stored schemas are operator settings (`max_workflows_per_org`,
// `max_schemas_per_org`, docs/limits.md): an installation that needs more raises them, one that
// wants fewer lowers them. The defaults are held by test/org-counts.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ max_workflows_per_org: 2, max_schemas_per_org: 1 });
});
afterAll(() => s.close());

const workflow = (slug: string) =>
  call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: { slug, name: slug, allowed_file_types: ["JSON"], steps: [] },
  });
const schema = (n: number) =>
  call(s, "POST", "/api/v1/orgs/acme/schemas/", {
    token: s.rootToken,
    body: { uri: `https://example.com/s${n}.json`, kind: "json_schema", schema: { type: "object" } },
  });

describe("the org counts as settings", () => {
  test("max_workflows_per_org 2: the third live workflow is a 409 naming 2; a deletion makes room", async () => {
    expect((await workflow("a")).status).toBe(201);
    expect((await workflow("b")).status).toBe(201);
    const third = await workflow("c");
    expect([third.status, third.json]).toEqual([
      409,
      errorBody(409, "conflict", "An organization can have at most 2 workflows; delete unused ones first."),
    ]);
    const gone = await call(s, "DELETE", "/api/v1/orgs/acme/workflows/a/", { token: s.rootToken });
    expect(gone.status).toBe(204);
    expect((await workflow("c")).status).toBe(201);
  });

  test("max_schemas_per_org 1: the second stored schema is a 409 naming 1", async () => {
    expect((await schema(1)).status).toBe(201);
    const second = await schema(2);
    expect([second.status, second.json]).toEqual([
      409,
      errorBody(
        409,
        "conflict",
        "An organization can have at most 1 stored schema; delete unused ones first.",
      ),
    ]);
  });

  test("read from the environment; out of range is refused at start naming the setting", () => {
    const c = loadConfig({ ASSAY_MAX_WORKFLOWS_PER_ORG: "5000", ASSAY_MAX_SCHEMAS_PER_ORG: "7" });
    expect([c.max_workflows_per_org, c.max_schemas_per_org]).toEqual([5000, 7]);
    expect([loadConfig({}).max_workflows_per_org, loadConfig({}).max_schemas_per_org]).toEqual([1000, 2000]);
    for (const [name, value] of [
      ["ASSAY_MAX_WORKFLOWS_PER_ORG", "0"],
      ["ASSAY_MAX_SCHEMAS_PER_ORG", "1000001"],
    ] as const) {
      let problems: string[] = [];
      try {
        loadConfig({ [name]: value });
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems = e.problems;
      }
      expect(problems.length).toBe(1);
      expect(problems[0]).toStartWith(`${name}: `);
    }
  });
});
